public import MediaCore
internal import AACBitstream
internal import AudioBitstreams
internal import Dispatch
internal import Synchronization

/// A live destination as a sink of packets (AAC for KeyFrameKit's protocols; what a registered
/// protocol carries for its own): a tee's expendable branch that never holds up
/// the capture, the local file or the other destinations.
///
/// ``write(_:)`` queues the frame and returns at once. A thread of the destination's own
/// connects (on the first frame, whose format gives the AudioSpecificConfig), announces the
/// stream and sends what is queued. The queue is bounded (``init(_:queueDuration:policy:trustRoots:title:statistics:)``):
/// when the server is slow or away, the oldest frames are dropped, whole, and counted, so what
/// is sent after a reconnect is the newest audio.
///
/// A passing failure (refused, reset, a server restarting, a name not resolving for now)
/// reconnects with capped exponential backoff (``ReconnectPolicy``) and announces the stream
/// again (the RTMP sequence header, Icecast's request headers, SRT's PAT and PMT). Timestamps
/// count the samples of every frame written, sent or not, so they continue from the sample
/// clock across reconnects and drops. A permanent refusal stops the destination with its
/// reason: the next ``write(_:)`` throws it, which a tee records for an expendable branch.
///
/// ``finish()`` sends what is queued and ends the stream in the protocol's way (RTMP
/// `deleteStream`, the end of Icecast's request, SRT's flush), waiting a bounded time;
/// ``cancel()`` drops the connection at once.
public struct LiveDestination: PacketSink {
    /// The destination's figures, updated while it runs.
    public let statistics: DestinationStatistics
    private let destination: PublishingDestination
    private let queueDuration: Duration
    private let policy: ReconnectPolicy
    private let trustRoots: String?
    private var worker: DestinationWorker?
    private var nextTimestamp: Int64 = 0
    private var stream: PublishedStream?
    private var title: String?
    private var announcedBitrate: Int?
    private var framesPerPacket = 1024
    private let fixedTitle: Bool
    private let timedMetadata: Bool
    /// The encoder's priming: a presentation time is this many samples into the sample clock.
    private var priming: Int64 = 0
    /// Timed metadata told before its time, in the order of their times: sent once the sample
    /// clock reaches it.
    private var pendingMetadata: [TimedMetadata] = []

    /// A sink publishing to `destination`, queueing at most `queueDuration` of audio.
    ///
    /// - Parameters:
    ///   - destination: where to publish.
    ///   - queueDuration: the most audio queued while the server is slow or away.
    ///   - policy: reconnects and timeouts.
    ///   - trustRoots: a PEM file of certificate authorities for `rtmps://` and `icecasts://`
    ///     (the system's when `nil`).
    ///   - title: the stream's title; when given, titles in the stream's metadata are ignored.
    ///   - statistics: where the figures go (a new one when `nil`), for a caller that shows them.
    ///   - timedMetadata: the stream carries timed metadata (``/MediaCore/StreamEvent/timedMetadata(_:)``
    ///     ID3 tags): SRT lists a timed ID3 stream in its PMT and sends each tag at its time.
    ///     Titles in ID3 tags update the title either way (Icecast, RTMP).
    public init(_ destination: PublishingDestination, queueDuration: Duration = .seconds(5), policy: ReconnectPolicy = .init(),
                trustRoots: String? = nil, title: String? = nil, statistics: DestinationStatistics? = nil, timedMetadata: Bool = false) {
        self.destination = destination
        self.timedMetadata = timedMetadata
        self.title = title
        fixedTitle = title != nil
        self.queueDuration = queueDuration
        self.policy = policy
        self.trustRoots = trustRoots
        self.statistics = statistics ?? DestinationStatistics(destination: destination.maskedURL, scheme: destination.scheme.name)
    }

    /// Queues one packet; on the first, starts the destination's thread.
    ///
    /// - Throws: `PipelineError.network` once the destination has stopped for a permanent
    ///   refusal; `.unsupported` for a packet of a codec the destination's protocol does not carry.
    public mutating func write(_ sample: MediaSample) throws(PipelineError) {
        if worker == nil { try start(sample) }
        guard let worker else { return }
        if let failure = worker.permanentFailure { throw PipelineError(failure) }
        // The sample clock: the packet's duration at the output rate when its timescale is the
        // rate (an encoder, ADTS), else the codec's frame length (an MP4 of another timescale:
        // no rounding that drifts).
        let rate = stream?.sampleRate ?? 48_000
        let frames: Int64
        if sample.duration.timescale == Int32(clamping: rate) {
            frames = sample.duration.value
        } else if stream?.format.framesPerPacket ?? 0 > 0 {
            frames = Int64(framesPerPacket)
        } else {
            // A codec whose packets vary in length: the packet's own duration at the rate.
            frames = sample.duration.value * Int64(rate) / Int64(max(sample.duration.timescale, 1))
        }
        worker.queue.push(.frame(QueuedFrame(data: sample.data, timestamp: nextTimestamp)))
        nextTimestamp += max(frames, 1)
        releaseMetadata(worker: worker)
    }

    /// Sends the timed metadata whose time the sample clock has reached: its tag (SRT), and
    /// the title it says as a title update (unless the title is fixed).
    private mutating func releaseMetadata(worker: DestinationWorker) {
        let rate = Double(stream?.sampleRate ?? 48_000)
        while let first = pendingMetadata.first {
            let sample = Int64((first.time.seconds * rate).rounded()) + priming
            guard sample <= nextTimestamp else { return }
            pendingMetadata.removeFirst()
            if timedMetadata { worker.queue.push(.timedMetadata(first.payload, max(0, sample))) }
            if !fixedTitle, let playing = NowPlaying(id3: first.payload), !playing.streamTitle.isEmpty, playing.streamTitle != title {
                title = playing.streamTitle
                worker.queue.push(.title(playing.streamTitle))
            }
        }
    }

    /// Takes a title from the stream's metadata (its `title` tag) and sends it as a title update
    /// while live (unless a title was given at creation).
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        if case .gapless(let info) = event { priming = info.priming }
        if case .timedMetadata(let timed) = event, timed.kind == .id3 {
            let index = pendingMetadata.lastIndex { $0.time <= timed.time }.map { $0 + 1 } ?? 0
            pendingMetadata.insert(timed, at: index)
            return
        }
        guard !fixedTitle, case .metadata(let metadata) = event, let title = metadata["title"], title != self.title else { return }
        self.title = title
        if let worker { worker.queue.push(.title(title)) }
    }

    /// Sends what is queued and ends the stream; waits for it a bounded time.
    public mutating func finish() throws(PipelineError) {
        guard let worker else {
            statistics.disconnected(.finished, error: nil)
            return
        }
        worker.queue.push(.end)
        // Bounded: what is queued and the protocol's goodbye get one send timeout and a little
        // more; a server that takes nothing then is dropped.
        let bound = policy.sendTimeout + .seconds(3)
        if !worker.waitUntilDone(timeout: bound) {
            worker.abort()
            _ = worker.waitUntilDone(timeout: .seconds(2))
        }
    }

    /// Drops the connection at once.
    public mutating func cancel() {
        guard let worker else { return }
        worker.abort()
        _ = worker.waitUntilDone(timeout: .seconds(2))
    }

    private mutating func start(_ sample: MediaSample) throws(PipelineError) {
        guard case .audio(let format) = sample.format else {
            throw .unsupported("\(destination.maskedURL): only audio can be published (the stream is \(sample.format))")
        }
        guard destination.codecs.isEmpty || destination.codecs.contains(format.codec) else {
            let carried = destination.codecs.map(\.name).sorted().joined(separator: ", ")
            throw .unsupported("\(destination.maskedURL): \(destination.scheme) carries \(carried), not \(format.codec)")
        }
        let bitrate = destination.bitrate ?? announcedBitrate ?? 0
        var stream: PublishedStream
        do { stream = try PublishedStream(format: format, bitrate: bitrate, title: title) } catch {
            throw .unsupported("\(destination.maskedURL): \(error.message)")
        }
        stream.carriesTimedMetadata = timedMetadata
        self.stream = stream
        statistics.update { $0.bitrate = bitrate }
        // A codec whose packets vary in length (0) sizes the queue as AAC's would be.
        framesPerPacket = format.framesPerPacket > 0 ? format.framesPerPacket : 1024
        let framesPerSecond = Double(format.sampleRate) / Double(framesPerPacket)
        let seconds = queueDuration.inSeconds
        let worker = DestinationWorker(destination: destination, stream: stream, policy: policy, trustRoots: trustRoots,
                                       statistics: statistics, capacity: max(4, Int((framesPerSecond * seconds).rounded(.up))))
        self.worker = worker
        worker.start()
    }

    /// Sets the bitrate announced (`onMetaData`'s `audiodatarate`, `ice-bitrate`) when the
    /// destination's URL did not say one: the encoder's.
    public mutating func announce(bitrate: Int) {
        guard worker == nil else { return }
        announcedBitrate = bitrate
        statistics.update { $0.bitrate = bitrate }
    }
}

/// The destination's thread: connects, sends, reconnects; owns the session.
final class DestinationWorker: Sendable {
    enum Item: Sendable {
        case frame(QueuedFrame)
        case title(String)
        case timedMetadata([UInt8], Int64)
        case end
    }

    let queue: FrameQueue
    private let destination: PublishingDestination
    private let stream: PublishedStream
    private let policy: ReconnectPolicy
    private let trustRoots: String?
    private let statistics: DestinationStatistics
    private let session = Mutex<(any PublishingSession)?>(nil)
    private let failure = Mutex<PublishingError?>(nil)
    private let aborted = Mutex(false)
    private let stopSignal = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(destination: PublishingDestination, stream: PublishedStream, policy: ReconnectPolicy, trustRoots: String?,
         statistics: DestinationStatistics, capacity: Int) {
        self.destination = destination
        self.stream = stream
        self.policy = policy
        self.trustRoots = trustRoots
        self.statistics = statistics
        queue = FrameQueue(capacity: capacity, statistics: statistics)
    }

    /// The permanent refusal that stopped the destination, if any.
    var permanentFailure: PublishingError? { failure.withLock { $0 } }

    func start() {
        DispatchQueue(label: "KeyFrameKit.LiveDestination \(destination.maskedURL)").async { self.run() }
    }

    /// Drops the connection and ends the thread.
    func abort() {
        aborted.withLock { $0 = true }
        queue.close()
        stopSignal.signal()
        session.withLock { $0 }?.abort()
    }

    func waitUntilDone(timeout: Duration) -> Bool {
        guard done.wait(for: timeout) == .success else { return false }
        done.signal()
        return true
    }

    private var isAborted: Bool { aborted.withLock { $0 } }

    private func run() {
        defer { done.signal() }
        var current: (any PublishingSession)?
        var attempt = 0
        var everConnected = false
        // When a connection of ours was last lost: for a while after, the server may still hold
        // that session and call the name in use.
        var lostAt: ContinuousClock.Instant?
        var title = stream.title
        while !isAborted {
            if current == nil {
                // Finishing after a connection failed or was lost: what is queued cannot be
                // delivered now. (The first connection is still tried: a short input published
                // faster than real time ends before the thread has connected.)
                if queue.isEnding, attempt > 0 {
                    queue.dropAll()
                    statistics.disconnected(.abandoned, error: nil)
                    return
                }
                let made = destination.makeSession(counting: statistics, trustRoots: trustRoots)
                session.withLock { $0 = made }
                var announced = stream
                announced.title = title
                if announced.bitrate == 0 { announced.bitrate = statistics.snapshot.bitrate }
                // A try after any failure (the first connection's included) is a reconnect
                // attempt, and its success a reconnect.
                let retrying = attempt > 0
                statistics.attempting(again: retrying)
                do {
                    try made.open(announced, deadline: .now + policy.connectTimeout)
                    current = made
                    statistics.connected(again: retrying || everConnected)
                    everConnected = true
                    attempt = 0
                } catch {
                    made.abort()
                    let ownOldSession = error.reason == .nameInUse && lostAt.map { ContinuousClock.now - $0 < policy.nameInUseGrace } == true
                    if error.isPermanent, !ownOldSession {
                        stop(error)
                        return
                    }
                    statistics.disconnected(.reconnecting, error: error)
                    attempt += 1
                    // Frames keep coming while we wait; the queue drops the oldest.
                    if waitForStop(policy.delay(beforeAttempt: attempt)) { break }
                    continue
                }
            }
            guard let session = current else { continue }
            switch queue.pop() {
            case .frame(let first):
                // The frames due with it go in the same write (a capture period brings several).
                let frames = [first] + queue.takeFrames(max: 31)
                do {
                    try session.send(frames: frames, deadline: .now + policy.sendTimeout)
                    statistics.update { $0.framesSent += Int64(frames.count) }
                } catch {
                    session.abort()
                    current = nil
                    lostAt = .now
                    statistics.update { $0.framesDropped += Int64(frames.count) }
                    if error.isPermanent {
                        stop(error)
                        return
                    }
                    statistics.disconnected(.reconnecting, error: error)
                    attempt = 1
                    if waitForStop(policy.delay(beforeAttempt: attempt)) { break }
                }
            case .title(let new):
                title = new
                do { try session.update(title: new, deadline: .now + policy.sendTimeout) } catch {
                    statistics.update { $0.lastError = error.message }
                }
            case .timedMetadata(let tag, let timestamp):
                do { try session.send(timedMetadata: tag, timestamp: timestamp, deadline: .now + policy.sendTimeout) } catch {
                    statistics.update { $0.lastError = error.message }
                }
            case .end:
                do { try session.finish(deadline: .now + policy.sendTimeout) } catch {
                    statistics.update { $0.lastError = error.message }
                }
                statistics.disconnected(.finished, error: nil)
                return
            case nil:
                // Aborted.
                break
            }
        }
        current?.abort()
        queue.dropAll()
        statistics.disconnected(current == nil ? .abandoned : .finished, error: nil)
    }

    /// Stops for good after a permanent refusal.
    private func stop(_ error: PublishingError) {
        failure.withLock { $0 = error }
        queue.close()
        queue.dropAll()
        statistics.disconnected(.stopped, error: error)
    }

    /// Waits `delay`, or less when the destination is finished or aborted meanwhile; returns
    /// whether it was aborted.
    private func waitForStop(_ delay: Duration) -> Bool {
        let deadline = ContinuousClock.now + delay
        while ContinuousClock.now < deadline {
            if isAborted { return true }
            if queue.isEnding { return false }
            let remaining = min(deadline - .now, .milliseconds(100))
            stopSignal.wait(for: remaining)
        }
        return isAborted
    }
}

/// The destination's bounded queue: frames past its capacity push the oldest out (counted as
/// dropped); an end or a title is never dropped.
final class FrameQueue: Sendable {
    private struct State {
        var items: [DestinationWorker.Item] = []
        var head = 0
        var frames = 0
        var ending = false
        var closed = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let capacity: Int
    private let statistics: DestinationStatistics

    init(capacity: Int, statistics: DestinationStatistics) {
        self.capacity = capacity
        self.statistics = statistics
    }

    var isEnding: Bool { state.withLock { $0.ending } }

    func push(_ item: DestinationWorker.Item) {
        let dropped = state.withLock { state -> Int in
            guard !state.closed, !state.ending else {
                if case .frame = item { return 1 }
                return 0
            }
            var dropped = 0
            if case .frame = item {
                while state.frames >= capacity, let index = state.items[state.head...].firstIndex(where: {
                    if case .frame = $0 { true } else { false }
                }) {
                    state.items.remove(at: index)
                    state.frames -= 1
                    dropped += 1
                }
                state.frames += 1
            }
            if case .end = item { state.ending = true }
            state.items.append(item)
            return dropped
        }
        if dropped > 0 { statistics.update { $0.framesDropped += Int64(dropped) } }
        available.signal()
    }

    /// The next item, waiting for one; `nil` once closed.
    func pop() -> DestinationWorker.Item? {
        while true {
            let item = state.withLock { state -> DestinationWorker.Item?? in
                if state.closed { return .some(nil) }
                guard state.head < state.items.count else { return nil }
                let item = state.items[state.head]
                state.head += 1
                if case .frame = item { state.frames -= 1 }
                if state.head > 64, state.head * 2 > state.items.count {
                    state.items.removeFirst(state.head)
                    state.head = 0
                }
                return .some(item)
            }
            if let item { return item }
            available.wait()
        }
    }

    /// Up to `max` frames at the head of the queue, without waiting (none when the head is not a
    /// frame).
    func takeFrames(max: Int) -> [QueuedFrame] {
        state.withLock { state in
            var frames: [QueuedFrame] = []
            while frames.count < max, state.head < state.items.count, case .frame(let frame) = state.items[state.head] {
                frames.append(frame)
                state.head += 1
                state.frames -= 1
            }
            return frames
        }
    }

    /// Closes the queue: ``pop()`` returns `nil` from now on.
    func close() {
        state.withLock { $0.closed = true }
        available.signal()
    }

    /// Drops every queued frame, counting them.
    func dropAll() {
        let dropped = state.withLock { state -> Int in
            defer {
                state.items = []
                state.head = 0
                state.frames = 0
            }
            return state.frames
        }
        if dropped > 0 { statistics.update { $0.framesDropped += Int64(dropped) } }
    }
}
