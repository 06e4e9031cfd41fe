import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import KeyFrameKit
import MediaValidation

/// The one schema of metadata as stream events, a JSON object per line, read by
/// `record --metadata-from`, `publish --metadata-from` and `package --ad-breaks`:
///
/// | line | fields |
/// |---|---|
/// | a title change | `{"at": SECONDS or "wallclock": ISO-8601, "title", "artist", "album", "url"}` |
/// | an ad break | `{"start": SECONDS, "duration": SECONDS, "id", "uri"}` |
///
/// Seconds count from the stream's first sample. A live title change without `at` or
/// `wallclock` applies when it is read; a live ad break without `start` starts when it is read.
/// Blank lines and lines starting with `#` are skipped.
enum StreamEventLine: Equatable {
    /// What plays from a moment on.
    case titleChange(NowPlaying, at: When)
    /// An ad break.
    case adBreak(start: When, duration: Double, id: String?, uri: String?)

    /// Where a line puts its event.
    enum When: Equatable {
        /// Seconds from the stream's first sample.
        case seconds(Double)
        /// A wall-clock time, seconds since 1970 (UTC).
        case wallClock(Double)
        /// When the line is read (live only).
        case now
    }

    static let titleFields: Set<String> = ["at", "wallclock", "title", "artist", "album", "url"]
    static let adBreakFields: Set<String> = ["start", "duration", "id", "uri"]

    /// The event of one line; `nil` for a blank line or a comment.
    ///
    /// - Throws: ``CommandFailure`` (a usage error) naming what is wrong: not a JSON object, a
    ///   field of neither kind or of both, a value of the wrong type, a time that is negative or
    ///   not finite.
    static func parse(_ line: String) throws -> StreamEventLine? {
        let trimmed = line.trimmingSpaces
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { return nil }
        guard let object = try? JSONDecoder().decode([String: Field].self, from: Data(trimmed.utf8)) else {
            throw CommandFailure("not a JSON object of strings and numbers", status: .usage)
        }
        let keys = Set(object.keys)
        if let unknown = keys.subtracting(titleFields).subtracting(adBreakFields).sorted().first {
            throw CommandFailure("\"\(unknown)\" is not a field: a title change has \(titleFields.sorted().joined(separator: ", ")); "
                                 + "an ad break has \(adBreakFields.sorted().joined(separator: ", "))", status: .usage)
        }
        func seconds(_ key: String) throws -> Double? {
            guard let value = object[key] else { return nil }
            guard case .number(let number) = value, number.isFinite, number >= 0, number < 1e9 else {
                throw CommandFailure("\"\(key)\" must be a number of seconds" + (key == "duration" ? " above 0" : ", 0 or more"), status: .usage)
            }
            return number
        }
        func text(_ key: String) throws -> String? {
            guard let value = object[key] else { return nil }
            guard case .string(let string) = value else { throw CommandFailure("\"\(key)\" must be a string", status: .usage) }
            return string
        }
        if keys.contains("duration") || keys.contains("start") {
            if let mixed = keys.intersection(titleFields).sorted().first {
                throw CommandFailure("\"\(mixed)\" belongs to a title change, and \"duration\" to an ad break: give one per line", status: .usage)
            }
            guard let duration = try seconds("duration"), duration > 0 else {
                throw CommandFailure("an ad break needs \"duration\", a number of seconds above 0", status: .usage)
            }
            return .adBreak(start: try seconds("start").map(When.seconds) ?? .now, duration: duration, id: try text("id"), uri: try text("uri"))
        }
        guard keys.subtracting(["at", "wallclock"]).isEmpty == false else {
            throw CommandFailure("a title change needs \"title\", \"artist\", \"album\" or \"url\"", status: .usage)
        }
        if let mixed = keys.intersection(adBreakFields).sorted().first {
            throw CommandFailure("\"\(mixed)\" belongs to an ad break, which needs \"duration\"", status: .usage)
        }
        var when = When.now
        if let at = try seconds("at") { when = .seconds(at) }
        if let wallclock = try text("wallclock") {
            guard when == .now else { throw CommandFailure("give \"at\" or \"wallclock\", not both", status: .usage) }
            guard let date = HLSPlaylistDocument.dateTimeSeconds(wallclock) else {
                throw CommandFailure("\"wallclock\" \"\(wallclock)\" is not an ISO-8601 date-time (2026-11-30T21:15:00Z)", status: .usage)
            }
            when = .wallClock(date)
        }
        return .titleChange(NowPlaying(title: try text("title"), artist: try text("artist"), album: try text("album"), url: try text("url")), at: when)
    }

    /// The stream events of this line at `time` (a title change's ID3 tag; an ad break's
    /// start and end markers, named `id` or `ad-N` with N `number`).
    func events(at time: MediaTime, number: Int) throws -> [StreamEvent] {
        switch self {
        case .titleChange(let playing, _):
            return [.timedMetadata(.nowPlaying(playing, at: time))]
        case .adBreak(_, let duration, let id, let uri):
            let length = Self.time(duration)
            return try StreamMarker.adBreak(start: time, duration: length, id: id ?? "ad-\(number)", uri: uri).map(StreamEvent.marker)
        }
    }

    /// A line's seconds as a time, to the millisecond.
    static func time(_ seconds: Double) -> MediaTime {
        MediaTime(value: Int64((seconds * 1000).rounded()), timescale: 1000)
    }

    /// Where the line puts its event.
    var when: When {
        switch self {
        case .titleChange(_, let at): at
        case .adBreak(let start, _, _, _): start
        }
    }

    /// Every line of `text` (a sidecar read whole), numbered from 1; a bad line is an error
    /// naming `source` and its number.
    static func lines(of text: String, source: String) throws -> [StreamEventLine] {
        var parsed: [StreamEventLine] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            do {
                if let event = try parse(String(line)) { parsed.append(event) }
            } catch let failure as CommandFailure {
                throw CommandFailure("\(source), line \(index + 1): \(failure.description)", status: failure.status)
            }
        }
        return parsed
    }
}

extension StreamEventLine {
    /// A line's value: a string or a number.
    enum Field: Decodable, Equatable {
        case string(String)
        case number(Double)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }
}

/// Follows `--metadata-from PATH|-` for a live job: what the file holds when the job starts is
/// told before the first sample; lines added later (or typed on standard input) are told as
/// they come, until ``stop()``. A bad line is a warning naming it, and is skipped: a live
/// stream does not stop for a typo.
///
/// `Sendable` because it is synchronized: its state is behind a mutex.
final class StreamEventFollower: Sendable {
    private struct State {
        var stopped = false
        var lineNumber = 0
        var eventNumber = 0
        /// Lines by the wall clock told before the first frame was captured.
        var waiting: [(line: StreamEventLine, number: Int, date: Double)] = []
        var partial: [UInt8] = []
        /// The ad-break IDs told, so that a second break of one ID is refused.
        var adBreakIDs: Set<String> = []
    }

    /// The longest line read: a longer one is dropped whole.
    static let maximumLineLength = 64 << 10

    private let source: String
    private let descriptor: Int32
    private let announce: @Sendable ([StreamEvent]) -> Void
    private let streamTime: @Sendable () -> MediaTime
    private let wallClock: @Sendable (Double) -> MediaTime?
    private let acceptsAdBreaks: Bool
    private let state = Mutex(State())

    /// A follower of `source` (a path, or `-` for standard input); a file's lines so far are
    /// read now. Without `acceptsAdBreaks`, an ad break is a warning and skipped (a job that
    /// carries none: `publish`).
    init(source: String, acceptsAdBreaks: Bool = true, announce: @escaping @Sendable ([StreamEvent]) -> Void,
         streamTime: @escaping @Sendable () -> MediaTime, wallClock: @escaping @Sendable (Double) -> MediaTime?) throws {
        self.source = source
        self.acceptsAdBreaks = acceptsAdBreaks
        self.announce = announce
        self.streamTime = streamTime
        self.wallClock = wallClock
        if source == "-" {
            descriptor = 0
        } else {
            descriptor = open(source, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw CommandFailure("--metadata-from \(source): cannot be opened (\(String(cString: strerror(errno))))", status: .unreadableInput)
            }
            // What the file holds now, before the first sample (a last line without its newline too).
            while let chunk = readChunk(), !chunk.isEmpty { take(chunk) }
            takeUnendedLine()
        }
    }

    deinit {
        if descriptor > 0 { close(descriptor) }
    }

    /// Starts following on a thread of its own.
    func start() {
        let thread = DispatchQueue(label: "metadata-from")
        thread.async { [self] in follow() }
    }

    /// Stops following (a file's within a tenth of a second; standard input's at its next line).
    func stop() {
        state.withLock { $0.stopped = true }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// The next bytes, empty at the end for now, `nil` on an error.
    private func readChunk() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 4096) }
        guard count >= 0 else { return errno == EINTR ? [] : nil }
        return Array(buffer.prefix(count))
    }

    private func follow() {
        while !isStopped {
            guard let chunk = readChunk() else { return }
            if chunk.isEmpty {
                // Standard input ended (its last line told, newline or not); a file may grow.
                if source == "-" {
                    takeUnendedLine()
                    return
                }
                usleep(100_000)
            } else {
                take(chunk)
            }
            resolveWaiting()
        }
    }

    /// Tells what follows the last newline when it reads as a whole line (a file or input that
    /// does not end with a newline); a line cut mid-way waits for the rest.
    private func takeUnendedLine() {
        let line = state.withLock { state -> (String, Int)? in
            let text = String(decoding: state.partial, as: UTF8.self)
            guard !state.partial.isEmpty, (try? StreamEventLine.parse(text)) != nil else { return nil }
            state.partial = []
            state.lineNumber += 1
            return (text, state.lineNumber)
        }
        if let (text, number) = line { tell(text, lineNumber: number) }
    }

    private func take(_ bytes: [UInt8]) {
        let lines = state.withLock { state -> [(String, Int)] in
            state.partial += bytes
            if state.partial.count > Self.maximumLineLength, !state.partial.contains(UInt8(ascii: "\n")) {
                // A line that long is no event: dropped, and the next line read whole.
                state.partial = []
            }
            var lines: [(String, Int)] = []
            while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                state.lineNumber += 1
                lines.append((String(decoding: state.partial[..<newline], as: UTF8.self), state.lineNumber))
                state.partial.removeSubrange(...newline)
            }
            return lines
        }
        for (line, number) in lines { tell(line, lineNumber: number) }
    }

    private func tell(_ text: String, lineNumber: Int) {
        let parsed: StreamEventLine
        do {
            guard let line = try StreamEventLine.parse(text) else { return }
            parsed = line
        } catch {
            Terminal.warning("--metadata-from \(source), line \(lineNumber): \(error); skipped")
            return
        }
        if case .adBreak(_, _, let id, _) = parsed {
            guard acceptsAdBreaks else {
                Terminal.warning("--metadata-from \(source), line \(lineNumber): an ad break; this job carries title changes only; skipped")
                return
            }
            if let id, !state.withLock({ $0.adBreakIDs.insert(id).inserted }) {
                Terminal.warning("--metadata-from \(source), line \(lineNumber): a second ad break \"\(id)\"; each needs an ID of its own; skipped")
                return
            }
        }
        let number = state.withLock { state -> Int in
            state.eventNumber += 1
            return state.eventNumber
        }
        switch parsed.when {
        case .seconds(let seconds): post(parsed, at: StreamEventLine.time(seconds), number: number)
        case .now: post(parsed, at: streamTime(), number: number)
        case .wallClock(let date):
            if let time = wallClock(date) {
                post(parsed, at: time, number: number)
            } else {
                state.withLock { $0.waiting.append((parsed, number, date)) }
            }
        }
    }

    private func resolveWaiting() {
        let ready = state.withLock { state -> [(StreamEventLine, Int, MediaTime)] in
            var ready: [(StreamEventLine, Int, MediaTime)] = []
            state.waiting.removeAll { entry in
                guard let time = wallClock(entry.date) else { return false }
                ready.append((entry.line, entry.number, time.value < 0 ? MediaTime(value: 0, timescale: 1000) : time))
                return true
            }
            return ready
        }
        for (line, number, time) in ready { post(line, at: time, number: number) }
    }

    private func post(_ line: StreamEventLine, at time: MediaTime, number: Int) {
        do { announce(try line.events(at: time, number: number)) } catch {
            Terminal.warning("--metadata-from \(source): event \(number): \(error); skipped")
        }
    }
}
