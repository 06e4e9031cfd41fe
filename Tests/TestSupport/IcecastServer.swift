public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A free TCP port on loopback, for a server a test starts.
public enum LocalPort {
    /// A port bound to 0 on 127.0.0.1, read back, released.
    public static func freeTCP() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Subprocess.Failure(description: "socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw Subprocess.Failure(description: "bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func accepts(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// An icecast2 server on a loopback port, run as `nobody` (icecast2 refuses to run as root),
/// with a configuration the test writes: one source password, admin credentials, logs in a
/// temporary directory. Stopped by ``stop()`` or when released.
public final class IcecastServer {
    /// The port it listens on.
    public let port: Int
    /// The source password.
    public let password: String
    /// The admin user and password.
    public let admin = (user: "admin", password: "admin-secret")
    /// Where its configuration and logs are.
    public let directory: URL
    /// The certificate's PEM file, for a server made with `tls`.
    public var certificate: URL { directory.appendingPathComponent("certificate.pem") }
    private var process: RunningProcess?

    /// Starts icecast2 on a free port (or `port`) and waits until it accepts connections.
    /// Each of `dumpedMounts` (e.g. `/live.aac`) has a dump file: every byte its source sends,
    /// from the first (``dump(of:)``).
    /// With `tls`, it listens for TLS only (icecast2's `<ssl>`), with a self-signed certificate
    /// for `localhost` and 127.0.0.1 made by openssl: ``certificate`` is its PEM file.
    public init(port: Int? = nil, password: String = "source-secret", dumpedMounts: [String] = [], tls: Bool = false) throws {
        self.port = try port ?? LocalPort.freeTCP()
        self.password = password
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-icecast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // nobody writes its logs here.
        chmod(directory.path, 0o777)
        var listen = "<listen-socket><port>\(self.port)</port><bind-address>127.0.0.1</bind-address></listen-socket>"
        var certificatePaths = ""
        if tls {
            let key = directory.appendingPathComponent("key.pem").path
            let result = try Subprocess.run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate.path,
                                                        "-days", "2", "-subj", "/CN=localhost", "-addext",
                                                        "subjectAltName=DNS:localhost,IP:127.0.0.1"])
            guard result.status == 0 else { throw Subprocess.Failure(description: "openssl: \(result.standardError)") }
            let both = directory.appendingPathComponent("both.pem")
            try (Data(contentsOf: certificate) + Data(contentsOf: URL(fileURLWithPath: key))).write(to: both)
            chmod(both.path, 0o644)
            listen = "<listen-socket><port>\(self.port)</port><bind-address>127.0.0.1</bind-address><ssl>1</ssl></listen-socket>"
            certificatePaths = "<ssl-certificate>\(both.path)</ssl-certificate>"
        }
        let configuration = """
            <icecast>
              <location>loopback</location><admin>test@localhost</admin>
              <limits><clients>20</clients><sources>8</sources><queue-size>524288</queue-size>
                <client-timeout>30</client-timeout><header-timeout>5</header-timeout><source-timeout>5</source-timeout>
                <burst-on-connect>1</burst-on-connect><burst-size>65535</burst-size></limits>
              <authentication><source-password>\(password)</source-password><relay-password>\(password)</relay-password>
                <admin-user>\(admin.user)</admin-user><admin-password>\(admin.password)</admin-password></authentication>
              <hostname>127.0.0.1</hostname>
              \(listen)
              <fileserve>1</fileserve>
              <paths>\(certificatePaths)<basedir>/usr/share/icecast2</basedir><logdir>\(directory.path)</logdir>
                <webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot></paths>
              <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel><logsize>10000</logsize></logging>
              <security><chroot>0</chroot></security>
            \(dumpedMounts.map { "<mount><mount-name>\($0)</mount-name><dump-file>\(Self.dumpPath(of: $0, in: directory))</dump-file></mount>" }.joined())
            </icecast>
            """
        let file = directory.appendingPathComponent("icecast.xml")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        chmod(file.path, 0o644)
        try start()
    }

    /// Starts (again) the server on the same port.
    public func start() throws {
        let file = directory.appendingPathComponent("icecast.xml").path
        let icecast = try Subprocess.path(of: "icecast2")
        if getuid() == 0 {
            process = try RunningProcess("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", icecast, "-c", file])
        } else {
            process = try RunningProcess(icecast, ["-c", file])
        }
        let port = self.port
        let process = self.process
        try RunningProcess.waitUntil("icecast2 on port \(port)", timeout: .seconds(20)) {
            guard process?.isRunning == true else {
                throw Subprocess.Failure(description: "icecast2 exited: \(process?.standardErrorSoFar ?? "")")
            }
            return LocalPort.accepts(port)
        }
    }

    /// For a test that could not reach the server: whether it still runs, what it printed, and
    /// the end of its error log.
    public var diagnosis: String {
        "icecast2 on port \(port) is \(process?.isRunning == true ? "running" : "not running"); "
            + "its standard error: \(process?.standardErrorSoFar ?? ""); error.log ends: \(errorLog.suffix(1200))"
    }

    /// Kills the server at once (SIGKILL): a crash, for reconnect tests.
    public func kill() {
        if let process { _ = process.send(SIGKILL); _ = try? process.wait(timeout: .seconds(10)) }
        process = nil
        // A new start writes new dumps: what the killed server wrote is gone with it.
        for file in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where file.hasPrefix("dump-") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(file))
        }
    }

    /// Waits until no source is connected to `mount` (its dump file then is complete).
    public func waitUntilSourceLeaves(_ mount: String, timeout: Duration = .seconds(15)) throws {
        try RunningProcess.waitUntil("the source of \(mount) to leave", timeout: timeout) {
            !status().contains("\"listenurl\":\"http://127.0.0.1:\(port)\(mount)\"")
        }
    }

    /// Stops the server.
    public func stop() {
        process?.stop()
        process = nil
    }

    /// What the source of `mount` sent (its dump file), as icecast2 wrote it.
    public func dump(of mount: String) -> Data {
        (try? Data(contentsOf: URL(fileURLWithPath: Self.dumpPath(of: mount, in: directory)))) ?? Data()
    }

    private static func dumpPath(of mount: String, in directory: URL) -> String {
        directory.appendingPathComponent("dump-" + mount.replacingOccurrences(of: "/", with: "_")).path
    }

    /// The server's error log so far.
    public var errorLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    /// `/status-json.xsl`, as text.
    public func status() -> String {
        guard let url = URL(string: "http://127.0.0.1:\(port)/status-json.xsl"),
              let data = try? Data(contentsOf: url) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    deinit {
        process?.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
