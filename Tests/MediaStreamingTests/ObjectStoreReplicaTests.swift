import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import MediaCore
@testable import MediaStreaming
import Synchronization
import Testing

/// The rules an ``ObjectStoreReplica`` keeps, against a store in memory that can be held, made
/// to fail for a while, or to refuse: order, a newer playlist replacing a waiting one, a removal
/// dropping a waiting put, a segment that fails alone becoming a gap, a full spool losing a
/// segment (and marking it), the spool on disk, a permanent refusal stopping the replica.
@Suite struct ObjectStoreReplicaTests {
    /// A failure that says whether it is transient.
    struct Failure: TransientError, Sendable {
        var isTransient: Bool
    }

    /// A store in memory: what each request did, in order; `hold` blocks requests until
    /// released; `fails` answers a name with an error.
    final class MemoryStore: ObjectStore, Sendable {
        let requests = Mutex<[String]>([])
        let objects = Mutex<[String: [UInt8]]>([:])
        let gate = DispatchSemaphore(value: 0)
        let held = Mutex(false)
        let failing: @Sendable (String) -> Failure?

        init(holding: Bool = false, failing: @escaping @Sendable (String) -> Failure? = { _ in nil }) {
            held.withLock { $0 = holding }
            self.failing = failing
        }

        var description: String { "memory" }

        func release() {
            held.withLock { $0 = false }
            gate.signal()
        }

        private func waitWhileHeld() {
            while held.withLock({ $0 }) { _ = gate.wait(timeout: .now() + .milliseconds(10)) }
        }

        func contains(_ name: String) throws(PipelineError) -> Bool { objects.withLock { $0[name] != nil } }

        func put(_ name: String, _ bytes: [UInt8]) throws(PipelineError) {
            waitWhileHeld()
            if let failure = failing(name) {
                requests.withLock { $0.append("failed PUT \(name)") }
                throw PipelineError(.network, underlying: failure)
            }
            requests.withLock { $0.append("PUT \(name)") }
            objects.withLock { $0[name] = bytes }
        }

        func remove(_ name: String) throws(PipelineError) {
            waitWhileHeld()
            requests.withLock { $0.append("DELETE \(name)") }
            _ = objects.withLock { $0.removeValue(forKey: name) }
        }

        var sent: [String] { requests.withLock { $0 }.filter { !$0.hasPrefix("failed") } }
    }

    static let media = ObjectAttributes(contentType: "video/iso.segment")

    /// Waits until the store has been asked `count` requests or more (5 s at most).
    static func waitForRequests(_ store: MemoryStore, count: Int) {
        for _ in 0..<500 where store.requests.withLock({ $0.count }) < count { usleep(10_000) }
    }

    @Test func objectsGoInOrderAndTheNewestPlaylistReplacesAWaitingOne() {
        let store = MemoryStore(holding: true)
        let replica = ObjectStoreReplica(store: store)
        replica.put("segment-00001.m4s", [1], attributes: Self.media)
        usleep(50_000)  // The first is being sent (held).
        replica.put("index.m3u8", Array("one".utf8), attributes: ObjectAttributes())
        replica.put("segment-00002.m4s", [2], attributes: Self.media)
        replica.put("index.m3u8", Array("two".utf8), attributes: ObjectAttributes())
        #expect(replica.status.backlogObjects == 3 && replica.status.state == .uploading)
        store.release()
        let status = replica.finish(within: .seconds(10))
        #expect(store.sent == ["PUT segment-00001.m4s", "PUT segment-00002.m4s", "PUT index.m3u8"])
        #expect(store.objects.withLock { $0["index.m3u8"] } == Array("two".utf8))
        #expect(status.state == .current && status.uploadedObjects == 3 && status.backlogObjects == 0 && status.backlogBytes == 0)
    }

    /// Renditions in directories of their own go up side by side: one whose store keeps failing
    /// does not hold the other back, and the master queued after both waits for the failing
    /// one's playlist.
    @Test func renditionsGoUpInParallelAndTheMasterWaitsForThem() {
        let slow = Mutex(true)
        let store = MemoryStore(failing: { name in
            name.hasPrefix("128k/") && slow.withLock { $0 } ? Failure(isTransient: true) : nil
        })
        let replica = ObjectStoreReplica(store: store, gapAfter: .seconds(60))
        replica.put("128k/segment-00001.m4s", [1], attributes: Self.media)
        replica.put("128k/index.m3u8", Array("128".utf8), attributes: ObjectAttributes())
        replica.put("64k/segment-00001.m4s", [2], attributes: Self.media)
        replica.put("64k/index.m3u8", Array("64".utf8), attributes: ObjectAttributes())
        replica.put("master.m3u8", Array("master".utf8), attributes: ObjectAttributes())
        for _ in 0..<500 where !store.sent.contains("PUT 64k/index.m3u8") { usleep(10_000) }
        usleep(200_000)
        // The 64k lane is through while 128k fails; the master waits.
        #expect(store.sent == ["PUT 64k/segment-00001.m4s", "PUT 64k/index.m3u8"])
        #expect(replica.status.state == .retrying && replica.status.backlogObjects == 3)
        slow.withLock { $0 = false }
        let status = replica.finish(within: .seconds(10))
        #expect(store.sent.suffix(3) == ["PUT 128k/segment-00001.m4s", "PUT 128k/index.m3u8", "PUT master.m3u8"])
        #expect(status.state == .current && status.uploadedObjects == 5 && status.gaps.isEmpty && status.backlogBytes == 0)
    }

    @Test func aRemovalDropsAWaitingPutOfItsName() {
        let store = MemoryStore(holding: true)
        let replica = ObjectStoreReplica(store: store)
        replica.put("segment-00001.m4s", [1], attributes: Self.media)
        usleep(50_000)
        replica.put("segment-00002.m4s", [2], attributes: Self.media)
        replica.remove("segment-00002.m4s")
        store.release()
        let status = replica.finish(within: .seconds(10))
        #expect(store.sent == ["PUT segment-00001.m4s", "DELETE segment-00002.m4s"])
        #expect(status.removedObjects == 1 && status.uploadedObjects == 1)
    }

    @Test func aSegmentFailingAloneBecomesAGapInTheNextPlaylists() {
        let store = MemoryStore(failing: { $0 == "64k/segment-00002.m4s" ? Failure(isTransient: true) : nil })
        let replica = ObjectStoreReplica(store: store, gapAfter: .milliseconds(300))
        let playlist = "#EXTM3U\n#EXT-X-VERSION:7\n#EXTINF:1.0,\nsegment-00001.m4s\n#EXTINF:1.0,\nsegment-00002.m4s\n"
            + "#EXT-X-PART:DURATION=0.5,URI=\"segment-00002.1.m4s\"\n#EXTINF:1.0,\nsegment-00003.m4s\n"
        replica.put("64k/segment-00001.m4s", [1], attributes: Self.media)
        replica.put("64k/segment-00002.m4s", [2], attributes: Self.media)
        replica.put("64k/segment-00003.m4s", [3], attributes: Self.media)
        replica.put("64k/index.m3u8", Array(playlist.utf8), attributes: ObjectAttributes())
        let status = replica.finish(within: .seconds(20))
        #expect(status.gaps == ["64k/segment-00002.m4s"] && status.lost.isEmpty && status.failures >= 2, "\(status)")
        #expect(store.sent == ["PUT 64k/segment-00001.m4s", "PUT 64k/segment-00003.m4s", "PUT 64k/index.m3u8"])
        let sent = String(decoding: store.objects.withLock { $0["64k/index.m3u8"] } ?? [], as: UTF8.self)
        #expect(sent.contains("#EXT-X-VERSION:8\n") && sent.contains("#EXTINF:1.0,\n#EXT-X-GAP\nsegment-00002.m4s\n"), "\(sent)")
        #expect(!sent.contains("#EXT-X-GAP\nsegment-00001.m4s") && !sent.contains("#EXT-X-GAP\nsegment-00003.m4s"))
    }

    @Test func aFullSpoolLosesTheSegmentAndMarksIt() {
        let store = MemoryStore(holding: true)
        let replica = ObjectStoreReplica(store: store, spoolLimit: 100)
        replica.put("segment-00001.m4s", [UInt8](repeating: 1, count: 60), attributes: Self.media)
        replica.put("segment-00002.m4s", [UInt8](repeating: 2, count: 60), attributes: Self.media)
        replica.put("index.m3u8", Array("#EXTM3U\n#EXTINF:1.0,\nsegment-00001.m4s\n#EXTINF:1.0,\nsegment-00002.m4s\n".utf8), attributes: ObjectAttributes())
        #expect(replica.status.lost == ["segment-00002.m4s"])
        store.release()
        let status = replica.finish(within: .seconds(10))
        #expect(store.sent == ["PUT segment-00001.m4s", "PUT index.m3u8"] && status.lost == ["segment-00002.m4s"])
        let sent = String(decoding: store.objects.withLock { $0["index.m3u8"] } ?? [], as: UTF8.self)
        #expect(sent.contains("#EXT-X-GAP\nsegment-00002.m4s"), "no playlist names an object never sent: \(sent)")
    }

    @Test func theQueuePastItsMemoryGoesToDiskAndComesBackWhole() {
        let store = MemoryStore(holding: true)
        let replica = ObjectStoreReplica(store: store, memoryLimit: 1000)
        let objects = (1...5).map { index in (name: "segment-0000\(index).m4s", bytes: (0..<700).map { UInt8(truncatingIfNeeded: $0 * index) }) }
        for object in objects { replica.put(object.name, object.bytes, attributes: Self.media) }
        #expect(replica.status.spooledBytes == 4 * 700 && replica.status.backlogBytes == 5 * 700, "\(replica.status)")
        store.release()
        let status = replica.finish(within: .seconds(10))
        #expect(status.spooledBytes == 0 && status.uploadedBytes == 5 * 700)
        for object in objects { #expect(store.objects.withLock { $0[object.name] } == object.bytes, "\(object.name)") }
    }

    @Test func aPermanentRefusalStopsTheReplicaAtOnce() {
        let store = MemoryStore(holding: true, failing: { _ in Failure(isTransient: false) })
        let replica = ObjectStoreReplica(store: store)
        replica.put("segment-00001.m4s", [1], attributes: Self.media)
        replica.put("segment-00002.m4s", [2], attributes: Self.media)
        store.release()
        Self.waitForRequests(store, count: 1)
        let status = replica.finish(within: .seconds(10))
        #expect(status.state == .failed && status.failures == 1 && status.lost.count == 2 && status.lastError != nil, "\(status)")
        #expect(store.requests.withLock { $0 } == ["failed PUT segment-00001.m4s"], "one request, no retries")
        replica.put("segment-00003.m4s", [3], attributes: Self.media)
        #expect(replica.status.backlogObjects == 0)
    }

    /// A rendition playlist replaced while waiting takes the master playlist and page queued
    /// after it behind the new one: the master never goes up before a playlist it names.
    @Test func aMasterNeverGoesUpBeforeTheRenditionPlaylistsItNames() {
        let store = MemoryStore(holding: true)
        let replica = ObjectStoreReplica(store: store)
        replica.put("a/segment-00001.m4s", [1], attributes: Self.media)
        usleep(50_000)
        replica.put("a/index.m3u8", Array("a1".utf8), attributes: ObjectAttributes())
        replica.put("b/segment-00001.m4s", [2], attributes: Self.media)
        replica.put("b/index.m3u8", Array("b1".utf8), attributes: ObjectAttributes())
        replica.put("master.m3u8", Array("m".utf8), attributes: ObjectAttributes())
        replica.put("index.html", Array("p".utf8), attributes: ObjectAttributes())
        replica.put("a/segment-00002.m4s", [3], attributes: Self.media)
        replica.put("a/index.m3u8", Array("a2".utf8), attributes: ObjectAttributes())
        store.release()
        replica.finish(within: .seconds(10))
        let sent = store.sent
        let master = sent.firstIndex(of: "PUT master.m3u8") ?? -1
        #expect(master > (sent.firstIndex(of: "PUT a/index.m3u8") ?? .max) && master > (sent.firstIndex(of: "PUT b/index.m3u8") ?? .max), "\(sent)")
        #expect(sent.last == "PUT index.html" && sent.filter { $0 == "PUT a/index.m3u8" }.count == 1, "\(sent)")
    }

    /// A store still down when the time to finish is up: the replica has failed, and what is
    /// left is counted lost (the ENDLIST playlist never went up), so a recording says so.
    @Test func aStoreDownPastTheDeadlineLeavesTheReplicaFailedWithItsLosses() {
        let store = MemoryStore(failing: { _ in Failure(isTransient: true) })
        let replica = ObjectStoreReplica(store: store, gapAfter: .seconds(60))
        replica.put("segment-00001.m4s", [1], attributes: Self.media)
        replica.put("index.m3u8", Array("#EXTM3U\n".utf8), attributes: ObjectAttributes())
        let status = replica.finish(within: .milliseconds(300))
        #expect(status.state == .failed && status.lost == ["segment-00001.m4s"] && status.lastError?.contains("gave up") == true, "\(status)")
        replica.put("segment-00002.m4s", [2], attributes: Self.media)
        #expect(replica.status.backlogObjects <= 2)
    }

    /// A removal that keeps failing is dropped after the gap time, and the queue goes on.
    /// A store down as a whole: a removal waits for it like the rest, and goes when it is back.
    @Test func aRemovalWaitsForAStoreThatIsDown() {
        final class DownStore: ObjectStore, Sendable {
            let down = Mutex(true)
            let requests = Mutex<[String]>([])
            var description: String { "down" }
            func contains(_ name: String) throws(PipelineError) -> Bool { false }
            func put(_ name: String, _ bytes: [UInt8]) throws(PipelineError) { try answer("PUT \(name)") }
            func remove(_ name: String) throws(PipelineError) { try answer("DELETE \(name)") }
            func answer(_ request: String) throws(PipelineError) {
                if down.withLock({ $0 }) { throw PipelineError(.network, underlying: Failure(isTransient: true)) }
                requests.withLock { $0.append(request) }
            }
        }
        let store = DownStore()
        let replica = ObjectStoreReplica(store: store, gapAfter: .milliseconds(100))
        replica.remove("segment-00001.m4s")
        replica.put("segment-00003.m4s", [3], attributes: Self.media)
        usleep(1_500_000)
        store.down.withLock { $0 = false }
        let status = replica.finish(within: .seconds(20))
        #expect(Set(store.requests.withLock { $0 }) == ["DELETE segment-00001.m4s", "PUT segment-00003.m4s"], "\(status)")
        #expect(status.droppedRemovals == 0 && status.state == .current && status.gaps.isEmpty, "\(status)")
    }

    /// A rendition playlist replaced while it waits keeps its place before a master queued
    /// after it: the master never goes up first.
    @Test func aReplacedRenditionPlaylistStillPrecedesTheMaster() {
        let slow = Mutex(true)
        let store = MemoryStore(failing: { name in name == "a/segment-00001.m4s" && slow.withLock { $0 } ? Failure(isTransient: true) : nil })
        let replica = ObjectStoreReplica(store: store, gapAfter: .seconds(60))
        replica.put("a/segment-00001.m4s", [1], attributes: Self.media)
        replica.put("a/index.m3u8", Array("a1".utf8), attributes: ObjectAttributes())
        replica.put("b/segment-00001.m4s", [1], attributes: Self.media)
        replica.put("b/index.m3u8", Array("b1".utf8), attributes: ObjectAttributes())
        replica.put("master.m3u8", Array("master".utf8), attributes: ObjectAttributes())
        replica.put("a/segment-00002.m4s", [2], attributes: Self.media)
        replica.put("a/index.m3u8", Array("a2".utf8), attributes: ObjectAttributes())
        usleep(300_000)
        slow.withLock { $0 = false }
        let status = replica.finish(within: .seconds(10))
        let sent = store.sent
        let master = sent.firstIndex(of: "PUT master.m3u8") ?? -1
        let playlist = sent.firstIndex(of: "PUT a/index.m3u8") ?? Int.max
        #expect(playlist < master && sent.filter { $0 == "PUT a/index.m3u8" }.count == 1, "\(sent)")
        #expect(store.objects.withLock { $0["a/index.m3u8"] } == Array("a2".utf8) && status.state == .current, "\(sent)")
    }

    @Test func aRemovalThatKeepsFailingIsDropped() {
        let store = MemoryStore(failing: { $0 == "never" ? Failure(isTransient: true) : nil })
        final class FailingRemovals: ObjectStore, Sendable {
            let inner: MemoryStore
            init(_ inner: MemoryStore) { self.inner = inner }
            var description: String { "failing removals" }
            func contains(_ name: String) throws(PipelineError) -> Bool { false }
            func put(_ name: String, _ bytes: [UInt8]) throws(PipelineError) { try inner.put(name, bytes) }
            func remove(_ name: String) throws(PipelineError) { throw PipelineError(.network, underlying: Failure(isTransient: true)) }
        }
        let replica = ObjectStoreReplica(store: FailingRemovals(store), gapAfter: .milliseconds(200))
        replica.remove("segment-00001.m4s")
        replica.put("segment-00002.m4s", [2], attributes: Self.media)
        let status = replica.finish(within: .seconds(10))
        #expect(store.sent == ["PUT segment-00002.m4s"] && status.state == .current && status.failures >= 1 && status.droppedRemovals == 1,
                "\(status)")
    }

    /// An init segment always fits: a full spool loses segments, never what every segment needs.
    @Test func anInitSegmentAlwaysFits() {
        let store = MemoryStore(holding: true)
        let replica = ObjectStoreReplica(store: store, spoolLimit: 100)
        replica.put("segment-00001.m4s", [UInt8](repeating: 1, count: 90), attributes: Self.media)
        replica.put("init.mp4", [UInt8](repeating: 2, count: 90), attributes: ObjectAttributes())
        #expect(replica.status.lost.isEmpty && replica.status.backlogObjects == 2)
        store.release()
        replica.finish(within: .seconds(10))
        #expect(store.sent == ["PUT segment-00001.m4s", "PUT init.mp4"])
    }
}
