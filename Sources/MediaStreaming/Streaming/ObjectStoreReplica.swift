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
///   that long while other requests go through is dropped and counted (an object left in the
///   store harms no one); while the store is down as a whole, removals wait like the rest. Init segments, playlists
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
/// - **Renditions in parallel.** Objects in a directory of their own (a ladder's `64k/…`) go up
///   in a lane of that directory, on a thread and a kept-alive connection of its own, so that
///   the renditions go up side by side, each in its order. An object at the top (a master
///   playlist, the player page) waits until everything queued before it in every lane has gone
///   up, so that a master never precedes the rendition playlists it names.
///
/// Departure from Akamai's recommendations: a playlist is retried like any other object (with
/// the same growing delay) rather than at a fixed interval.
///
/// `Sendable` because it is synchronized: its state is behind a mutex, and only its lanes'
/// threads send requests.
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
        /// Removals given up after failing alone for ``ObjectStoreReplica/gapAfter`` while other
        /// requests went through: those objects stay in the store.
        public var droppedRemovals = 0
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
        /// When it was queued, among every lane's objects.
        var sequence = 0
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

    /// The objects of one directory (``lane(of:)``), sent one after another by a thread of its
    /// own.
    private struct Lane: Sendable {
        var queue: [Pending] = []
        /// Whether the first of ``queue`` is being sent (it is not dropped or replaced then).
        var sending = false
        /// Whether the last try of the lane failed transiently.
        var retrying = false
        /// Signalled when an object is queued in the lane, another lane sent one (the top lane
        /// may wait for it), or the replica is told to finish.
        let wake = DispatchSemaphore(value: 0)
    }

    private struct State: Sendable {
        var lanes: [String: Lane] = [:]
        /// The lanes whose threads run.
        var running = 0
        /// The ``Pending/sequence`` of the next object queued.
        var nextSequence = 0
        var status = Status()
        /// When a request last went through.
        var lastSuccess: ContinuousClock.Instant?
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
    /// Signalled once when the last lane's thread ends.
    private let ended = DispatchSemaphore(value: 0)

    /// A replica into `store`, the thread of its top lane started: at most `spoolLimit` bytes
    /// queued in all its lanes (1 GB by default), an object failing alone given up after
    /// `gapAfter` (6 s by default: set it to the target duration).
    public init(store: any ObjectStore, spoolLimit: Int64 = 1_000_000_000, gapAfter: Duration = .seconds(6), memoryLimit: Int = 8 << 20) {
        self.store = store
        self.spoolLimit = spoolLimit
        self.gapAfter = gapAfter
        self.memoryLimit = memoryLimit
        state.withLock { startLane("", in: &$0) }
    }

    /// The lane an object goes up in: its name's first directory (`64k` of `64k/segment-1.m4s`),
    /// or `""` (the top lane) for a name without one.
    static func lane(of name: String) -> String {
        name.firstIndex(of: "/").map { String(name[..<$0]) } ?? ""
    }

    /// Makes the lane `key` and starts its thread, unless it is there.
    private func startLane(_ key: String, in state: inout State) {
        guard state.lanes[key] == nil else { return }
        state.lanes[key] = Lane()
        state.running += 1
        DispatchQueue(label: "KeyFrameKit.ObjectStoreReplica \(store.description) \(key)").async { self.run(lane: key) }
    }

    /// Wakes every lane's thread.
    private func wakeAll() {
        for lane in state.withLock({ Array($0.lanes.values) }) { lane.wake.signal() }
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
        let key = Self.lane(of: name)
        let wake: DispatchSemaphore? = state.withLock { state in
            guard !state.stopped, !state.finishing else {
                if case .spooled(let file) = payload { try? FileSystemCalls.unlink(file) }
                return nil
            }
            startLane(key, in: &state)
            var lane = state.lanes[key]!
            var following: [Pending] = []
            var sequence = state.nextSequence
            if Self.isManifest(name) {
                let replaced = replace(name, in: &lane, state: &state)
                following = replaced.following
                sequence = replaced.sequence ?? sequence
            }
            if case .spooled = payload { state.status.spooledBytes += Int64(bytes.count) } else { state.memoryBytes += bytes.count }
            lane.queue.append(Pending(name: name, sequence: sequence, payload: payload, byteCount: bytes.count, attributes: attributes))
            lane.queue += following
            state.lanes[key] = lane
            state.nextSequence += 1
            state.status.backlogObjects += 1
            state.status.backlogBytes += Int64(bytes.count)
            if state.status.state == .current { state.status.state = .uploading }
            return lane.wake
        }
        wake?.signal()
    }

    /// Queues the removal of the object `name`, after everything queued before; a put of it
    /// still waiting is dropped unsent. Returns at once.
    public func remove(_ name: String) {
        let key = Self.lane(of: name)
        let wake: DispatchSemaphore? = state.withLock { state in
            guard !state.stopped, !state.finishing else { return nil }
            startLane(key, in: &state)
            var lane = state.lanes[key]!
            drop(name, from: &lane, state: &state)
            lane.queue.append(Pending(name: name, sequence: state.nextSequence, payload: nil, byteCount: 0, attributes: ObjectAttributes()))
            state.lanes[key] = lane
            state.nextSequence += 1
            state.status.backlogObjects += 1
            if state.status.state == .current { state.status.state = .uploading }
            return state.lanes[key]!.wake
        }
        wake?.signal()
    }

    /// Waits until everything queued has gone up, or the store refused for good, or `timeout`
    /// has passed (what is left is then given up and counted in ``Status/lost``); then the
    /// spool directory is removed. Nothing can be queued after. Returns the status at the end.
    @discardableResult
    public func finish(within timeout: Duration = .seconds(300)) -> Status {
        state.withLock { $0.finishing = true }
        wakeAll()
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
            state.status.lost += state.lanes.values.flatMap(\.queue).filter(\.isMedia).map(\.name)
            if let directory = state.spoolDirectory {
                UncommittedFiles.removeTree(directory)
                state.spoolDirectory = nil
            }
        }
        wakeAll()
    }

    /// Whether `name` is a playlist or manifest: the newest replaces one waiting, and it may
    /// name gaps.
    static func isManifest(_ name: String) -> Bool { name.hasSuffix(".m3u8") || name.hasSuffix(".mpd") }

    /// Whether `name` is a segment or a part (`.m4s`, packed audio's `.aac`): what a playlist
    /// can mark as a gap. An init segment, a playlist or a page is not.
    static func isMedia(_ name: String) -> Bool { name.hasSuffix(".m4s") || name.hasSuffix(".aac") }

    /// Drops the waiting playlist `name` (not the one being sent), if there is one, and takes
    /// out the playlists and pages queued after it, to go behind the new one in their order;
    /// returns them and the sequence of the one dropped, which the new one takes, so that a
    /// master queued after the old one still waits for the new one.
    private func replace(_ name: String, in lane: inout Lane, state: inout State) -> (following: [Pending], sequence: Int?) {
        let first = lane.sending ? 1 : 0
        guard first < lane.queue.count, let index = lane.queue[first...].firstIndex(where: { $0.name == name && $0.payload != nil }) else {
            return ([], nil)
        }
        let replaced = lane.queue.remove(at: index)
        release(replaced, in: &state)
        var following: [Pending] = []
        var kept = Array(lane.queue[..<index])
        for pending in lane.queue[index...] {
            if pending.payload != nil, pending.isManifest || pending.name.hasSuffix(".html") { following.append(pending) } else { kept.append(pending) }
        }
        lane.queue = kept
        return (following, replaced.sequence)
    }

    /// Drops the waiting puts and removals of `name` (not the one being sent): a removal queued
    /// after them does their work (a playlist's replacement is ``replace(_:in:)``).
    private func drop(_ name: String, from lane: inout Lane, state: inout State) {
        let first = lane.sending ? 1 : 0
        guard first < lane.queue.count else { return }
        var kept: [Pending] = Array(lane.queue[..<first])
        for pending in lane.queue[first...] {
            if pending.name == name { release(pending, in: &state) } else { kept.append(pending) }
        }
        lane.queue = kept
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

    /// A lane's thread: sends the first of the lane's queue until it goes up (or is given up),
    /// then the next; the top lane's first waits while another lane holds an object queued
    /// before it. The last thread to end finishes the replica up.
    private func run(lane key: String) {
        var delay = Duration.milliseconds(500)
        while true {
            enum Next { case send(Pending), wait(DispatchSemaphore, Duration?), end }
            let next: Next = state.withLock { state in
                let lane = state.lanes[key]!
                if state.stopped || (lane.queue.isEmpty && state.finishing) {
                    state.running -= 1
                    if state.running == 0 { finishUp(&state) }
                    return .end
                }
                guard let first = lane.queue.first else { return .wait(lane.wake, nil) }
                if key.isEmpty, state.lanes.contains(where: { $0.key != key && $0.value.queue.contains { $0.sequence < first.sequence } }) {
                    // Woken when another lane sends; the timeout is a safeguard.
                    return .wait(lane.wake, .milliseconds(100))
                }
                state.lanes[key]!.sending = true
                return .send(first)
            }
            let head: Pending
            switch next {
            case .end:
                if state.withLock({ $0.finished }) { ended.signal() }
                return
            case .wait(let wake, let timeout):
                if let timeout { _ = wake.wait(for: timeout) } else { wake.wait() }
                continue
            case .send(let pending):
                head = pending
            }
            let attempted = ContinuousClock.now
            let gaps = state.withLock { $0.gapNames }
            do throws(PipelineError) {
                try send(head, gaps: gaps)
                let top: DispatchSemaphore? = state.withLock { state in
                    state.lanes[key]!.sending = false
                    guard !state.abandoned else { return nil }
                    state.lanes[key]!.queue.removeFirst()
                    state.lanes[key]!.retrying = false
                    sent(head, in: &state)
                    return key.isEmpty ? nil : state.lanes[""]?.wake
                }
                top?.signal()
                delay = .milliseconds(500)
            } catch {
                let givesUp: Bool = state.withLock { state in
                    state.lanes[key]!.sending = false
                    guard !state.abandoned, failed(with: error, in: &state) else { return false }
                    state.lanes[key]!.retrying = true
                    let since = state.lanes[key]!.queue[0].failingSince ?? attempted
                    state.lanes[key]!.queue[0].failingSince = since
                    guard since.duration(to: .now) >= gapAfter else { return false }
                    if head.payload == nil {
                        // A removal failing that long while other requests go through is dropped;
                        // a store down as a whole is waited for.
                        guard let success = state.lastSuccess, success > since else {
                            // The next object of another name is tried first: whether it goes
                            // through says whether the store answers.
                            var queue = state.lanes[key]!.queue
                            if queue.count > 1, queue[1].name != head.name {
                                queue.swapAt(0, 1)
                                state.lanes[key]!.queue = queue
                                return true
                            }
                            return false
                        }
                        release(state.lanes[key]!.queue.removeFirst(), in: &state)
                        state.status.droppedRemovals += 1
                        state.lanes[key]!.retrying = false
                        refreshState(&state)
                        return true
                    }
                    return head.isMedia
                }
                if givesUp, head.payload == nil || nextSegmentWentUp(after: head, in: key) {
                    delay = .milliseconds(500)
                    continue
                }
                if state.withLock({ $0.stopped }) { continue }
                _ = DispatchSemaphore(value: 0).wait(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Counts `pending`, taken off its lane's queue, as gone up (or removed).
    private func sent(_ pending: Pending, in state: inout State) {
        state.lastSuccess = .now
        release(pending, in: &state)
        if pending.payload == nil { state.status.removedObjects += 1 } else {
            state.status.uploadedObjects += 1
            state.status.uploadedBytes += Int64(pending.byteCount)
        }
        refreshState(&state)
    }

    /// The state from the lanes: retrying while one is, else uploading or current by the
    /// backlog (a failed replica stays failed).
    private func refreshState(_ state: inout State) {
        guard state.status.state != .failed else { return }
        state.status.state = state.lanes.values.contains(where: \.retrying) ? .retrying : state.status.backlogObjects == 0 ? .current : .uploading
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

    /// Tries the next segment put after `head` in the lane `key`; when it goes up, `head` is
    /// tried once more, and given up as a gap when it fails again; both leave the queue.
    /// Returns whether the next went up.
    private func nextSegmentWentUp(after head: Pending, in key: String) -> Bool {
        let next: Pending? = state.withLock { state in
            guard let index = state.lanes[key]!.queue.dropFirst().firstIndex(where: \.isMedia) else { return nil }
            let next = state.lanes[key]!.queue.remove(at: index)
            state.lanes[key]!.queue.insert(next, at: 0)
            state.lanes[key]!.sending = true
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
            state.lanes[key]!.sending = false
            guard !state.abandoned else { return false }
            var queue = state.lanes[key]!.queue
            defer { state.lanes[key]!.queue = queue }
            queue.removeFirst()
            if let failure {
                // Back behind the head.
                let index = queue.firstIndex(where: { $0.name == head.name && $0.payload != nil }).map { $0 + 1 } ?? 0
                queue.insert(next, at: index)
                _ = failed(with: failure, in: &state)
                return false
            }
            if let index = queue.firstIndex(where: { $0.name == head.name && $0.payload != nil }) {
                let removed = queue.remove(at: index)
                if headSent { sent(removed, in: &state) } else { release(removed, in: &state) }
            }
            if !headSent {
                state.status.gaps.append(head.name)
                state.gapNames.insert(head.name)
            }
            state.lanes[key]!.retrying = false
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

    /// The end of the last thread: what is left is lost (counted already when the replica was
    /// given up); the spool directory goes.
    private func finishUp(_ state: inout State) {
        let left = state.lanes.values.flatMap(\.queue)
        if !state.abandoned { state.status.lost += left.filter(\.isMedia).map(\.name) }
        for pending in left { release(pending, in: &state) }
        for key in state.lanes.keys { state.lanes[key]!.queue = [] }
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
