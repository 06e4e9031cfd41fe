import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`: an empty signal mask and every signal at its
/// default action, standard input from `/dev/null`, standard output and error appended to a log
/// file, every other descriptor closed; reaped with `waitpid` by this object alone.
///
/// `RunningProcess` (Foundation's `Process`) passes on the test runner's blocked signals, and a
/// server that never unblocks them ignores them: nginx in single-process mode
/// (`master_process off`) would hold SIGQUIT and SIGTERM until SIGKILL. Started this way, nginx
/// quits gracefully on SIGQUIT. (It is not Foundation's child either, so Foundation's monitor
/// thread never waits on it.)
///
/// The deinit kills it (SIGKILL) if it is still running.
///
/// Named `PosixSpawnedProcess` while `PulseAudioServer.swift` keeps a private copy of its own
/// under the name `SpawnedProcess` in this module; this one has that one's calls too.
public final class PosixSpawnedProcess {
    /// The child's process id.
    public let processIdentifier: Int32
    /// Where its standard output and error go.
    public let logPath: String
    /// The command line, for messages.
    public let commandLine: String
    private var status: Int32?

    /// Starts `name` (a path, or a name looked up on PATH) with `arguments` and `environment`
    /// (the whole environment; `nil` inherits the test's); its output is appended to `log`.
    public init(_ name: String, _ arguments: [String], environment: [String: String]? = nil, log: String) throws {
        let executable = try Subprocess.path(of: name)
        logPath = log
        commandLine = ([executable] + arguments).joined(separator: " ")

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // glibc ≥ 2.34 (Debian 12 has 2.36); not imported into Swift, so looked up. Without it the
        // child would keep the test runner's descriptors (its sockets, other children's pipes).
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in argv + (envp ?? []) { free(pointer) } }
        var child = pid_t()
        let result: Int32
        if let envp {
            result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        } else {
            result = posix_spawn(&child, executable, &actions, &attributes, argv, environ)
        }
        guard result == 0 else {
            throw Subprocess.Failure(description: "posix_spawn \(executable) failed: \(String(cString: strerror(result)))")
        }
        processIdentifier = child
    }

    deinit { kill() }

    /// Whether it has not exited yet (reaps it when it has).
    public var isRunning: Bool {
        guard status == nil else { return false }
        var raw: Int32 = 0
        let result = waitpid(processIdentifier, &raw, WNOHANG)
        if result == processIdentifier {
            status = raw
        } else if result == -1 && errno == ECHILD {
            status = -1
        }
        return status == nil
    }

    /// The raw wait status once it has exited (`-1` when it was reaped elsewhere), else `nil`.
    public var exitStatus: Int32? {
        _ = isRunning
        return status
    }

    /// Its output so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Sends `signal` if it is still running.
    public func send(_ signal: Int32) {
        if isRunning { Glibc.kill(processIdentifier, signal) }
    }

    /// The raw wait status once it exited within `timeout` (polled every 5 ms), otherwise `nil`.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { return nil }
            usleep(5_000)
        }
        return status
    }

    /// Kills it at once (SIGKILL) and reaps it.
    public func kill() {
        guard isRunning else { return }
        Glibc.kill(processIdentifier, SIGKILL)
        var raw: Int32 = 0
        while waitpid(processIdentifier, &raw, 0) == -1 && errno == EINTR {}
        status = raw
    }

    /// SIGTERM, then SIGKILL if it is still running `grace` later; reaps it.
    public func stop(grace: Duration = .seconds(5)) {
        guard isRunning else { return }
        send(SIGTERM)
        if waitForExit(timeout: grace) == nil { kill() }
    }
}
