internal import Synchronization
internal import Dispatch
internal import MediaCore

/// What a live rendition has published, for a server that answers blocking playlist reloads
/// (RFC 8216bis 6.2.5.2, `_HLS_msn` and `_HLS_part`): the current playlist, the media sequence
/// number of the segment being recorded, and its parts so far. ``HLSSegmentOutput`` publishes
/// after every playlist it writes; any number of requests wait for a segment or part at once.
///
/// `Sendable`: the state and the waiting requests are behind one mutex.
public final class LiveHLSPublication: Sendable {
    /// The answer to a playlist request.
    public enum Reload: Sendable, Equatable {
        /// The playlist, holding what was asked for (or all there will be).
        case ready(String)
        /// `_HLS_msn` is more than two segments past the last one, `_HLS_part` is more than the
        /// Advance Part Limit past the last part, or `_HLS_part` comes without `_HLS_msn`: HTTP 400.
        case tooFarAhead
        /// It did not come within three target durations: HTTP 503.
        case timedOut
        /// Nothing is published yet: HTTP 404.
        case notStarted
    }

    private struct Waiter {
        var segment: Int
        var part: Int?
        var continuation: CheckedContinuation<Reload, Never>
    }

    private struct State {
        var playlist: HLSMediaPlaylist?
        var text = ""
        /// The media sequence number of the segment being recorded (the last whole one + 1).
        var openSegment = 0
        /// Parts of that segment published.
        var openParts = 0
        /// The media sequence number of the first segment listed, and each listed segment's parts.
        var firstSegment = 0
        var partCounts: [Int] = []
        /// The playlist's PART-TARGET, if it has parts.
        var partTarget: Double?
        var ended = false
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    /// An empty publication.
    public init() {}

    /// Publishes `playlist` and answers the requests it satisfies.
    public func publish(_ playlist: HLSMediaPlaylist) {
        let ready: [(CheckedContinuation<Reload, Never>, Reload)] = state.withLock { state in
            state.playlist = playlist
            state.text = playlist.text
            state.openSegment = playlist.mediaSequence + playlist.segments.count
            state.openParts = playlist.openParts.count
            state.firstSegment = playlist.mediaSequence
            state.partCounts = playlist.segments.map(\.parts.count)
            state.partTarget = playlist.partTarget
            state.ended = playlist.isEnded
            var answered: [(CheckedContinuation<Reload, Never>, Reload)] = []
            for (id, waiter) in state.waiters where Self.holds(state, segment: waiter.segment, part: waiter.part) {
                answered.append((waiter.continuation, .ready(state.text)))
                state.waiters[id] = nil
            }
            return answered
        }
        for (continuation, answer) in ready { continuation.resume(returning: answer) }
    }

    /// The playlist now, or once it holds segment `segment` (with `part`: that part of it), or
    /// after `timeout`. A request without `segment` is answered at once.
    public func playlist(segment: Int?, part: Int?, timeout: Duration) async -> Reload {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        // A request whose task is cancelled (its client gone) stops waiting at once.
        return await withTaskCancellationHandler {
            await wait(id: id, segment: segment, part: part, timeout: timeout)
        } onCancel: { [self] in
            let waiter = state.withLock { state in state.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: .timedOut)
        }
    }

    /// At most this many requests wait at once; more are answered as timed out (503) at once.
    /// It bounds the memory held requests take (a continuation and a timer each), whatever the
    /// number of clients; the preload-hinted part's waiters count too.
    public static let maximumWaitingRequests = 4096

    /// How many requests wait now (at most ``maximumWaitingRequests``).
    public var waitingRequests: Int { state.withLock { $0.waiters.count } }

    private func wait(id: Int, segment: Int?, part: Int?, timeout: Duration) async -> Reload {
        await withCheckedContinuation { (continuation: CheckedContinuation<Reload, Never>) in
            let immediate: Reload? = state.withLock { state in
                guard !Task.isCancelled else { return .timedOut }
                guard state.playlist != nil else { return .notStarted }
                // RFC 8216bis 6.2.5.2: an ended playlist ignores the request's parameters; a
                // part without a segment, or more than two segments past the last, is an error.
                guard !state.ended, let segment else { return part != nil && !state.ended ? .tooFarAhead : .ready(state.text) }
                if segment > state.openSegment + 1 || Self.exceedsAdvancePartLimit(state, segment: segment, part: part) { return .tooFarAhead }
                if Self.holds(state, segment: segment, part: part) { return .ready(state.text) }
                guard state.waiters.count < Self.maximumWaitingRequests else { return .timedOut }
                state.waiters[id] = Waiter(segment: segment, part: part, continuation: continuation)
                return nil
            }
            if let immediate {
                continuation.resume(returning: immediate)
                return
            }
            ThreadBridge.resume(after: timeout) { [self] in
                let waiter = state.withLock { state in state.waiters.removeValue(forKey: id) }
                waiter?.continuation.resume(returning: .timedOut)
            }
        }
    }

    /// Whether part `part` of segment `segment` lies more than the Advance Part Limit past the last
    /// part published (RFC 8216bis 6.2.5.2): 3 ÷ PART-TARGET parts when PART-TARGET is under a
    /// second, else 3. A segment's parts beyond those published are counted as many as the
    /// most any listed segment has (at least those published, at least one): never more than it
    /// will have, so a request is never refused early.
    private static func exceedsAdvancePartLimit(_ state: State, segment: Int, part: Int?) -> Bool {
        guard let part, let partTarget = state.partTarget, partTarget > 0, segment >= state.openSegment else { return false }
        let limit = partTarget < 1 ? Int((3 / partTarget).rounded(.down)) : 3
        // How many parts past the last published one: 1 for the next part (the preload hint).
        var ahead = part - state.openParts + 1
        if segment > state.openSegment {
            let perSegment = max(state.partCounts.max() ?? 0, state.openParts, 1)
            ahead += perSegment * (segment - state.openSegment)
        }
        return ahead > limit
    }

    /// Whether the playlist holds segment `segment` whole (or, with `part`, part `part` of it,
    /// counted from 0), or will hold nothing more.
    private static func holds(_ state: State, segment: Int, part: Int?) -> Bool {
        if state.ended { return true }
        var (segment, part) = (segment, part)
        // A part past the last of a whole segment is the first of the next (RFC 8216bis 6.2.5.2).
        while let asked = part, segment < state.openSegment, segment >= state.firstSegment,
              segment - state.firstSegment < state.partCounts.count, asked >= state.partCounts[segment - state.firstSegment] {
            segment += 1
            part = 0
        }
        if segment < state.openSegment { return true }
        guard segment == state.openSegment, let part else { return false }
        return part < state.openParts
    }

    /// Waits (at most `timeout`) until part `part` of segment `segment` is published; whether
    /// it was. For a request of the preload-hinted part (RFC 8216bis 6.2.6).
    public func waitForPart(segment: Int, part: Int, timeout: Duration) async -> Bool {
        if case .ready = await playlist(segment: segment, part: part, timeout: timeout) { return true }
        return false
    }

    /// The target duration of the playlist published, in seconds (for the 503 timeout).
    public var targetDuration: Int { state.withLock { $0.playlist?.targetDuration ?? 6 } }
}
