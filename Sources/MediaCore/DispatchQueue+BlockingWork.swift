public import Dispatch

extension DispatchQueue {
    /// Runs `work` for each index of `0..<iterations`, each on a serial queue of its own, and
    /// returns when all have: unlike `concurrentPerform`, which runs as many at once as there
    /// are cores, every iteration runs at once, as blocking network requests (one per store, or
    /// four uploads) need.
    public static func performBlocking(iterations: Int, label: String, _ work: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for index in 0..<max(0, iterations) {
            DispatchQueue(label: "\(label) \(index)").async(group: group) { work(index) }
        }
        group.wait()
    }
}
