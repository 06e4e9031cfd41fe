public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private PulseAudio daemon with one null sink, for capture tests with real-time pacing on a
/// machine without a sound card (DESIGN.md, "Capture without a sound card").
///
/// Each server lives in its own scratch directory: its own socket (`<dir>/runtime/native`,
/// anonymous access), runtime, state and home directories, no default.pa (`-n`), no pid file and no
/// autospawn, so it never meets the user's daemon or another test's. Clients reach it through
/// `environment` (`PULSE_SERVER=unix:<socket>`): ALSA's `pulse` PCM (libasound2-plugins), paplay,
/// pactl and `keyframe` started with it. The sink's monitor is the server's default source, so ALSA
/// device `pulse` captures whatever is played into the sink.
///
/// Call `stop()` at the end (SIGTERM, then SIGKILL); the deinit stops it too. Should the test
/// process die first, the orphaned daemon exits by itself two minutes after its last client.
///
/// The daemon is spawned with `posix_spawn`, not Foundation's `Process`: pulseaudio closes every
/// inherited descriptor at start-up, including the socket `Process` watches to learn that a child
/// has exited, and Foundation's one monitor thread then blocks in `waitpid` on the still-running
/// daemon, so no other `Process` in the test run is ever seen to exit. It stays our child (no
/// `-D`: a daemonized pulseaudio would be left to an init that does not reap it).
public final class PulseAudioServer {
    /// The scratch directory (removed by `stop()`).
    public let directory: URL
    /// The null sink's name; its monitor source is `<sinkName>.monitor`.
    public let sinkName: String
    /// The sink's rate and channel count.
    public let sampleRate: Int
    public let channels: Int
    /// The native-protocol socket.
    public let socketPath: String
    /// The environment for clients: the test's, plus `PULSE_SERVER` and a private home.
    public let environment: [String: String]
    private let daemon: SpawnedProcess
    private var stopped = false

    /// Starts the daemon and waits (at most `timeout`) until `pactl info` answers with the sink and
    /// its monitor as the defaults.
    public init(sinkName: String = "kf_sink", sampleRate: Int = 48000, channels: Int = 2,
                timeout: Duration = .seconds(30)) throws {
        self.sinkName = sinkName
        self.sampleRate = sampleRate
        self.channels = channels
        // Short: a unix socket path has at most 107 bytes.
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("kf-pulse-\(UUID().uuidString.prefix(13))")
        let runtime = directory.appendingPathComponent("runtime")
        let state = directory.appendingPathComponent("state")
        let home = directory.appendingPathComponent("home")
        let config = home.appendingPathComponent(".config")
        for url in [runtime, state, config.appendingPathComponent("pulse")] {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        // A client that cannot reach this server must fail, never spawn a daemon of its own.
        try Data("autospawn = no\n".utf8).write(to: config.appendingPathComponent("pulse/client.conf"))
        socketPath = runtime.appendingPathComponent("native").path

        var base = ProcessInfo.processInfo.environment
        for key in ["PULSE_SERVER", "PULSE_SINK", "PULSE_SOURCE", "PULSE_COOKIE", "PULSE_CLIENTCONFIG", "PULSE_LATENCY_MSEC", "ALSA_CONFIG_PATH"] {
            base[key] = nil
        }
        base["HOME"] = home.path
        base["XDG_CONFIG_HOME"] = config.path
        base["XDG_RUNTIME_DIR"] = runtime.path
        base["PULSE_RUNTIME_PATH"] = runtime.path
        base["PULSE_STATE_PATH"] = state.path
        var client = base
        client["PULSE_SERVER"] = "unix:\(socketPath)"
        environment = client

        daemon = try SpawnedProcess("pulseaudio", [
            "-n", "--daemonize=no", "--system=no", "--exit-idle-time=120", "--use-pid-file=no", "--disallow-exit=no",
            "--realtime=no", "--high-priority=no", "--log-target=stderr", "--log-level=warning",
            "--load=module-native-protocol-unix auth-anonymous=1 socket=\(socketPath)",
            "--load=module-null-sink sink_name=\(sinkName) rate=\(sampleRate) channels=\(channels)",
        ], environment: base, log: directory.appendingPathComponent("pulseaudio.log").path)

        do {
            var lastInfo = ""
            try RunningProcess.waitUntil("PulseAudio at \(socketPath) to answer `pactl info`", timeout: timeout) {
                guard daemon.isRunning else {
                    throw Subprocess.Failure(description: "pulseaudio exited at start-up: \(daemon.log)")
                }
                guard FileManager.default.fileExists(atPath: socketPath) else { return false }
                let info = try Subprocess.run("pactl", ["info"], environment: client, timeout: .seconds(10))
                lastInfo = info.standardOutput + info.standardError
                return info.status == 0
            }
            guard lastInfo.contains("Default Sink: \(sinkName)\n"), lastInfo.contains("Default Source: \(sinkName).monitor\n") else {
                throw Subprocess.Failure(description: "PulseAudio's defaults are not the null sink and its monitor: \(lastInfo)")
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// The daemon's log so far (warnings and errors).
    public var log: String { daemon.log }

    /// Runs a client of this server and waits.
    public func run(_ name: String, _ arguments: [String], timeout: Duration = .seconds(120)) throws -> Subprocess.Result {
        try Subprocess.run(name, arguments, environment: environment, timeout: timeout)
    }

    /// Starts a client of this server in the background.
    public func start(_ name: String, _ arguments: [String]) throws -> RunningProcess {
        try RunningProcess(name, arguments, environment: environment)
    }

    /// How many streams of a kind (`"sink-inputs"`: playback into the server, `"source-outputs"`:
    /// recordings from it) are connected now.
    public func streamCount(_ kind: String) throws -> Int {
        let list = try run("pactl", ["list", "short", kind], timeout: .seconds(10))
        guard list.status == 0 else {
            throw Subprocess.Failure(description: "pactl list short \(kind) exited \(list.status): \(list.standardError)")
        }
        return list.standardOutput.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.count
    }

    /// Waits (at most `timeout`) until at least `count` streams of `kind` are connected.
    public func waitForStreams(_ kind: String, count: Int = 1, timeout: Duration = .seconds(30),
                               while process: RunningProcess? = nil) throws {
        try RunningProcess.waitUntil("\(count) PulseAudio \(kind)", timeout: timeout) {
            if let process, !process.isRunning {
                throw Subprocess.Failure(description: "`\(process.commandLine)` exited before PulseAudio saw its stream: \(process.standardErrorSoFar)")
            }
            return try streamCount(kind) >= count
        }
    }

    /// The sink's current latency as `pactl list sinks` reports it: how far ahead of real time it
    /// has rendered (its monitor receives audio in blocks that long).
    public func sinkLatency() throws -> Duration? {
        let list = try run("pactl", ["list", "sinks"], timeout: .seconds(10))
        guard list.status == 0 else {
            throw Subprocess.Failure(description: "pactl list sinks exited \(list.status): \(list.standardError)")
        }
        for line in list.standardOutput.split(separator: "\n") {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
            if words.count >= 3, words[0] == "Latency:", words[2].hasPrefix("usec"), let usec = Int(words[1]) { return .microseconds(usec) }
        }
        return nil
    }

    /// Waits until the sink renders close to real time (its latency below `limit` twice in a row).
    ///
    /// A null sink that had no input renders the first input's audio in a block of up to 2 s; a
    /// recording from its monitor that starts meanwhile gets nothing until that block is over
    /// (arecord too: its first data came 1.4–2 s late). A low-latency player (`paplay
    /// --latency-msec=50`) brings the sink down to a few milliseconds within about 1.5 s.
    public func waitForLowSinkLatency(below limit: Duration = .milliseconds(50), timeout: Duration = .seconds(20)) throws {
        var lowReadings = 0
        var last: Duration?
        do {
            try RunningProcess.waitUntil("the null sink's latency to drop below \(limit)", timeout: timeout) {
                last = try sinkLatency()
                lowReadings = last.map { $0 < limit } == true ? lowReadings + 1 : 0
                if lowReadings < 2 { Subprocess.sleep(.milliseconds(80)) }
                return lowReadings >= 2
            }
        } catch {
            throw Subprocess.Failure(description: "\(error); last latency \(last.map { "\($0)" } ?? "unknown")")
        }
    }

    /// Stops the daemon and removes its directory.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        daemon.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A child process started with `posix_spawn` (every descriptor but 0–2 closed, signals at their
/// defaults, output to a log file) and reaped with `waitpid` by this object alone.
final class SpawnedProcess {
    let pid: pid_t
    let logPath: String
    private var exited = false

    init(_ name: String, _ arguments: [String], environment: [String: String], log: String) throws {
        logPath = log
        let executable = try Subprocess.path(of: name)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // glibc ≥ 2.34 (Debian 12 has 2.36); not imported into Swift, so looked up.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            throw Subprocess.Failure(description: "this libc has no posix_spawn_file_actions_addclosefrom_np")
        }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child = pid_t()
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw Subprocess.Failure(description: "posix_spawn \(executable) failed: \(String(cString: strerror(status)))")
        }
        pid = child
    }

    deinit { stop() }

    /// Whether it is still running (reaps it once it has exited).
    var isRunning: Bool {
        guard !exited else { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid || (result == -1 && errno == ECHILD) { exited = true }
        return !exited
    }

    /// Its log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGTERM, then SIGKILL if it is still running `grace` later; reaps it.
    func stop(grace: Duration = .seconds(5)) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + grace
        while isRunning && ContinuousClock.now < deadline { usleep(5_000) }
        if isRunning {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            exited = true
        }
    }
}
