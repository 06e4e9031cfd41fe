internal import Dispatch
internal import Synchronization
internal import MediaCore

/// A bounded FIFO between the capture thread and a delivery thread: ``offer(_:)`` never blocks
/// (a full queue refuses); ``takeBatch()`` waits until `batchSize` samples are queued, the
/// oldest has waited `maximumDelay`, or the queue is closed, then takes everything queued.
///
/// Batching lets a consumer that does heavy work per sample (an encoder) wake a few times a
/// second instead of once per period, with its code and tables still in cache for the rest of
/// the batch; a batch size of 1 delivers each sample as soon as it arrives.
final class SampleQueue: Sendable {
    private struct State {
        var items: [MediaSample] = []
        var closed = false
    }

    let capacity: Int
    let batchSize: Int
    let maximumDelay: Duration
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)

    init(capacity: Int, batchSize: Int = 1, maximumDelay: Duration = .milliseconds(200)) {
        self.capacity = max(1, capacity)
        self.batchSize = min(max(1, batchSize), self.capacity)
        self.maximumDelay = maximumDelay
    }

    /// Appends `sample` unless the queue is full or closed; returns whether it was taken.
    func offer(_ sample: MediaSample) -> Bool {
        let (taken, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed, state.items.count < capacity else { return (false, false) }
            state.items.append(sample)
            return (true, state.items.count == batchSize)
        }
        if wake { available.signal() }
        return taken
    }

    /// The queued samples, oldest first, once a batch is ready (see `SampleQueue`); `nil` once
    /// closed and empty.
    func takeBatch() -> [MediaSample]? {
        while true {
            // Once closed, hand over what is left (or end) without waiting.
            if state.withLock({ $0.closed }) {
                return state.withLock { state in
                    defer { state.items.removeAll() }
                    return state.items.isEmpty ? nil : state.items
                }
            }
            available.wait(for: maximumDelay)
            let batch: [MediaSample]?? = state.withLock { state in
                if !state.items.isEmpty {
                    defer { state.items.removeAll(keepingCapacity: true) }
                    return .some(state.items)
                }
                return state.closed ? .some(nil) : nil
            }
            if let batch { return batch }
        }
    }

    /// Lets ``takeBatch()`` return what is left at once, then `nil`.
    func close() {
        state.withLock { $0.closed = true }
        available.signal()
    }
}
