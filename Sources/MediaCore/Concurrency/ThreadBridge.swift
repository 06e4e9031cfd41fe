internal import Dispatch

/// The one bridge between the pipeline's threads and Swift concurrency.
///
/// Pipelines are synchronous pulls on threads of their own (a pump, a capture, a branch, a
/// destination's connection): they block on reads, devices and sockets, which a thread of
/// Swift's cooperative pool (two of them on a 2-core machine) must never do. Everything that
/// crosses between the two goes through here or through `DispatchSemaphore.wait(for:)`, apart
/// from the edges' own continuations (a live capture's end, an MP4 read batch by batch, a
/// blocking playlist reload), which DESIGN.md lists:
///
/// - **blocking work awaited**: ``run(_:)`` runs a body on a thread of its own and resumes the
///   awaiting task with its result;
/// - **a blocking job awaited, cancellable**: ``run(control:_:)`` is the async face of every
///   job that takes a ``JobControl`` (encode, decode, convert, cut, join, tag, remux, package,
///   publish a file, play): the task's cancellation becomes the control's `cancel()`;
/// - **a wait with a deadline on a thread**: `DispatchSemaphore.wait(for:)`;
/// - **a deadline for a suspended task**: ``resume(after:_:)`` calls a body after a `Duration`,
///   off the pool, to resume a continuation that nothing else did.
///
/// ```swift
/// let control = JobControl()
/// let summary = try await ThreadBridge.run(control: control) { control in
///     try Transcode.encode("in.wav", to: "out.m4a", control: control)
/// }
/// ```
public enum ThreadBridge {
    /// `body`, which may block (on a device, a socket, a thread's join), run on a thread of its
    /// own and awaited: no thread of Swift's cooperative pool waits with it.
    ///
    /// - Throws: what `body` throws.
    public static func run<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        try await result(of: body).get()
    }

    /// What `body` returned or threw, run on a thread of its own.
    private static func result<Value: Sendable, Failure: Error>(
        of body: @escaping @Sendable () throws(Failure) -> Value
    ) async -> Result<Value, Failure> {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
            DispatchQueue(label: "KeyFrameKit.ThreadBridge").async {
                do throws(Failure) { continuation.resume(returning: .success(try body())) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
    }

    /// A blocking job run on a thread of its own and awaited, with `control` handed to it: the
    /// awaiting task's cancellation cancels the job (``JobControl/cancel()``: it stops at its
    /// next element and removes its output); a task already cancelled when it calls this does
    /// not start the job (one cancelled a moment later starts it with its control cancelled).
    ///
    /// - Throws: ``PipelineError/Code/cancelled`` for a task cancelled before the job started;
    ///   what `body` throws.
    public static func run<Value: Sendable>(
        control: JobControl = JobControl(), _ body: @escaping @Sendable (JobControl) throws(PipelineError) -> Value
    ) async throws(PipelineError) -> Value {
        guard !Task.isCancelled else { throw .cancelled }
        return try await withTaskCancellationHandler {
            await result { () throws(PipelineError) -> Value in try body(control) }
        } onCancel: {
            control.cancel()
        }.get()
    }

    /// Calls `body` once `duration` has passed (at once for zero or less), on a thread of the
    /// system's, never the cooperative pool: the deadline of a task suspended on a
    /// continuation (`body` resumes it if nothing did before).
    public static func resume(after duration: Duration, _ body: @escaping @Sendable () -> Void) {
        DispatchQueue.global().asyncAfter(deadline: .after(duration), execute: body)
    }
}
