internal import CALSA
#if canImport(Glibc)
internal import Glibc
#endif

/// A joinable POSIX thread running `body`: capture must not share a thread (or a cooperative
/// pool) with anything that can block it.
struct JoinableThread {
    private let thread: pthread_t

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread; traps if the system cannot create one.
    init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let code = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        precondition(code == 0, "pthread_create failed: \(code)")
        self.thread = thread
    }

    /// Waits for the thread to end; call once.
    func join() {
        pthread_join(thread, nil)
    }

    /// Runs `body` on a thread nobody waits for (its resources go when it ends).
    static func detached(_ body: @escaping @Sendable () -> Void) {
        pthread_detach(JoinableThread(body).thread)
    }
}
