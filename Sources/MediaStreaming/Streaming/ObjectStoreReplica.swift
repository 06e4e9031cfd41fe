internal import Dispatch
public import MediaCore
internal import Synchronization
internal import SystemPackage

/// A live stream's objects copied into a remote ``/MediaCore/ObjectStore`` (S3, an HTTP ingest
/// point, a WebDAV share) as they are written, on a dispatch queue of its own: the local
/// rendition hands each object over and goes on, so that a slow or absent destination never
/// slows it.
///
/// The rules, after Akamai's Media Services Live HTTP ingest recommendations:
/// - **Order.** Objects go up one after another in the order they were written, so every
///   segment, part and init segment a playlist names is acknowledged before that playlist is
///   sent. A playlist waiting behind another of its name replaces it (only the newest is sent),
///   and the playlists and pages queued after the one replaced move behind the new one, so
///   that a master playlist never goes up before a rendition playlist it names.
/// - **Transient failures** (no connection, 5xx, 408, 429: ``/MediaCore/TransientError``) are
///   retried without end, 0.5 s after the first and up to every 5 s, the store resolving the
///   host again each time. Meanwhile objects queue: in memory up to 8 MiB, then in a spool
///   directory on disk, up to ``spoolLimit`` in all.
/// - **One segment failing while others go up** is given up once it has failed for ``gapAfter``
///   (a target duration; at least one whole try, the store's own retries included): the next
///   segments are tried past it, and once one succeeds it is a gap, marked `EXT-X-GAP` (RFC
///   8216bis 4.4.4.7; a part `GAP=YES`) in every playlist sent from then on. A removal failing
///   that long is dropped (an object left in the store harms no one). Init segments, playlists
///   and pages are never given up.
/// - **A full spool.** A segment that does not fit is not kept, reported in ``Status/lost``, and
///   marked as a gap, so that no playlist names an object that was never sent. For a sliding
///   window nothing is lost this way while the window fits: a segment queued and then removed
///   (it left the window) is dropped from the queue unsent. Init segments, playlists and pages
///   always fit.
/// - **Permanent failures** (any other refusal: 401, 403, 404 of a bucket) stop the replica
///   with the reason in ``Status/lastError``; the local rendition goes on.
/// - **The end.** ``finish(within:)`` waits until everything queued, the final (`ENDLIST`)
///   playlist last, has gone up; what is left when the time is up is lost, and the replica
///   failed. ``abandon()`` drops the queue at once (a recording that failed).
///
/// Departures from Akamai's recommendations: objects go up one at a time per replica, the
/// renditions of a ladder in series, not several in parallel; a playlist is retried like any
/// other object rather than at a fixed interval.
///
/// `Sendable` because it is synchronized: its state is behind a mutex, and only its own thread
/// sends requests.
public final class ObjectStoreReplica: Sendable {
    /// Where a replica stands.
    public struct Status: Sendable, Hashable {
        /// What the replica is doing.
        public enum State: String, Sendable, Hashable {
            /// Everything written has gone up.
            case current
            /// Objects are going up.
            case uploading
            /// The store failed transiently; the head of the queue is tried again.
            case retrying
            /// The store refused for good (``lastError``); nothing more is sent.
            case failed
        }

        /// What the replica is doing.
        public var state: State = .current
        /// Objects waiting to go up (the one being sent among them).
        public var backlogObjects = 0
        /// Their bytes.
        public var backlogBytes: Int64 = 0
        /// The part of ``backlogBytes`` held on disk in the spool.
        public var spooledBytes: Int64 = 0
        /// Objects that went up.
        public var uploadedObjects = 0
        /// Their bytes.
        public var uploadedBytes: Int64 = 0
        /// Objects removed from the store (segments that left a live window).
        public var removedObjects = 0
        /// Requests that failed (each try counts).
        public var failures = 0
        /// Objects given up after failing alone for ``ObjectStoreReplica/gapAfter``: marked as
        /// gaps in the playlists.
        public var gaps: [String] = []
        /// Objects the spool could not keep: never sent, marked as gaps.
        public var lost: [String] = []
        /// The last failure, in words (secrets masked).
        public var lastError: String?
    }

    /// The store the objects go to.
    public let store: any ObjectStore
    /// The most the queue holds, in memory and on disk, in bytes.
    public let spoolLimit: Int64
    /// How long one object may fail alone before it is given up as a gap.
    public let gapAfter: Duration
    /// The most queued bytes held in memory; beyond, the spool directory holds them.
    let memoryLimit: Int

    /// An object waiting to go up, or to be removed.
    private struct Pending: Sendable {
        enum Payload: Sendable {
            case memory([UInt8])
            case spooled(FilePath)
        }

        var name: String
        /// `nil`: a removal.
        var payload: Payload?
        var byteCount: Int
        var attributes: ObjectAttributes
        /// When the object was first tried and failed, while it keeps failing.
        var failingSince: ContinuousClock.Instant?

        var isManifest: Bool { ObjectStoreReplica.isManifest(name) }
        /// A segment or part: what may be given up or lost, and marked as a gap.
        var isMedia: Bool { payload != nil && ObjectStoreReplica.isMedia(name) }
    }

    private struct State: Sendable {
        var queue: [Pending] = []
        /// Whether the first of ``queue`` is being sent (it is not dropped or replaced then).
        var sending = false
        var status = Status()
        var memoryBytes = 0
        var spoolDirectory: FilePath?
        var spoolFiles = 0
        /// Names given up or lost: playlists mark them as gaps.
        var gapNames: Set<String> = []
        var finishing = false
        var stopped = false
        var finished = false
        /// Given up by ``finish(within:)``'s deadline or ``abandon()``: what is left is already
        /// counted lost, and what the thread still does is not counted.
        var abandoned = false
    }

    private let state = Mutex(State())
    /// Signalled when an object is queued or the replica is told to finish.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled once when the thread ends.
    private let ended = DispatchSemaphore(value: 0)

    /// A replica into `store`, its thread started: at most `spoolLimit` bytes queued (1 GB by
    /// default), an object failing alone given up after `gapAfter` (6 s by default: set it to
    /// the target duration).
    public init(store: any ObjectStore, spoolLimit: Int64 = 1_000_000_000, gapAfter: Duration = .seconds(6), memoryLimit: Int = 8 << 20) {
        self.store = store
        self.spoolLimit = spoolLimit
        self.gapAfter = gapAfter
        self.memoryLimit = memoryLimit
        DispatchQueue(label: "KeyFrameKit.ObjectStoreReplica \(store.description)").async { self.run() }
    }

    /// The store, as messages name it (secrets masked).
    public var description: String { store.description }

    /// Where the replica stands now.
    public var status: Status { state.withLock { $0.status } }

    /// Queues `bytes` as the object `name`, to go up after everything queued before; a
    /// playlist waiting under the same name is replaced. Returns at once. A segment the spool
    /// cannot hold is not kept (``Status/lost``).
    public func put(_ name: String, _ bytes: [UInt8], attributes: ObjectAttributes) {
        let media = Self.isMedia(name)
        // Decided under the lock, written outside it: the caller's thread writes the spool file.
        let spools: Bool? = state.withLock { state in
            guard !state.stopped, !state.finishing else { return nil }
            guard !media || state.status.backlogBytes + Int64(bytes.count) <= spoolLimit else {
                state.status.lost.append(name)
                state.gapNames.insert(name)
                return nil
            }
            return state.memoryBytes + bytes.count > memoryLimit
        }
        guard let spools else { return }
        var payload = Pending.Payload.memory(bytes)
        if spools, let file = spool(bytes) { payload = .spooled(file) }
        state.withLock { state in
            guard !state.stopped else {
                if case .spooled(let file) = payload { try? FileSystemCalls.unlink(file) }
                return
            }
            var following: [Pending] = []
            if Self.isManifest(name) { following = replace(name, in: &state) }
            if case .spooled = payload { state.status.spooledBytes += Int64(bytes.count) } else { state.memoryBytes += bytes.count }
            state.queue.append(Pending(name: name, payload: payload, byteCount: bytes.count, attributes: attributes))
            state.queue += following
            state.status.backlogObjects += 1
            state.status.backlogBytes += Int64(bytes.count)
            if state.status.state == .current { state.status.state = .uploading }
        }
        wake.signal()
    }

    /// Queues the removal of the object `name`, after everything queued before; a put of it
    /// still waiting is dropped unsent. Returns at once.
    public func remove(_ name: String) {
        state.withLock { state in
            guard !state.stopped, !state.finishing else { return }
            drop(name, from: &state)
            state.queue.append(Pending(name: name, payload: nil, byteCount: 0, attributes: ObjectAttributes()))
            state.status.backlogObjects += 1
            if state.status.state == .current { state.status.state = .uploading }
        }
        wake.signal()
    }

    /// Waits until everything queued has gone up, or the store refused for good, or `timeout`
    /// has passed (what is left is then given up and counted in ``Status/lost``); then the
    /// spool directory is removed. Nothing can be queued after. Returns the status at the end.
    @discardableResult
    public func finish(within timeout: Duration = .seconds(300)) -> Status {
        state.withLock { $0.finishing = true }
        wake.signal()
        if ended.wait(for: timeout) == .timedOut {
            give(up: "gave up after \(timeout) with \(status.backlogObjects) objects unsent")
            _ = ended.wait(for: .seconds(1))
        }
        return status
    }

    /// Drops what is queued at once, counted lost, and removes the spool: a recording that
    /// failed, or a store that must not be waited for. Nothing can be queued after.
    public func abandon() {
        give(up: nil)
    }

    /// Stops now as ``finish(within:)`` does when its time is up: failed, for `reason`, what
    /// is queued counted lost.
    public func giveUp(because reason: String) {
        give(up: reason)
    }

    /// Stops the replica now: the queue is counted lost, the state failed when `reason` is
    /// given, the spool removed; the thread ends after what it is sending.
    private func give(up reason: String?) {
        state.withLock { state in
            guard !state.finished, !state.abandoned else { return }
            state.abandoned = true
            state.stopped = true
            state.finishing = true
            if let reason {
                state.status.state = .failed
                state.status.lastError = (state.status.lastError.map { $0 + "; " } ?? "") + reason
            }
            state.status.lost += state.queue.filter(\.isMedia).map(\.name)
            if let directory = state.spoolDirectory {
                UncommittedFiles.removeTree(directory)
                state.spoolDirectory = nil
            }
        }
        wake.signal()
    }

    /// Whether `name` is a playlist or manifest: the newest replaces one waiting, and it may
    /// name gaps.
    static func isManifest(_ name: String) -> Bool { name.hasSuffix(".m3u8") || name.hasSuffix(".mpd") }

    /// Whether `name` is a segment or a part (`.m4s`, packed audio's `.aac`): what a playlist
    /// can mark as a gap. An init segment, a playlist or a page is not.
    static func isMedia(_ name: String) -> Bool { name.hasSuffix(".m4s") || name.hasSuffix(".aac") }

    /// Drops the waiting playlist `name` (not the one being sent), if there is one, and takes
    /// out the playlists and pages queued after it, to go behind the new one in their order.
    private func replace(_ name: String, in state: inout State) -> [Pending] {
        let first = state.sending ? 1 : 0
        guard first < state.queue.count, let index = state.queue[first...].firstIndex(where: { $0.name == name && $0.payload != nil }) else {
            return []
        }
        release(state.queue.remove(at: index), in: &state)
        var following: [Pending] = []
        var kept = Array(state.queue[..<index])
        for pending in state.queue[index...] {
            if pending.payload != nil, pending.isManifest || pending.name.hasSuffix(".html") { following.append(pending) } else { kept.append(pending) }
        }
        state.queue = kept
        return following
    }

    /// Drops the waiting puts and removals of `name` (not the one being sent): a removal queued
    /// after them does their work (a playlist's replacement is ``replace(_:in:)``).
    private func drop(_ name: String, from state: inout State) {
        let first = state.sending ? 1 : 0
        guard first < state.queue.count else { return }
        var kept: [Pending] = Array(state.queue[..<first])
        for pending in state.queue[first...] {
            if pending.name == name { release(pending, in: &state) } else { kept.append(pending) }
        }
        state.queue = kept
    }

    /// Forgets `pending`'s bytes (and its spool file) and takes it off the backlog.
    private func release(_ pending: Pending, in state: inout State) {
        switch pending.payload {
        case .memory?: state.memoryBytes -= pending.byteCount
        case .spooled(let file)?:
            try? FileSystemCalls.unlink(file)
            state.status.spooledBytes -= Int64(pending.byteCount)
        case nil: break
        }
        state.status.backlogObjects -= 1
        state.status.backlogBytes -= Int64(pending.byteCount)
    }

    /// Writes `bytes` into the spool directory (made at the first), or `nil` when it cannot be
    /// written (the bytes are then kept in memory).
    private func spool(_ bytes: [UInt8]) -> FilePath? {
        let file: FilePath? = state.withLock { state in
            if state.spoolDirectory == nil, !state.abandoned {
                state.spoolDirectory = try? FileSystemCalls.makeTemporaryDirectory(prefix: "keyframe-spool-")
                if let directory = state.spoolDirectory { UncommittedFiles.insertTree(directory) }
            }
            guard let directory = state.spoolDirectory else { return nil }
            state.spoolFiles += 1
            return directory.appending("\(state.spoolFiles)")
        }
        guard let file, (try? FileByteSink.write(bytes, to: file, syncing: false)) != nil else { return nil }
        return file
    }

    /// The thread: sends the first of the queue until it goes up (or is given up), then the next.
    private func run() {
        var delay = Duration.milliseconds(500)
        while true {
            let next: Pending? = state.withLock { state in
                if state.stopped || (state.queue.isEmpty && state.finishing) {
                    finishUp(&state)
                    return nil
                }
                guard let first = state.queue.first else { return nil }
                state.sending = true
                return first
            }
            guard let head = next else {
                if state.withLock({ $0.finished }) {
                    ended.signal()
                    return
                }
                wake.wait()
                continue
            }
            let attempted = ContinuousClock.now
            let gaps = state.withLock { $0.gapNames }
            do throws(PipelineError) {
                try send(head, gaps: gaps)
                state.withLock { state in
                    state.sending = false
                    guard !state.abandoned else { return }
                    state.queue.removeFirst()
                    sent(head, in: &state)
                }
                delay = .milliseconds(500)
            } catch {
                let givesUp: Bool = state.withLock { state in
                    state.sending = false
                    guard !state.abandoned, failed(with: error, in: &state) else { return false }
                    let since = state.queue[0].failingSince ?? attempted
                    state.queue[0].failingSince = since
                    guard since.duration(to: .now) >= gapAfter else { return false }
                    if head.payload == nil {
                        // A removal failing that long is dropped.
                        release(state.queue.removeFirst(), in: &state)
                        return true
                    }
                    return head.isMedia
                }
                if givesUp, head.payload == nil || sendsPast(head) {
                    delay = .milliseconds(500)
                    continue
                }
                if state.withLock({ $0.stopped }) { continue }
                _ = DispatchSemaphore(value: 0).wait(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Counts `pending`, taken off the queue, as gone up (or removed).
    private func sent(_ pending: Pending, in state: inout State) {
        release(pending, in: &state)
        if pending.payload == nil { state.status.removedObjects += 1 } else {
            state.status.uploadedObjects += 1
            state.status.uploadedBytes += Int64(pending.byteCount)
        }
        if state.status.state != .failed { state.status.state = state.queue.isEmpty ? .current : .uploading }
    }

    /// Counts a failed try; a permanent one stops the replica. Returns whether it was
    /// transient (the object may be tried again).
    private func failed(with error: PipelineError, in state: inout State) -> Bool {
        state.status.failures += 1
        state.status.lastError = "\(error)"
        guard error.isTransient else {
            state.status.state = .failed
            state.stopped = true
            return false
        }
        state.status.state = .retrying
        return true
    }

    /// Tries the next segment put after `head`; when it goes up, `head` is tried once more, and
    /// given up as a gap when it fails again; both leave the queue. Returns whether the next
    /// went up.
    private func sendsPast(_ head: Pending) -> Bool {
        let next: Pending? = state.withLock { state in
            guard let index = state.queue.dropFirst().firstIndex(where: \.isMedia) else { return nil }
            let next = state.queue.remove(at: index)
            state.queue.insert(next, at: 0)
            state.sending = true
            return next
        }
        guard let next else { return false }
        let gaps = state.withLock { $0.gapNames }
        var failure: PipelineError?
        do throws(PipelineError) { try send(next, gaps: gaps) } catch { failure = error }
        // The store answers again: the head once more, so that a store that was down as a
        // whole and is back leaves no gap.
        var headSent = false
        if failure == nil {
            do throws(PipelineError) {
                try send(head, gaps: gaps)
                headSent = true
            } catch {}
        }
        return state.withLock { state in
            state.sending = false
            guard !state.abandoned else { return false }
            state.queue.removeFirst()
            if let failure {
                // Back behind the head.
                let index = state.queue.firstIndex(where: { $0.name == head.name && $0.payload != nil }).map { $0 + 1 } ?? 0
                state.queue.insert(next, at: index)
                _ = failed(with: failure, in: &state)
                return false
            }
            if let index = state.queue.firstIndex(where: { $0.name == head.name && $0.payload != nil }) {
                let removed = state.queue.remove(at: index)
                if headSent { sent(removed, in: &state) } else { release(removed, in: &state) }
            }
            if !headSent {
                state.status.gaps.append(head.name)
                state.gapNames.insert(head.name)
            }
            sent(next, in: &state)
            return true
        }
    }

    /// Sends `pending`: a removal, or a put whose bytes (a playlist's with `gaps` marked) are
    /// read from memory or the spool.
    private func send(_ pending: Pending, gaps: Set<String>) throws(PipelineError) {
        guard let payload = pending.payload else {
            try store.remove(pending.name)
            return
        }
        var bytes: [UInt8]
        switch payload {
        case .memory(let held): bytes = held
        case .spooled(let file):
            do {
                let source = try FileByteSource(regularFileAt: file)
                bytes = try source.read(at: 0, count: Int(source.byteCount))
            } catch {
                throw .stream(error)
            }
        }
        if !gaps.isEmpty, pending.name.hasSuffix(".m3u8") { bytes = Self.markingGaps(gaps, in: bytes, playlistName: pending.name) }
        try store.put(pending.name, bytes, attributes: pending.attributes)
    }

    /// The end of the thread: what is left is lost (counted already when the replica was given
    /// up); the spool directory goes.
    private func finishUp(_ state: inout State) {
        if !state.abandoned { state.status.lost += state.queue.filter(\.isMedia).map(\.name) }
        while let pending = state.queue.first {
            state.queue.removeFirst()
            release(pending, in: &state)
        }
        if let directory = state.spoolDirectory {
            UncommittedFiles.removeTree(directory)
            state.spoolDirectory = nil
        }
        state.finished = true
    }

    /// A media playlist's text with `EXT-X-GAP` before each segment URI in `gaps` and `GAP=YES`
    /// on each such `EXT-X-PART` (RFC 8216bis 4.4.4.7, 4.4.4.9), `EXT-X-VERSION` raised to 8
    /// when it is lower; names in `gaps` are relative to the store, URIs to `playlistName`'s
    /// directory.
    static func markingGaps(_ gaps: Set<String>, in bytes: [UInt8], playlistName: String) -> [UInt8] {
        let directory = playlistName.contains("/") ? String(playlistName[..<playlistName.lastIndex(of: "/")!]) + "/" : ""
        var lines: [String] = []
        var marked = false
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix("#"), !line.isEmpty, gaps.contains(directory + line), lines.last != "#EXT-X-GAP" {
                lines.append("#EXT-X-GAP")
                marked = true
            } else if line.hasPrefix("#EXT-X-PART:"), let uri = line.firstRange(of: "URI=\""), !line.contains("GAP=YES") {
                let rest = line[uri.upperBound...]
                if let end = rest.firstIndex(of: "\""), gaps.contains(directory + rest[..<end]) {
                    lines.append(String(line) + ",GAP=YES")
                    marked = true
                    continue
                }
            }
            lines.append(String(line))
        }
        guard marked else { return bytes }
        for (index, line) in lines.enumerated() where line.hasPrefix("#EXT-X-VERSION:") {
            if let version = Int(line.dropFirst("#EXT-X-VERSION:".count)), version < 8 { lines[index] = "#EXT-X-VERSION:8" }
        }
        return Array(lines.joined(separator: "\n").utf8)
    }
}
