internal import Synchronization
internal import SystemPackage

/// An object of a ``ReadableObjectStore`` read as a ``RandomAccessByteSource``: each read
/// fetches only the blocks it needs (64 KiB, aligned), in one ranged request for a run of
/// them, and keeps the last few, so that a parser's small reads of neighbouring box headers
/// cost one request. A read of more than a block's worth goes straight through. What was
/// fetched is counted (``fetchedBytes``, ``requests``).
///
/// `Sendable` because it is synchronized: the cache is behind a mutex.
public final class ObjectRangeSource: RandomAccessByteSource, Sendable {
    /// The store.
    public let store: any ReadableObjectStore
    /// The object's name in it.
    public let name: String
    /// The object's size.
    public let byteCount: Int64
    /// The size of a block.
    public static let blockSize = 64 << 10
    /// Blocks kept.
    static let cachedBlocks = 16

    private struct Cache: Sendable {
        /// Block index → bytes, most recent last.
        var blocks: [(index: Int64, bytes: [UInt8])] = []
        var fetchedBytes: Int64 = 0
        var requests = 0
    }

    private let cache = Mutex(Cache())

    /// The object `name` of `store`, its size asked once.
    ///
    /// - Throws: ``PipelineError`` when it does not exist or the store cannot be asked.
    public init(store: any ReadableObjectStore, name: String) throws(PipelineError) {
        self.store = store
        self.name = name
        byteCount = try store.byteCount(of: name)
    }

    /// Bytes fetched from the store so far.
    public var fetchedBytes: Int64 { cache.withLock { $0.fetchedBytes } }
    /// Requests made so far (the size's included).
    public var requests: Int { cache.withLock { $0.requests + 1 } }

    /// Up to `count` bytes at `offset`; fewer only at the end.
    public func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        guard offset >= 0, count >= 0 else { throw .system(operation: "read at \(offset)", path: FilePath(description), errno: .invalidArgument) }
        let end = min(byteCount, offset + Int64(count))
        guard offset < end else { return [] }
        let size = Int64(Self.blockSize)
        if end - offset > size { return try fetch(offset, Int(end - offset)) }
        let first = offset / size, last = (end - 1) / size
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(end - offset))
        var index = first
        while index <= last {
            if let cached = cache.withLock({ cache in cache.blocks.first { $0.index == index }?.bytes }) {
                bytes += slice(cached, block: index, from: offset, to: end)
                index += 1
                continue
            }
            // The uncached run from here, in one request.
            var runEnd = index
            while runEnd < last, !cache.withLock({ cache in cache.blocks.contains { $0.index == runEnd + 1 } }) { runEnd += 1 }
            let start = index * size
            let fetched = try fetch(start, Int(min(byteCount, (runEnd + 1) * size) - start))
            for blockIndex in index...runEnd {
                let lower = Int((blockIndex - index) * size)
                guard lower < fetched.count else { break }
                let block = Array(fetched[lower..<min(fetched.count, lower + Int(size))])
                remember(blockIndex, block)
                bytes += slice(block, block: blockIndex, from: offset, to: end)
            }
            index = runEnd + 1
        }
        return bytes
    }

    /// The part of block `index` (`block`) within `from..<to`.
    private func slice(_ block: [UInt8], block index: Int64, from: Int64, to: Int64) -> ArraySlice<UInt8> {
        let start = index * Int64(Self.blockSize)
        let lower = Int(max(0, from - start)), upper = Int(min(Int64(block.count), to - start))
        return lower < upper ? block[lower..<upper] : []
    }

    private func remember(_ index: Int64, _ bytes: [UInt8]) {
        cache.withLock { cache in
            cache.blocks.removeAll { $0.index == index }
            cache.blocks.append((index, bytes))
            if cache.blocks.count > Self.cachedBlocks { cache.blocks.removeFirst() }
        }
    }

    private func fetch(_ offset: Int64, _ count: Int) throws(ByteStreamError) -> [UInt8] {
        do {
            let bytes = try store.read(name, at: offset, count: count)
            cache.withLock { cache in
                cache.fetchedBytes += Int64(bytes.count)
                cache.requests += 1
            }
            return bytes
        } catch {
            throw .refused(path: FilePath(description), reason: "\(error)")
        }
    }

    /// The store and the name.
    public var description: String { store.description + "/" + name }
}
