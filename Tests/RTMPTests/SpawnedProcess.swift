import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with an empty signal mask and default signal actions.
///
/// `RunningProcess` (Foundation's `Process`) passes on the test runner's blocked signals, and
/// nginx in single-process mode (`master_process off`) never unblocks them: SIGQUIT and SIGTERM
/// would wait until SIGKILL. Started this way, nginx quits gracefully on SIGQUIT.
final class SpawnedProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let processIdentifier: pid_t
    private var exitStatus: Int32?

    /// Starts `path` with `arguments`; standard output and error go to `outputPath`.
    init(_ path: String, _ arguments: [String], outputPath: String) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard result == 0 else { throw Failure(description: "cannot start \(path): error \(result)") }
        processIdentifier = pid
    }

    deinit {
        if isRunning {
            kill(processIdentifier, SIGKILL)
            _ = waitForExit(timeout: .seconds(5))
        }
    }

    /// Whether it has not exited yet (reaps it when it has).
    var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier {
            exitStatus = status
            return false
        }
        return true
    }

    /// Sends `signal`.
    func send(_ signal: Int32) {
        if isRunning { kill(processIdentifier, signal) }
    }

    /// The raw wait status once it exited within `timeout`, otherwise `nil`.
    func waitForExit(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { return nil }
            usleep(10_000)
        }
        return exitStatus
    }
}
