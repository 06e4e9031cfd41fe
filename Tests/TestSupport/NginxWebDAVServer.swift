public import Foundation

/// nginx as an HTTP ingest point on a loopback port: `PUT`, `DELETE` and `MKCOL` below
/// `/ingest/` (`dav_methods`), files under ``root``, served back by `GET`; without
/// `create_full_put_path`, so a `PUT` into a directory not yet made is 409 and the client must
/// `MKCOL` it (RFC 4918 9.7.1). With a user and password, every request needs them (HTTP Basic,
/// an htpasswd file in nginx's `{PLAIN}` scheme).
///
/// nginx runs in the foreground in one process, its access log (``accessLog``) one line per
/// request: `METHOD URI STATUS`; what it sent is counted too (``bytesSent``).
public final class NginxWebDAVServer {
    /// Where its configuration and logs are (removed when the server is released).
    public let directory: URL
    /// Where the objects put land (`/ingest/name` is `root/name`).
    public let root: URL
    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let process: RunningProcess

    /// Starts nginx on a free port; with `user` and `password`, requiring them.
    public init(user: String? = nil, password: String? = nil) throws {
        port = try LocalPort.freeTCP()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-webdav-\(UUID().uuidString)")
        root = directory.appendingPathComponent("www/ingest")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let path = directory.path
        var authentication = ""
        if let user, let password {
            try "\(user):{PLAIN}\(password)\n".write(toFile: "\(path)/htpasswd", atomically: true, encoding: .utf8)
            authentication = "auth_basic \"ingest\";\n                auth_basic_user_file \(path)/htpasswd;"
        }
        let configuration = """
            daemon off;
            master_process off;
            error_log \(path)/error.log info;
            pid \(path)/nginx.pid;
            events {}
            http {
                log_format ingest '$request_method $uri $status';
                log_format bytes '$body_bytes_sent';
                access_log \(path)/access.log ingest;
                access_log \(path)/bytes.log bytes;
                client_body_temp_path \(path)/body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                client_max_body_size 0;
                types { application/vnd.apple.mpegurl m3u8; video/iso.segment m4s; video/mp4 mp4; text/html html; }
                server {
                    listen 127.0.0.1:\(port);
                    root \(path)/www;
                    location /ingest/ {
                        dav_methods PUT DELETE MKCOL;
                        dav_access user:rw group:r all:r;
                        \(authentication)
                    }
                }
            }
            """
        let file = directory.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let nginx = FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx"
        process = try RunningProcess(nginx, ["-p", path, "-c", file.path, "-e", "\(path)/error.log"])
        let port = self.port
        try RunningProcess.waitUntil("nginx to listen on 127.0.0.1:\(port)", timeout: .seconds(10)) { LocalPort.accepts(port) }
    }

    deinit { stop() }

    /// `http://[user:password@]127.0.0.1:PORT/ingest/path`.
    public func url(_ path: String, user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { "\($0):\(password ?? "")@" } ?? ""
        return "http://\(credentials)127.0.0.1:\(port)/ingest/\(path)"
    }

    /// The requests it logged, one `METHOD URI STATUS` each.
    public var accessLog: [String] {
        ((try? String(contentsOfFile: directory.path + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The bytes of response bodies it has sent, all requests together.
    public var bytesSent: Int {
        ((try? String(contentsOfFile: directory.path + "/bytes.log", encoding: .utf8)) ?? "").split(separator: "\n").reduce(0) { $0 + (Int($1) ?? 0) }
    }

    /// Stops nginx and removes its directory.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
