public import AudioIO
internal import Dispatch
internal import Synchronization

/// The one lifecycle of a live job: a capture feeding a pipeline pumped on a thread of its
/// own (capture → encoder → a sink, or a ``/MediaCore/Tee`` of sinks). ``LiveEncoding`` (any
/// encoder, any sinks; a recording's files, HLS and destinations from ``RecordingOptions``) is
/// this job, and the deprecated ``AACRecorder`` and ``Recording`` wrap it; each names `start`,
/// `stop` and `finish` through it.
///
/// `start(_:)` once; then the job runs until the capture ends (its frame limit, a device
/// failure), the pump fails, or ``requestStop()``; ``wait(timeout:)`` polls for that,
/// ``ended()`` awaits it without holding a thread of Swift's cooperative pool;
/// ``finish()`` stops capture, lets the pump drain the queue and finish its sinks, and gives
/// what the pump did (``finishAsync()`` awaits it). ``LiveEncoding/run()`` is all of it for
/// `async` callers (an app on Vapor or Hummingbird), with task cancellation as a stop request.
///
/// `Sendable` because it is synchronized: its state is behind a mutex.
public final class LiveCaptureJob: Sendable {
    /// Why a live job stopped.
    public enum StopReason: String, Sendable, Hashable {
        /// The frame limit (`--duration`) was reached.
        case duration
        /// ``LiveCaptureJob/requestStop()`` was called (SIGINT, SIGTERM, a caller, a cancelled task).
        case requested
        /// The device failed; the capture's ``/AudioIO/AudioCapture/failure`` says how.
        case device
        /// Encoding or writing failed; ``LiveCaptureJob/finish()`` throws why.
        case error
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    private struct State: ~Copyable {
        var started = false
        var pump: PumpThread?
        var stopReason: StopReason?
        var waiters: [CheckedContinuation<Void, Never>] = []
        var capture: AudioCapture?
    }

    /// A job with no capture yet: make the capture with ``captureEnded(_:)`` as its `onEnd`,
    /// then ``attach(_:)`` it.
    public init() {}

    /// The capture the job reads (stopped by ``finish()``).
    public func attach(_ capture: AudioCapture) { state.withLock { $0.capture = capture } }

    /// The capture the job reads, once attached.
    public var capture: AudioCapture? { state.withLock { $0.capture } }

    /// What a capture's end means for the job: pass it to the capture's `onEnd`.
    public func captureEnded(_ ending: AudioCapture.Ending) {
        let reason: StopReason = switch ending {
        case .frameLimitReached: .duration
        case .failed: .device
        case .stopped: .requested
        }
        end(reason)
    }

    /// Records why the job ends (the first reason wins) and wakes whoever waits.
    package func end(_ reason: StopReason) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.stopReason == nil { state.stopReason = reason }
            defer { state.waiters = [] }
            return state.waiters
        }
        wake.signal()
        for waiter in waiters { waiter.resume() }
    }

    /// Starts the job once: `launch` starts the capture and returns the pump it feeds.
    ///
    /// - Throws: `launch`'s error; ``/MediaCore/PipelineError/Code/unsupported`` when started
    ///   before.
    package func start(_ launch: () throws(PipelineError) -> PumpThread) throws(PipelineError) {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { throw .unsupported("this job was already started") }
        let pump: PumpThread
        do { pump = try launch() } catch {
            // Never started: whoever waits for the end gets it.
            end(.error)
            throw error
        }
        state.withLock { $0.pump = pump }
    }

    /// A pump-failure handler that ends the job (for a pump thread).
    package var failureHandler: @Sendable (PipelineError) -> Void {
        { [weak self] _ in self?.end(.error) }
    }

    /// Asks the job to stop; ``wait(timeout:)`` returns `true` from then on. Safe from any
    /// thread, and cheap (it does not stop the device: ``finish()`` does).
    public func requestStop() { end(.requested) }

    /// Why the job ended, once it has.
    public var stopReason: StopReason? { state.withLock { $0.stopReason } }

    /// Waits up to `timeout` for the job to end; returns whether it has.
    public func wait(timeout: Duration) -> Bool {
        if stopReason != nil { return true }
        wake.wait(for: timeout)
        return stopReason != nil
    }

    /// Returns once the job has ended (its reason is set), suspending, not blocking.
    public func ended() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.stopReason == nil else { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Stops capturing, waits for the pump to write what was queued and finish its sinks, and
    /// returns what it did. Call once, after `start(_:)`.
    ///
    /// - Throws: the pump's error.
    public func finish() throws(PipelineError) -> JobReport {
        requestStop()
        capture?.stop()
        guard let pump = state.withLock({ $0.pump }) else { throw .unsupported("this job was not started") }
        return try pump.join().get()
    }

    /// The whole job for `async` callers: `start` (opening a device can take a second, so on a
    /// thread of its own), then the end awaited (a cancelled task asks for a stop), then
    /// ``finishAsync()``.
    ///
    /// - Throws: ``/MediaCore/PipelineError/Code/cancelled`` when the task was cancelled before
    ///   it started; `start`'s and ``finish()``'s errors.
    public func run(start: @escaping @Sendable () throws(PipelineError) -> Void) async throws(PipelineError) -> JobReport {
        guard !Task.isCancelled else { throw .cancelled }
        try await ThreadBridge.run(start)
        await withTaskCancellationHandler {
            await ended()
        } onCancel: {
            requestStop()
        }
        return try await finishAsync()
    }

    /// ``finish()`` on a thread of its own, awaited: the pump's join never blocks a thread of
    /// Swift's cooperative pool.
    public func finishAsync() async throws(PipelineError) -> JobReport {
        try await ThreadBridge.run { () throws(PipelineError) -> JobReport in try self.finish() }
    }
}
