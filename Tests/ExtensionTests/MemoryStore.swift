import KeyFrameKit
import Synchronization

// An object store that KeyFrameKit does not have, written against the public API alone:
// `mem://BUCKET[?key=SECRET]` keeps what is put in memory, in the order it was put.

/// What each memory bucket holds, and the order of every put and removal.
final class MemoryBuckets: Sendable {
    struct Bucket: Sendable {
        var objects: [String: [UInt8]] = [:]
        var log: [String] = []
    }

    static let shared = MemoryBuckets()
    private let buckets = Mutex<[String: Bucket]>([:])

    func bucket(_ name: String) -> Bucket { buckets.withLock { $0[name] ?? Bucket() } }

    func update(_ name: String, _ change: (inout Bucket) -> Void) {
        buckets.withLock { change(&$0[name, default: Bucket()]) }
    }
}

/// A parsed `mem://` URL; `?failAt=N` makes its Nth put fail, as a store that goes away does.
struct MemoryStore: ObjectStore {
    let bucket: String
    let description: String
    let failAt: Int?

    init(url: String) throws(PublishingError) {
        let rest = url.dropFirst("mem://".count)
        let parts = rest.split(separator: "?", maxSplits: 1).map(String.init)
        guard let bucket = parts.first, !bucket.isEmpty else { throw PublishingError(.invalidDestination, "mem://: give a bucket") }
        self.bucket = bucket
        let query = parts.count > 1 ? parts[1].split(separator: "&").map(String.init) : []
        failAt = query.first { $0.hasPrefix("failAt=") }.flatMap { Int($0.dropFirst("failAt=".count)) }
        description = "mem://\(bucket)" + (query.contains { $0.hasPrefix("key=") } ? "?key=****" : "")
    }

    func contains(_ name: String) throws(PipelineError) -> Bool {
        MemoryBuckets.shared.bucket(bucket).objects[try checkedName(name)] != nil
    }

    func put(_ name: String, _ bytes: [UInt8]) throws(PipelineError) {
        let name = try checkedName(name)
        let puts = MemoryBuckets.shared.bucket(bucket).log.filter { $0.hasPrefix("put ") }.count
        if let failAt, puts + 1 == failAt { throw .unsupported("\(description): the store went away at put \(failAt)") }
        MemoryBuckets.shared.update(bucket) {
            $0.objects[name] = bytes
            $0.log.append("put " + name)
        }
    }

    func remove(_ name: String) throws(PipelineError) {
        let name = try checkedName(name)
        MemoryBuckets.shared.update(bucket) {
            $0.objects[name] = nil
            $0.log.append("remove " + name)
        }
    }
}

extension DestinationRegistry {
    /// KeyFrameKit's destinations and `mem://` buckets.
    static let withMemory: DestinationRegistry = {
        var registry = DestinationRegistry.standard
        registry.register(StoreEntry(name: "mem", urlSchemes: ["mem"]) { url throws(PublishingError) in try MemoryStore(url: url) })
        return registry
    }()
}
