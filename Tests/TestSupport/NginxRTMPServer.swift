public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// nginx with the RTMP module (libnginx-mod-rtmp) on a loopback port: one application (`live`
/// by default) that relays what is published to players (`live on`) and records it
/// (`record all`) under ``directory``.
///
/// - Recordings: `record_unique on` names each one `KEY-<unix time>.flv`, and each ``start()``
///   records into a directory of its own (`recordings/1`, `recordings/2`, …), so a second
///   publish (after a restart too, within the same second too) never overwrites the first.
///   ``recordings(of:)`` lists them in order.
/// - Metadata: `meta copy` hands players the publisher's `onMetaData` as it was sent (its
///   `title`, and a title update's), where nginx would otherwise build its own from a few fields.
/// - Reconnect tests: ``kill()`` (SIGKILL: a crash, the publisher's connection is reset) and
///   ``start()`` again on the same port.
/// - ``stop()`` quits gracefully (SIGQUIT): recordings are closed, the error log is complete.
///
/// nginx runs in the foreground in one process (`daemon off`, `master_process off`), spawned
/// with an empty signal mask (``PosixSpawnedProcess``) so that it obeys SIGQUIT. Its error log
/// (``errorLog``) is at `info`: connects, publishes, plays and refusals, one line each.
public final class NginxRTMPServer {
    /// Where its configuration, logs and recordings are (removed when the server is released).
    public let directory: URL
    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// The application's name (the first path component of an `rtmp://` URL).
    public let application: String
    private var process: PosixSpawnedProcess?
    private var starts = 0

    /// Writes the configuration for a free port (or `port`) and starts nginx (``start()``).
    public init(port: Int? = nil, application: String = "live") throws {
        self.port = try port ?? LocalPort.freeTCP()
        self.application = application
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-rtmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try start()
    }

    deinit {
        process?.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The `rtmp://` URL of stream `key` on this server.
    public func url(key: String) -> String { "rtmp://127.0.0.1:\(port)/\(application)/\(key)" }

    /// Starts nginx (again, after ``kill()`` or ``stop()``) on the same port, recording into a
    /// new directory; returns once it accepts connections (at most 10 s).
    public func start() throws {
        guard process?.isRunning != true else { return }
        starts += 1
        let recordings = directory.appendingPathComponent("recordings/\(starts)")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)
        let path = directory.path
        let configuration = """
            load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
            daemon off;
            master_process off;
            error_log \(path)/error.log info;
            pid \(path)/nginx.pid;
            events {}
            rtmp {
                server {
                    listen 127.0.0.1:\(port);
                    application \(application) {
                        live on;
                        meta copy;
                        record all;
                        record_path \(recordings.path);
                        record_unique on;
                        record_suffix .flv;
                    }
                }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let nginx = FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx"
        let started = try PosixSpawnedProcess(nginx, ["-p", path, "-c", file.path, "-e", "\(path)/error.log"],
                                              log: "\(path)/output.log")
        process = started
        let port = self.port
        do {
            try RunningProcess.waitUntil("nginx to listen on 127.0.0.1:\(port)", timeout: .seconds(10)) {
                guard started.isRunning else {
                    throw Subprocess.Failure(description: "nginx exited: \(started.log)\n\(errorLog)")
                }
                return LocalPort.accepts(port)
            }
        } catch {
            started.kill()
            process = nil
            throw error
        }
    }

    /// Kills nginx at once (SIGKILL): a crash, for reconnect tests. Its recordings stay as they
    /// were at that moment.
    public func kill() {
        process?.kill()
        process = nil
    }

    /// Stops nginx gracefully (SIGQUIT; SIGKILL if it is still running 10 s later): recordings
    /// are closed. Returns its error log and whether it quit by itself with status 0.
    @discardableResult
    public func stop() -> (log: String, quitCleanly: Bool) {
        guard let process else { return (errorLog, false) }
        process.send(SIGQUIT)
        let status = process.waitForExit(timeout: .seconds(10))
        if status == nil { process.kill() }
        self.process = nil
        return (errorLog, status == 0)
    }

    /// Whether nginx is running.
    public var isRunning: Bool { process?.isRunning == true }

    /// The error log so far (every run's).
    public var errorLog: String {
        (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
    }

    /// The lines of the error log at `[error]`, `[crit]`, `[alert]` or `[emerg]`.
    public var errors: [String] {
        errorLog.split(whereSeparator: \.isNewline).map(String.init).filter {
            $0.contains("[error]") || $0.contains("[crit]") || $0.contains("[alert]") || $0.contains("[emerg]")
        }
    }

    /// The recordings of stream `key`, oldest first: by run, then by the time in their name.
    public func recordings(of key: String) -> [URL] {
        let root = directory.appendingPathComponent("recordings")
        let runs = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).compactMap(Int.init).sorted()
        return runs.flatMap { run -> [URL] in
            let folder = root.appendingPathComponent("\(run)")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.compactMap { name -> (Int, URL)? in
                guard name.hasPrefix("\(key)-"), name.hasSuffix(".flv"),
                      let time = Int(name.dropFirst(key.count + 1).dropLast(4)) else { return nil }
                return (time, folder.appendingPathComponent(name))
            }
            .sorted { $0.0 < $1.0 }
            .map(\.1)
        }
    }

    /// How many `publish` commands for `key` nginx has logged, refused ones too (every run's log).
    public func publishCount(of key: String) -> Int {
        errorLog.components(separatedBy: "publish: name='\(key)'").count - 1
    }

    /// Waits (at most `timeout`) until nginx has logged `count` `publish` commands for `key`.
    public func waitUntilPublished(_ key: String, count: Int = 1, timeout: Duration = .seconds(10)) throws {
        try RunningProcess.waitUntil("nginx to log publish number \(count) of \(key)", timeout: timeout) {
            publishCount(of: key) >= count
        }
    }
}
