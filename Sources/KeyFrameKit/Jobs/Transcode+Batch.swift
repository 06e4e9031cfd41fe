internal import Dispatch
public import SystemPackage
internal import Synchronization

extension Transcode {
    /// One conversion of a batch.
    public struct BatchItem: Sendable, Hashable {
        /// The file to convert.
        public var input: FilePath
        /// The file to write (its extension chooses the format).
        public var output: FilePath

        /// An item.
        public init(input: FilePath, output: FilePath) {
            self.input = input
            self.output = output
        }
    }

    /// How one item of a batch ended.
    public enum BatchOutcome: Sendable {
        /// Converted; the output is complete under its name.
        case converted(ConvertSummary)
        /// Failed; nothing was left under the output's name.
        case failed(PipelineError)
    }

    /// Where a batch stands.
    public struct BatchProgress: Sendable {
        /// Items in the batch.
        public var total: Int
        /// Items converted.
        public var converted: Int
        /// Items that failed.
        public var failed: Int
        /// The share of the work done, 0…1: finished items count whole, running ones by their
        /// own progress.
        public var fraction: Double
    }

    /// Converts each item, `jobs` at a time, each on a thread of its own with its own decoder,
    /// resampler and encoder. A failure ends only its own item (its output is not left behind)
    /// and is returned in its place; the others go on. `control` stops or cancels them all.
    ///
    /// - Parameters:
    ///   - items: the conversions; outputs must differ from each other and from every input.
    ///   - options: applied to every item.
    ///   - jobs: how many run at once (at least 1); `keyframe convert` passes the number of
    ///     active cores.
    ///   - control: stops or cancels every item.
    ///   - itemFinished: called on the item's thread as each ends, with its index.
    ///   - progress: called from the items' threads, a few times a second at most per item.
    /// - Returns: one outcome per item, in the order of `items`.
    public static func convert(batch items: [BatchItem], options: ConvertOptions = ConvertOptions(),
                               jobs: Int, control: JobControl? = nil,
                               itemFinished: (@Sendable (Int, BatchOutcome) -> Void)? = nil,
                               progress: (@Sendable (BatchProgress) -> Void)? = nil) -> [BatchOutcome] {
        let state = Mutex(BatchState(count: items.count))
        let group = DispatchGroup()
        for worker in 0..<max(1, min(jobs, items.count)) {
            group.enter()
            DispatchQueue(label: "KeyFrameKit.batch.\(worker)").async {
                defer { group.leave() }
                while let index = state.withLock({ $0.take() }) {
                    let item = items[index]
                    let report: ((MediaProgress) -> Void)? = progress.map { progress in
                        { media in
                            let fraction = media.totalSeconds.map { $0 > 0 ? min(1, media.mediaSeconds / $0) : 0 } ?? 0
                            if let snapshot = state.withLock({ $0.update(index, fraction: fraction) }) { progress(snapshot) }
                        }
                    }
                    let outcome: BatchOutcome
                    do throws(PipelineError) {
                        outcome = .converted(try convert(item.input, to: item.output, options: options, control: control, progress: report))
                    } catch {
                        outcome = .failed(error)
                    }
                    let snapshot = state.withLock { $0.finish(index, outcome) }
                    itemFinished?(index, outcome)
                    progress?(snapshot)
                }
            }
        }
        group.wait()
        return state.withLock { $0.outcomes.map { $0! } }
    }
}

/// The shared state of a batch: the next item to take, each item's progress and outcome.
private struct BatchState: ~Copyable {
    var next = 0
    var outcomes: [Transcode.BatchOutcome?]
    var fractions: [Double]
    var lastReport: ContinuousClock.Instant?

    init(count: Int) {
        outcomes = Array(repeating: nil, count: count)
        fractions = Array(repeating: 0, count: count)
    }

    mutating func take() -> Int? {
        guard next < outcomes.count else { return nil }
        defer { next += 1 }
        return next
    }

    /// Records an item's progress; returns a snapshot at most every 100 ms.
    mutating func update(_ index: Int, fraction: Double) -> Transcode.BatchProgress? {
        fractions[index] = fraction
        let now = ContinuousClock.now
        if let lastReport, now - lastReport < .milliseconds(100) { return nil }
        lastReport = now
        return snapshot
    }

    mutating func finish(_ index: Int, _ outcome: Transcode.BatchOutcome) -> Transcode.BatchProgress {
        outcomes[index] = outcome
        fractions[index] = 1
        return snapshot
    }

    var snapshot: Transcode.BatchProgress {
        var converted = 0, failed = 0
        for outcome in outcomes {
            switch outcome {
            case .converted?: converted += 1
            case .failed?: failed += 1
            case nil: break
            }
        }
        let fraction = outcomes.isEmpty ? 1 : fractions.reduce(0, +) / Double(outcomes.count)
        return Transcode.BatchProgress(total: outcomes.count, converted: converted, failed: failed, fraction: fraction)
    }
}

