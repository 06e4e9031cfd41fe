internal import Dispatch
internal import Synchronization

/// A sink run on a thread of its own behind a bounded queue: a heavy ``Tee`` branch (an
/// encoder and its muxer) that works in parallel with the source and the other branches.
///
/// ``write(_:)`` and ``receive(_:)`` queue and return at once, unless the queue is full: then
/// they wait for room (backpressure), so a slow branch holds at most `queueCapacity` elements.
/// An error on the branch's thread cancels its sink there and is thrown by the next call;
/// ``finish()`` waits for the thread to drain the queue and finish the sink, and throws its
/// error. Every threaded sink must be finished or cancelled (a pump does one or the other), or
/// its thread waits for ever.
public struct ThreadedSink<Element: Sendable>: MediaSink {
    private let channel: Channel

    /// `base`, run on a thread named after `name`, behind a queue of `queueCapacity` elements.
    /// `whenFinished` sees the sink on its thread once it has finished (not when it failed or
    /// was cancelled): the way to read a summary out of it.
    public init<Base: MediaSink>(_ base: consuming sending Base, name: String = "", queueCapacity: Int = 16,
                                 whenFinished: sending ((Base) -> Void)? = nil) where Base.Element == Element {
        let channel = Channel(capacity: max(1, queueCapacity))
        self.channel = channel
        var sink = base
        // A closure of no generic type crosses to the thread: the sink is in it, and nobody
        // else holds the sink (``Transfer``).
        let run = Transfer<() -> Void> {
            if channel.drain(into: &sink) { whenFinished?(sink) }
            channel.end()
        }
        DispatchQueue(label: "KeyFrameKit.ThreadedSink \(name)").async { run.take()() }
    }

    /// Queues `element` (waiting for room when the queue is full).
    ///
    /// - Throws: the branch's error, once its sink has failed.
    public mutating func write(_ element: Element) throws(PipelineError) {
        if let failure = channel.failure { throw failure }
        channel.push(.element(element))
    }

    /// Queues `event`.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        if let failure = channel.failure { throw failure }
        channel.push(.event(event))
    }

    /// Waits for the queue to drain and the sink to finish; throws the branch's error.
    public mutating func finish() throws(PipelineError) {
        channel.push(.finish)
        channel.waitUntilDone()
        if let failure = channel.failure { throw failure }
    }

    /// Cancels the sink on its thread and waits for it: the elements still queued are dropped
    /// unwritten, so the wait is at most the one element the thread is writing.
    public mutating func cancel() {
        channel.dropQueued()
        channel.push(.cancel)
        channel.waitUntilDone()
    }

    /// The queue between the caller and the branch's thread: a bounded buffer (two counting
    /// semaphores around a mutex), the branch's first error, and its end.
    private final class Channel: Sendable {
        enum Message: Sendable {
            case element(Element)
            case event(StreamEvent)
            case finish
            case cancel
        }

        private let messages = Mutex<[Message]>([])
        private let room: DispatchSemaphore
        private let waiting = DispatchSemaphore(value: 0)
        private let done = DispatchSemaphore(value: 0)
        private let failed = Mutex<PipelineError?>(nil)
        private let ended = Mutex(false)
        private let dropping = Atomic(false)
        private let reported = Mutex<[JobReport.Stage]>([])

        init(capacity: Int) { room = DispatchSemaphore(value: capacity) }

        var failure: PipelineError? { failed.withLock { $0 } }

        /// The sink's stages, set by the branch's thread when it ends.
        var stages: [JobReport.Stage] { reported.withLock { $0 } }

        func push(_ message: Message) {
            guard !ended.withLock({ $0 }) else { return }
            room.wait()
            messages.withLock { $0.append(message) }
            waiting.signal()
        }

        /// From now on the branch's thread skips queued elements and events until the cancel.
        func dropQueued() { dropping.store(true, ordering: .releasing) }

        private func pop() -> Message {
            waiting.wait()
            let message = messages.withLock { $0.removeFirst() }
            room.signal()
            return message
        }

        func waitUntilDone() {
            done.wait()
            done.signal()
        }

        /// The branch thread's loop: applies each message to `sink` until finish or cancel;
        /// returns whether the sink finished. The caller then calls ``end()``.
        func drain<Base: MediaSink>(into sink: inout Base) -> Bool where Base.Element == Element {
            var broken = false
            var written: Int64 = 0
            var busy = Duration.zero
            defer {
                var stages: [JobReport.Stage] = []
                JobReport.appendStages(of: sink, role: .sink, elements: written, busy: busy, to: &stages)
                reported.withLock { $0 = stages }
            }
            while true {
                let message = pop()
                if dropping.load(ordering: .acquiring) {
                    switch message {
                    case .element, .event: continue
                    case .finish, .cancel: break
                    }
                }
                let asked = ContinuousClock.now
                defer { busy += ContinuousClock.now - asked }
                do {
                    switch message {
                    case .element(let element):
                        if !broken {
                            try sink.write(element)
                            written += 1
                        }
                    case .event(let event): if !broken { try sink.receive(event) }
                    case .finish:
                        guard !broken else { return false }
                        try sink.finish()
                        return true
                    case .cancel:
                        if !broken { sink.cancel() }
                        return false
                    }
                } catch {
                    if !broken { sink.cancel() }
                    broken = true
                    failed.withLock { if $0 == nil { $0 = PipelineError(error) } }
                    if case .finish = message { return false }
                }
            }
        }

        /// Marks the branch ended and wakes ``waitUntilDone()``.
        func end() {
            ended.withLock { $0 = true }
            done.signal()
        }
    }
}

extension ThreadedSink: StageReporting {
    /// The sink's stages as its thread measured them (elements written, time in its calls),
    /// once it has finished or been cancelled; none before.
    package func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        stages += channel.stages
    }
}

extension ThreadedSink: PacketSink where Element == MediaSample {}
extension ThreadedSink: PCMSink where Element == PCMBuffer {}
