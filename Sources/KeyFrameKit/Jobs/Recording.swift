public import AudioIO
public import SystemPackage

/// A recording from an ALSA device to a PCM, WAV, ADTS or M4A file, an HLS rendition or live
/// destinations: a thin wrapper over ``LiveEncoding/init(recording:)``, which
/// composes the graph (``RecordingOptions`` says how).
///
/// Lifecycle: ``start()``; then ``wait(timeout:)`` until the duration is reached, the device
/// fails, or someone calls ``requestStop()`` (a signal handler may); then ``finish()``.
///
/// `Sendable` because ``LiveEncoding`` is.
@available(*, deprecated, message: "use LiveEncoding(recording:) and RecordingSummary")
public final class Recording: Sendable {
    /// What to record: ``RecordingOptions``.
    public typealias Options = RecordingOptions
    /// What was recorded: ``RecordingSummary``.
    public typealias Summary = RecordingSummary
    /// Why a recording stopped: ``LiveCaptureJob/StopReason``.
    public typealias StopReason = LiveCaptureJob.StopReason

    /// The containers a recording writes: ``RecordingOptions/containers``.
    public static var containers: [MediaFileFormat] { RecordingOptions.containers }

    /// The file container `path`'s name says: ``RecordingOptions/container(of:)``.
    public static func container(of path: FilePath) -> MediaFileFormat? { RecordingOptions.container(of: path) }

    /// The options recorded with.
    public let options: RecordingOptions
    /// Each live destination's figures, live, in the order of ``RecordingOptions/destinations``.
    public var destinationStatistics: [DestinationStatistics] { live.destinations }
    /// The graph.
    private let live: LiveEncoding
    /// The lifecycle: start once, stop, finish.
    public var job: LiveCaptureJob { live.job }

    /// A recording that has not started: ``LiveEncoding/init(recording:)``.
    public init(options: RecordingOptions) throws(PipelineError) {
        self.options = options
        live = try LiveEncoding(recording: options)
    }

    /// Opens the device, then creates the outputs, then starts capturing: ``LiveEncoding/start()``.
    public func start() throws(PipelineError) { try live.start() }

    /// Asks the recording to stop: ``LiveEncoding/requestStop()``.
    public func requestStop() { live.requestStop() }

    /// Waits up to `timeout` for the recording to end; returns whether it has.
    public func wait(timeout: Duration) -> Bool { live.job.wait(timeout: timeout) }

    /// Why the recording ended, once it has.
    public var stopReason: StopReason? { live.job.stopReason }

    /// Frames captured so far.
    public var recordedFrames: Int64 { live.progress.frames }

    /// The capture's counters so far.
    public var statistics: AudioCapture.Statistics { live.statistics }

    /// The levels since the last call (for a meter), then starts measuring afresh.
    public func takeLevels() -> AudioLevels { live.progress.takeLevels() }

    /// What the device granted, once started.
    public var parameters: PCMDevice.Parameters? { live.parameters }

    /// Stops capturing, writes what was queued, and finalizes the outputs: ``LiveEncoding/finish()``.
    public func finish() throws(PipelineError) -> RecordingSummary {
        RecordingSummary(options, of: live, summary: try live.finish())
    }

    /// The whole recording for `async` callers: ``LiveEncoding/run()``.
    public func run() async throws(PipelineError) -> RecordingSummary {
        RecordingSummary(options, of: live, summary: try await live.run())
    }
}
