public import Foundation

/// An object store on loopback that misbehaves on purpose, for the failures no real server
/// shows on demand: Python's `http.server` (HTTP/1.1, kept-alive connections), objects held in
/// memory, each request logged as `METHOD PATH STATUS [ACCESS-KEY]`.
///
/// - ``Behaviour/firstPutFails``: the first `PUT` of each path is answered 500, the next
///   stored (201); `HEAD` and `GET` answer 200 or 404 as a WebDAV server would.
/// - ``Behaviour/alwaysFails``: every `PUT` is answered 500.
/// - ``Behaviour/expiringKeys(credentialsFile:)``: S3 path-style. A request signed with the
///   access key `OLDKEY` is answered 403 `ExpiredToken`, and the first such answer renews the
///   shared credentials file (as a credential process would) with the key `NEWKEY`; requests
///   signed with any other key are served (404 `NoSuchKey` for a missing object, 200 with an
///   `ETag` for a `PUT`). Signatures are not checked.
/// - ``Behaviour/refusesSignatures``: S3's answer to a wrong secret, 403
///   `SignatureDoesNotMatch`, to every request.
/// - ``Behaviour/skewedClock``: S3 path-style, its clock an hour ahead of this machine's (its
///   `Date` headers too). A request whose `x-amz-date` is more than 15 minutes from that clock
///   is answered 403 `RequestTimeTooSkewed` with the `ServerTime`, as S3 answers; others are
///   served as ``Behaviour/expiringKeys(credentialsFile:)`` serves the new key.
/// - ``Behaviour/untrustedCertificate``: HTTPS with a self-signed certificate, which no client
///   trusts; each connection accepted is logged as `CONNECT`.
public final class MisbehavingObjectServer {
    /// How the server misbehaves.
    public enum Behaviour {
        /// The first `PUT` of each path 500, the next stored.
        case firstPutFails
        /// Every `PUT` 500.
        case alwaysFails
        /// S3, `ExpiredToken` for `OLDKEY`, the credentials file renewed with `NEWKEY`.
        case expiringKeys(credentialsFile: URL)
        /// S3, 403 `SignatureDoesNotMatch` to everything.
        case refusesSignatures
        /// S3, its clock an hour ahead: `RequestTimeTooSkewed` to requests signed by ours.
        case skewedClock
        /// HTTPS with a certificate nobody trusts.
        case untrustedCertificate
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let directory: URL
    private let process: RunningProcess

    /// Starts the server on a free loopback port, behaving as `behaviour` says.
    public init(_ behaviour: Behaviour) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-objects-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let portFile = directory.appendingPathComponent("port")
        let mode: String
        var credentials = ""
        switch behaviour {
        case .firstPutFails: mode = "first-put-fails"
        case .refusesSignatures: mode = "refuses-signatures"
        case .alwaysFails: mode = "always-fails"
        case .skewedClock: mode = "skewed-clock"
        case .untrustedCertificate:
            mode = "untrusted-certificate"
            credentials = directory.path
            try Subprocess.succeed("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
                                                   "-keyout", directory.path + "/key.pem", "-out", directory.path + "/cert.pem"])
        case .expiringKeys(let file):
            mode = "expiring-keys"
            credentials = file.path
        }
        process = try RunningProcess("python3", ["-c", Self.script, portFile.path, directory.appendingPathComponent("requests.log").path,
                                                 mode, credentials])
        try RunningProcess.waitUntil("the object server to listen", timeout: .seconds(20)) {
            FileManager.default.fileExists(atPath: portFile.path)
                && !((try? String(contentsOf: portFile, encoding: .utf8)) ?? "").isEmpty
        }
        port = Int(try String(contentsOf: portFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    deinit { stop() }

    /// `http://[user[:password]@]127.0.0.1:PORT/path`.
    public func url(_ path: String, user: String? = nil, password: String? = nil) -> String {
        let credentials = user.map { $0 + (password.map { ":" + $0 } ?? "") + "@" } ?? ""
        return "http://\(credentials)127.0.0.1:\(port)/\(path)"
    }

    /// `http://127.0.0.1:PORT`: an S3 endpoint.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// `https://127.0.0.1:PORT/path`: the untrusted server's URL.
    public func secureURL(_ path: String) -> String { "https://127.0.0.1:\(port)/\(path)" }

    /// The requests so far, a line each: `METHOD PATH STATUS [ACCESS-KEY]`.
    public var requests: [String] { log.filter { $0 != "CONNECT" } }

    /// The connections accepted so far.
    public var connections: Int { log.filter { $0 == "CONNECT" }.count }

    private var log: [String] {
        ((try? String(contentsOfFile: directory.path + "/requests.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Stops the server and removes its files.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    static let script = #"""
        import calendar, http.server, re, sys, threading, time
        port_file, log_file, mode, credentials = sys.argv[1:5]
        skew = 3600 if mode == "skewed-clock" else 0
        s3 = mode in ("expiring-keys", "skewed-clock")
        objects, failed, lock = {}, set(), threading.Lock()
        renewed = [False]
        log = open(log_file, "a", buffering=1)

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def date_time_string(self, timestamp=None):
                return super().date_time_string(time.time() + skew)

            def answer(self, status, body=b"", headers=()):
                key = re.search(r"Credential=([^/]+)/", self.headers.get("Authorization", ""))
                log.write(f"{self.command} {self.path.split('?')[0]} {status}{' ' + key.group(1) if key else ''}\n")
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def s3_error(self, status, code, message):
                self.answer(status, f"<Error><Code>{code}</Code><Message>{message}</Message></Error>".encode(),
                            [("Content-Type", "application/xml")])

            def expired(self):
                if mode == "skewed-clock":
                    signed = calendar.timegm(time.strptime(self.headers.get("x-amz-date", "19700101T000000Z"), "%Y%m%dT%H%M%SZ"))
                    if abs(signed - (time.time() + skew)) > 900:
                        server_time = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + skew))
                        self.answer(403, ("<Error><Code>RequestTimeTooSkewed</Code><Message>The difference between the request time "
                                          "and the current time is too large.</Message><ServerTime>" + server_time
                                          + "</ServerTime><MaxAllowedSkewMilliseconds>900000</MaxAllowedSkewMilliseconds></Error>").encode(),
                                    [("Content-Type", "application/xml")])
                        return True
                    return False
                if mode == "refuses-signatures":
                    self.s3_error(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.")
                    return True
                if mode != "expiring-keys" or "Credential=OLDKEY/" not in self.headers.get("Authorization", ""):
                    return False
                with lock:
                    if not renewed[0]:
                        with open(credentials, "w") as file:
                            file.write("[default]\naws_access_key_id = NEWKEY\naws_secret_access_key = new-secret-value\n")
                        renewed[0] = True
                self.s3_error(403, "ExpiredToken", "The provided token has expired.")
                return True

            def body(self):
                return self.rfile.read(int(self.headers.get("Content-Length", "0")))

            def do_PUT(self):
                data = self.body()
                if self.expired():
                    return
                path = self.path.split("?")[0]
                with lock:
                    fails = mode == "always-fails" or (mode == "first-put-fails" and path not in failed)
                    failed.add(path)
                    if not fails:
                        objects[path] = data
                if fails:
                    self.answer(500, b"overloaded")
                elif s3:
                    self.answer(200, b"", [("ETag", '"0"')])
                else:
                    self.answer(201)

            def do_GET(self):
                if self.expired():
                    return
                with lock:
                    data = objects.get(self.path.split("?")[0])
                if data is None:
                    if s3:
                        self.s3_error(404, "NoSuchKey", "The specified key does not exist.")
                    else:
                        self.answer(404)
                else:
                    self.answer(200, data)

            do_HEAD = do_GET

            def do_DELETE(self):
                if self.expired():
                    return
                with lock:
                    objects.pop(self.path.split("?")[0], None)
                self.answer(204)

        class Server(http.server.ThreadingHTTPServer):
            def get_request(self):
                log.write("CONNECT\n")
                return super().get_request()

        server = Server(("127.0.0.1", 0), Handler)
        if mode == "untrusted-certificate":
            import ssl
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(credentials + "/cert.pem", credentials + "/key.pem")
            server.socket = context.wrap_socket(server.socket, server_side=True)
        with open(port_file + ".tmp", "w") as file:
            file.write(str(server.server_address[1]))
        import os
        os.rename(port_file + ".tmp", port_file)
        server.serve_forever()
        """#
}
