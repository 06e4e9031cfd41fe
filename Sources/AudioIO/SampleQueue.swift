internal import Dispatch
internal import Synchronization
internal import MediaCore

/// A bounded FIFO between the capture thread and a delivery thread: ``offer(_:)`` never blocks
/// (a full queue refuses), ``take()`` blocks until a sample arrives or the queue is closed.
final class SampleQueue: Sendable {
    private struct State {
        var items: [MediaSample] = []
        var head = 0
        var closed = false
    }

    let capacity: Int
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Appends `sample` unless the queue is full or closed; returns whether it was taken.
    func offer(_ sample: MediaSample) -> Bool {
        let taken = state.withLock { state in
            guard !state.closed, state.items.count - state.head < capacity else { return false }
            if state.head > capacity {
                state.items.removeFirst(state.head)
                state.head = 0
            }
            state.items.append(sample)
            return true
        }
        if taken { available.signal() }
        return taken
    }

    /// The oldest sample, waiting for one; `nil` once closed and empty.
    func take() -> MediaSample? {
        while true {
            available.wait()
            let next: MediaSample?? = state.withLock { state in
                if state.head < state.items.count {
                    defer { state.head += 1 }
                    return .some(state.items[state.head])
                }
                return state.closed ? .some(nil) : nil
            }
            if let next { return next }
        }
    }

    /// Lets ``take()`` return `nil` once the queued samples are taken.
    func close() {
        state.withLock { $0.closed = true }
        available.signal()
    }
}
