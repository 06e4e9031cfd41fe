internal import Dispatch
public import MediaCore
public import MP4
internal import Synchronization

/// The samples of one track of an `MP4Demuxer`, as an `AsyncSequence` whose file reads
/// never run on Swift's cooperative thread pool.
///
/// `MP4Demuxer` reads with blocking `pread(2)` calls, so iterating it directly from a task would
/// park a thread of the cooperative pool for each read. This sequence takes the demuxer over
/// (`sending`: the caller no longer holds it) and reads on a serial dispatch queue of its own;
/// `next()` suspends on a checked continuation until that queue has read a small batch of at most
/// ``readAhead`` samples. Memory holds that batch, never more.
///
/// ```swift
/// let demuxer = MP4Demuxer(source: try FileByteSource(path: "in.m4a"))
/// for try await sample in MP4SampleSequence(demuxer, trackID: 1) { print(sample.presentationTime) }
/// ```
///
/// The demuxer is started (`MP4Demuxer.start()`) on the queue at the first pull if the
/// caller has not started it. The sequence ends with the track; an error (an `MP4Error`: a
/// damaged table, a sample outside the file, an I/O error) is thrown after the samples before it
/// and ends the iteration. When the iterating task is cancelled, `next()` returns `nil`, and a
/// batch being read stops after the sample in hand.
///
/// The sequence is `Sendable` because everything it shares is synchronized: the demuxer is only
/// touched on the serial queue. Each iterator pulls from the same demuxer, so two iterators split
/// the track's samples between them.
public struct MP4SampleSequence<Source: RandomAccessByteSource>: AsyncSequence, Sendable {
    /// Each element is one sample of the track, in decode order.
    public typealias Element = MediaSample
    /// Iteration fails only with `MP4Error`.
    public typealias Failure = MP4Error

    /// The most samples read ahead of the consumer: one batch, read in one hop to the queue.
    public static var readAhead: Int { 4 }

    /// The track read.
    public let trackID: UInt32
    private let reader: MP4SampleQueue

    /// The samples of track `trackID` of `demuxer`, which the sequence takes over.
    public init(_ demuxer: sending MP4Demuxer<Source>, trackID: UInt32) {
        self.trackID = trackID
        self.reader = MP4SampleQueue(demuxer: demuxer)
    }

    /// Pulls a track's samples a batch at a time, off the cooperative pool.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let reader: MP4SampleQueue
        private let trackID: UInt32
        private var batch: [MediaSample] = []
        private var position = 0
        private var ending: MP4Error?
        private var isFinished = false

        fileprivate init(reader: MP4SampleQueue, trackID: UInt32) {
            self.reader = reader
            self.trackID = trackID
        }

        /// The next sample, or `nil` at the end of the track or when the task is cancelled.
        public mutating func next() async throws(MP4Error) -> MediaSample? {
            try await next(isolation: nil)
        }

        /// The next sample, or `nil` at the end of the track or when the task is cancelled;
        /// the caller stays on `actor` while the queue reads.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MP4Error) -> MediaSample? {
            if position < batch.count {
                defer { position += 1 }
                return batch[position]
            }
            if let error = ending {
                ending = nil
                isFinished = true
                throw error
            }
            guard !isFinished else { return nil }
            if Task.isCancelled {
                isFinished = true
                return nil
            }
            let pulled = await reader.pull(trackID: trackID, count: MP4SampleSequence.readAhead, isolation: actor)
            guard !Task.isCancelled else {
                isFinished = true
                return nil
            }
            batch = pulled.samples
            position = 0
            ending = pulled.error
            if pulled.samples.isEmpty && pulled.error == nil { isFinished = true }
            return try await next(isolation: actor)
        }
    }

    /// An iterator over the track's remaining samples.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: reader, trackID: trackID)
    }
}

/// A demuxer and the serial queue that alone touches it: the blocking reads of an
/// ``MP4SampleSequence`` happen here, on a dispatch worker thread, never on the cooperative pool.
final class MP4SampleQueue: Sendable {
    /// What one hop to the queue brought back: samples, then the error that ended them, if any.
    struct Batch: Sendable {
        var samples: [MediaSample] = []
        var error: MP4Error?
    }

    private let queue = DispatchQueue(label: "KeyFrameKit.MP4SampleSequence")
    /// Touched only on ``queue``, which is what makes sharing it sound.
    /// (An existential, not a generic parameter, so that the closures run on the queue capture no
    /// metatype of the caller's.)
    private nonisolated(unsafe) let demuxer: any MP4SamplePulling

    init<Source: RandomAccessByteSource>(demuxer: sending MP4Demuxer<Source>) {
        self.demuxer = demuxer
    }

    /// Reads up to `count` samples of `trackID` on the queue and resumes the caller with them.
    /// Cancelling the calling task stops the batch after the sample being read.
    func pull(trackID: UInt32, count: Int, isolation actor: isolated (any Actor)?) async -> Batch {
        let stop = StopFlag()
        return await withTaskCancellationHandler {
            await withCheckedContinuation(isolation: actor) { (continuation: CheckedContinuation<Batch, Never>) in
                queue.async { [self] in
                    continuation.resume(returning: read(trackID: trackID, count: count, stop: stop))
                }
            }
        } onCancel: {
            stop.raise()
        }
    }

    private func read(trackID: UInt32, count: Int, stop: StopFlag) -> Batch {
        dispatchPrecondition(condition: .onQueue(queue))
        var batch = Batch()
        do throws(MP4Error) {
            try demuxer.start()
            while batch.samples.count < count, !stop.isRaised,
                  let sample = try demuxer.nextSample(trackID: trackID) {
                batch.samples.append(sample)
            }
        } catch {
            batch.error = error
        }
        return batch
    }
}

/// Tells a batch being read that its task was cancelled.
private final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    var isRaised: Bool { raised.load(ordering: .relaxed) }
    func raise() { raised.store(true, ordering: .relaxed) }
}

/// What an `MP4SampleQueue` asks of its demuxer.
protocol MP4SamplePulling: AnyObject {
    func start() throws(MP4Error)
    func nextSample(trackID: UInt32) throws(MP4Error) -> MediaSample?
}

extension MP4Demuxer: MP4SamplePulling {}
