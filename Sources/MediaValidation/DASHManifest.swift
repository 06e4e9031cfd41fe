internal import XMLReader
/// An MPEG-DASH Media Presentation Description (ISO/IEC 23009-1, clause 5.3), as `keyframe
/// validate` reads it: the presentation's type and length, its Periods, their audio and video
/// Adaptation Sets and Representations, and each Representation's segment addressing by
/// `SegmentTemplate` (5.3.9.4), with or without a `SegmentTimeline` (5.3.9.6).
///
/// The MPD is read with `XMLElementTree` (a bounded XML 1.0 reader of our own, in pure Swift):
/// malformed XML, a root element other than `MPD`, entity declarations, and attributes whose
/// values are not what the schema allows are refused with the element and its line. Attributes and
/// elements this reader does not model are skipped, as are elements in other namespaces than the
/// MPD's.
///
/// `SegmentBase` and `SegmentList` addressing (5.3.9.2, 5.3.9.3) are not read: a Representation
/// that uses them says so in ``Representation/unsupportedAddressing``.
public struct DASHManifest: Sendable, Hashable {
    /// `MPD@type` (5.3.1.2): whether the presentation is complete or still being written.
    public enum PresentationType: String, Sendable, Hashable {
        /// `static`: on demand; every segment exists.
        case `static`
        /// `dynamic`: live; segments appear over time and the MPD may be updated.
        case dynamic
    }

    /// `MPD@type`; `static` when absent.
    public var type: PresentationType
    /// `MPD@mediaPresentationDuration` in seconds: the whole presentation's length, when given.
    public var mediaPresentationDuration: Double?
    /// `MPD@minBufferTime` in seconds (mandatory in the schema, `nil` when missing).
    public var minBufferTime: Double?
    /// `MPD@profiles`: the profile URNs (8.1), in order; `urn:mpeg:dash:profile:isoff-live:2011` for
    /// the live profile.
    public var profiles: [String]
    /// The MPD's first `BaseURL` (5.6), as written (not resolved).
    public var baseURL: String?
    /// The Periods (5.3.2), in document order.
    public var periods: [Period]

    /// The most segments ``segments(of:in:)`` lists for one Representation; a timeline or a
    /// duration that implies more is refused rather than expanded.
    public static let maximumSegmentCount = 1_000_000

    /// The longest name ``expand(_:representationID:number:time:bandwidth:)`` writes, in UTF-8
    /// bytes; a longer one is refused.
    public static let maximumNameLength = 65_536

    /// A `Period` (5.3.2): an interval of the presentation with its own Adaptation Sets.
    public struct Period: Sendable, Hashable {
        /// `Period@id`.
        public var id: String?
        /// `Period@start` in seconds from the presentation's start, when given.
        public var start: Double?
        /// `Period@duration` in seconds, when given (see ``DASHManifest/duration(of:)`` for the
        /// length implied by the next Period or the presentation's length).
        public var duration: Double?
        /// The Period's first `BaseURL`, as written.
        public var baseURL: String?
        /// The Adaptation Sets, in document order.
        public var adaptationSets: [AdaptationSet]
        /// The line on which the `Period` start tag ends (where a SAX parser reports it).
        public var line: Int
        /// The length the Period's neighbours imply when it has no `@duration`, set by the parse:
        /// the next Period's start less its own, or the presentation's length less its start.
        var impliedDuration: Double?
    }

    /// An `AdaptationSet` (5.3.3): interchangeable encodings of one content component.
    public struct AdaptationSet: Sendable, Hashable {
        /// `AdaptationSet@id`.
        public var id: String?
        /// `AdaptationSet@contentType` (`audio`, `video`, `text`, …).
        public var contentType: String?
        /// `@mimeType` on the Adaptation Set (5.3.7, common attributes): `audio/mp4`.
        public var mimeType: String?
        /// `@codecs` on the Adaptation Set: the RFC 6381 codec string (`mp4a.40.2`).
        public var codecs: String?
        /// `@audioSamplingRate` on the Adaptation Set in hertz (the first value of a pair).
        public var audioSamplingRate: Int?
        /// The Adaptation Set's `AudioChannelConfiguration` (5.8.4.7) as a channel count: its
        /// `@value` in the 23003-3 scheme (`2` for stereo), or the count of a CICP
        /// ChannelConfiguration index (ISO/IEC 23091-3); `nil` for another scheme (Dolby's
        /// `F801`).
        public var channelConfiguration: String?
        /// `@segmentAlignment` (5.3.3.2): `true`, or an unsigned integer (alignment within a
        /// group of sets), means the Representations' segments are aligned; absent or `false`
        /// means not.
        public var segmentAlignment: Bool
        /// The Representations, in document order.
        public var representations: [Representation]
        /// The Adaptation Set's first `BaseURL`, as written.
        public var baseURL: String?
        /// The line on which the `AdaptationSet` start tag ends (where a SAX parser reports it).
        public var line: Int
    }

    /// A `Representation` (5.3.5): one encoding, with the attributes it inherits from its
    /// Adaptation Set and Period already applied.
    public struct Representation: Sendable, Hashable {
        /// `Representation@id` (mandatory): what `$RepresentationID$` expands to.
        public var id: String
        /// `Representation@bandwidth` in bits per second: what `$Bandwidth$` expands to.
        public var bandwidth: Int?
        /// `@codecs`: the Representation's own, or its Adaptation Set's.
        public var codecs: String?
        /// `@mimeType`: the Representation's own, or its Adaptation Set's.
        public var mimeType: String?
        /// `@audioSamplingRate` in hertz: the Representation's own, or its Adaptation Set's.
        public var audioSamplingRate: Int?
        /// The `AudioChannelConfiguration` as a channel count (as the Adaptation Set's): the
        /// Representation's own, or its Adaptation Set's.
        public var channelConfiguration: String?
        /// The Representation's first `BaseURL`, as written (the Adaptation Set's, Period's and
        /// MPD's are not prepended).
        public var baseURL: String?
        /// The `SegmentTemplate` that applies (5.3.9.1): each attribute, and the
        /// `SegmentTimeline`, from the Representation's own template, else the Adaptation Set's,
        /// else the Period's; `nil` when none of them has one.
        public var segmentTemplate: SegmentTemplate?
        /// Why the Representation's segments cannot be listed from this reader, when its
        /// addressing is `SegmentBase` or `SegmentList` (neither is read): names the element and
        /// its line.
        public var unsupportedAddressing: String?
        /// The line on which the `Representation` start tag ends (where a SAX parser reports it).
        public var line: Int
    }

    /// A `SegmentTemplate` (5.3.9.4) after inheritance, with the schema's defaults applied.
    public struct SegmentTemplate: Sendable, Hashable {
        /// `@timescale`: units per second of every time and duration here; `1` when absent.
        public var timescale: Int64
        /// `@presentationTimeOffset` (5.3.9.2): the media time, in the timescale, at the Period's
        /// start; `0` when absent. A packager writes the encoder's priming here.
        public var presentationTimeOffset: Int64
        /// `@initialization`: the init segment's name template.
        public var initialization: String?
        /// `@media`: the media segments' name template.
        public var media: String?
        /// `@startNumber`: the first segment's `$Number$`; `1` when absent.
        public var startNumber: Int
        /// `@duration`: every segment's duration in the timescale, when there is no timeline.
        public var duration: Int64?
        /// The `SegmentTimeline` (5.3.9.6), when there is one: it takes precedence over
        /// ``duration``.
        public var timeline: [TimelineEntry]?
    }

    /// One `S` element of a `SegmentTimeline` (5.3.9.6): a run of segments of equal duration.
    public struct TimelineEntry: Sendable, Hashable {
        /// `S@t`: the run's first segment's media time in the timescale; when absent, the end of
        /// the previous run (`0` for the first).
        public var time: Int64?
        /// `S@d`: each segment's duration in the timescale.
        public var duration: Int64
        /// `S@r`: how many more segments follow the first (`0` when absent); `-1` repeats until
        /// the next `S@t`, or the end of the Period.
        public var repeatCount: Int
    }

    /// One media segment of a Representation.
    public struct Segment: Sendable, Hashable {
        /// Its `$Number$`.
        public var number: Int
        /// Its media time (`$Time$`) in the template's timescale.
        public var time: Int64
        /// Its duration in the template's timescale.
        public var duration: Int64
    }

    /// Parses the MPD in `text`.
    ///
    /// - Throws: `PipelineError.unsupported` naming the line when the text is not
    ///   well-formed XML, its root is not `MPD`, it declares entities, it goes past the XML
    ///   reader's limits (`XMLElementTree.Limits`: 256 levels, a million elements), or an
    ///   attribute this reader models has a value the schema does not allow (a timescale of 0, a
    ///   negative duration, a number out of range, a malformed `xs:duration`, a Representation
    ///   without an id, …).
    public init(text: String) throws(PipelineError) {
        let tree: XMLElementTree
        do {
            tree = try XMLElementTree(bytes: Array(text.utf8))
        } catch {
            guard let syntax = error.underlying(as: XMLElementTree.SyntaxError.self) else { throw error }
            // A malformed manifest is a container error, at the byte offset the reader found.
            let message: String = switch syntax.kind {
            case .noRootElement: "MPD: the text has no root element; it is not an MPEG-DASH MPD"
            case .entityDeclaration: "MPD line \(syntax.line): an entity declaration (<!ENTITY>); an MPD has none, and they are not expanded"
            case .malformed: "MPD line \(syntax.line): not well-formed XML (column \(syntax.column): \(syntax.reason))"
            case .encoding, .limit: "MPD line \(syntax.line), column \(syntax.column): \(syntax.reason)"
            }
            throw PipelineError(.container, message: message, offset: error.offset)
        }
        let reader = MPDReader()
        try reader.read(tree.root)
        guard let root = reader.root else { throw .unsupported("MPD: the text has no root element; it is not an MPEG-DASH MPD") }
        self.type = root.type
        self.mediaPresentationDuration = root.mediaPresentationDuration
        self.minBufferTime = root.minBufferTime
        self.profiles = root.profiles
        self.baseURL = reader.mpdBaseURL
        self.periods = reader.periods
        // Each Period's start and implied length, once (5.3.2.1): a Period without @start starts
        // where the previous one ends, or at 0 when it is the first of a static presentation.
        var starts: [Double?] = []
        var previousEnd: Double?
        for (index, period) in periods.enumerated() {
            let start = period.start ?? (index == 0 ? (type == .static ? 0 : nil) : previousEnd)
            starts.append(start)
            previousEnd = start.flatMap { start in period.duration.map { start + $0 } }
        }
        for index in periods.indices {
            guard let start = starts[index] else { continue }
            let end = index + 1 < periods.count ? starts[index + 1] : mediaPresentationDuration
            periods[index].impliedDuration = end.map { $0 - start }
        }
    }

    /// The length of `period` in seconds (5.3.2.1): its `@duration`, else the next Period's
    /// start less its own, else (for the last Period) `MPD@mediaPresentationDuration` less its
    /// start; `nil` when none of these is known (a live presentation's last Period). A Period
    /// without `@start` starts where the previous one ends, or at 0 when it is the first of a
    /// static presentation. The neighbours are those the MPD was parsed with.
    public func duration(of period: Period) -> Double? {
        period.duration ?? period.impliedDuration
    }

    /// The media segments of `representation` in `period`, in order: its `SegmentTimeline`
    /// expanded (5.3.9.6: `S@t` sets the time, `S@r` repeats, `S@r = -1` repeats to the next
    /// `S@t` or to the Period's end), or, without a timeline, `ceil(period length × timescale /
    /// @duration)` segments of `@duration` from the `presentationTimeOffset`. Without either,
    /// one segment as long as the Period (0 when its length is unknown). Numbers count from
    /// `@startNumber`; segments are listed as written, not trimmed to the Period.
    ///
    /// - Throws: `PipelineError.unsupported` when the Representation has no
    ///   `SegmentTemplate` or is addressed otherwise (``Representation/unsupportedAddressing``),
    ///   when the timeline has a non-positive duration, a repeat count below -1, or an open repeat
    ///   with no end to run to, when more than ``maximumSegmentCount`` segments would be listed,
    ///   or when a number or time overflows.
    public func segments(of representation: Representation, in period: Period) throws(PipelineError) -> [Segment] {
        let name = "Representation \(representation.id.prefix(64)) (line \(representation.line))"
        func refuse(_ what: String) -> PipelineError { .unsupported("MPD: \(name): \(what)") }
        if let unsupported = representation.unsupportedAddressing { throw refuse(unsupported) }
        guard let template = representation.segmentTemplate else { throw refuse("no SegmentTemplate (nor SegmentBase or SegmentList)") }
        guard template.timescale > 0 else { throw refuse("SegmentTemplate@timescale is \(template.timescale); it must be at least 1") }
        guard template.presentationTimeOffset >= 0 else { throw refuse("SegmentTemplate@presentationTimeOffset is negative") }
        guard template.startNumber >= 0 else { throw refuse("SegmentTemplate@startNumber is negative") }
        let limit = Self.maximumSegmentCount
        let tooMany = refuse("more than \(limit) segments; refused")
        let overflow = refuse("a segment time or number overflows 64 bits")
        let periodSeconds = duration(of: period)
        // The Period's end in the timescale, rounded up: segments start at whole units, so the
        // ones starting before it are the ones starting before its ceiling.
        func periodTicks(for what: String) throws(PipelineError) -> Int64 {
            guard let seconds = periodSeconds else { throw refuse("\(what) needs the Period's length, and the MPD does not give it") }
            guard let ticks = Self.ticks(seconds: seconds, timescale: template.timescale) else {
                throw refuse("the Period's length (\(seconds) s) at timescale \(template.timescale) is out of range")
            }
            return ticks
        }

        var runs: [(time: Int64, duration: Int64, count: Int)] = []
        var total = 0
        if let timeline = template.timeline {
            var time: Int64 = 0
            for (index, entry) in timeline.enumerated() {
                let what = "SegmentTimeline S #\(index + 1)"
                if let start = entry.time {
                    guard start >= 0 else { throw refuse("\(what) has a negative @t") }
                    time = start
                }
                guard entry.duration > 0 else { throw refuse("\(what) has @d=\(entry.duration); a segment lasts at least 1") }
                let count: Int
                switch entry.repeatCount {
                case 0...:
                    guard entry.repeatCount < limit else { throw tooMany }
                    count = entry.repeatCount + 1
                case -1:
                    let end: Int64
                    if index + 1 < timeline.count {
                        guard let next = timeline[index + 1].time else {
                            throw refuse("\(what) repeats to the next S (@r=-1), and that S has no @t")
                        }
                        end = next
                    } else {
                        let (sum, overflowed) = template.presentationTimeOffset.addingReportingOverflow(try periodTicks(for: "\(what) repeats to the Period's end (@r=-1): it"))
                        guard !overflowed else { throw overflow }
                        end = sum
                    }
                    guard end > time else { throw refuse("\(what) repeats (@r=-1) from \(time) to \(end), which is not after it") }
                    let runLength = Self.ceilingDivision(end - time, by: entry.duration)
                    guard runLength <= Int64(limit) else { throw tooMany }
                    count = Int(runLength)
                default:
                    throw refuse("\(what) has @r=\(entry.repeatCount); a repeat count is at least -1")
                }
                let (newTotal, totalOverflowed) = total.addingReportingOverflow(count)
                guard !totalOverflowed, newTotal <= limit else { throw tooMany }
                total = newTotal
                runs.append((time, entry.duration, count))
                let (span, spanOverflowed) = entry.duration.multipliedReportingOverflow(by: Int64(count))
                let (end, endOverflowed) = time.addingReportingOverflow(span)
                guard !spanOverflowed, !endOverflowed else { throw overflow }
                time = end
            }
        } else if let duration = template.duration {
            guard duration > 0 else { throw refuse("SegmentTemplate@duration is \(duration); a segment lasts at least 1") }
            let count = Self.ceilingDivision(try periodTicks(for: "SegmentTemplate@duration without a SegmentTimeline"), by: duration)
            guard count <= Int64(limit) else { throw tooMany }
            let (span, spanOverflowed) = duration.multipliedReportingOverflow(by: count)
            guard !spanOverflowed, !template.presentationTimeOffset.addingReportingOverflow(span).overflow else { throw overflow }
            runs.append((template.presentationTimeOffset, duration, Int(count)))
            total = Int(count)
        } else {
            let length = periodSeconds.flatMap { Self.ticks(seconds: $0, timescale: template.timescale) } ?? 0
            guard !template.presentationTimeOffset.addingReportingOverflow(length).overflow else { throw overflow }
            runs.append((template.presentationTimeOffset, length, 1))
            total = 1
        }

        var segments: [Segment] = []
        segments.reserveCapacity(total)
        for run in runs {
            var time = run.time
            for _ in 0..<run.count {
                let (number, numberOverflowed) = template.startNumber.addingReportingOverflow(segments.count)
                guard !numberOverflowed else { throw overflow }
                segments.append(Segment(number: number, time: time, duration: run.duration))
                let (next, timeOverflowed) = time.addingReportingOverflow(run.duration)
                guard !timeOverflowed else { throw overflow }
                time = next
            }
        }
        return segments
    }

    /// The names a Representation's `SegmentTemplate` gives its init segment and its media
    /// segments, relative to the MPD, as a store or a directory holds them (5.6.4): each
    /// `BaseURL` from the MPD's down prepended (one ending in `/` as a directory, another as a
    /// file in the directory it names), the templates expanded. `nil` when a `BaseURL` or a
    /// name is an absolute URL or path, or the Representation has no template with both
    /// `@initialization` and `@media`.
    ///
    /// - Throws: `PipelineError.unsupported` as ``segments(of:in:)`` and
    ///   ``expand(_:representationID:number:time:bandwidth:)`` do.
    public func relativeNames(of representation: Representation, in period: Period, set: AdaptationSet) throws(PipelineError)
        -> (initialization: String, media: [String])? {
        guard let template = representation.segmentTemplate, let initialization = template.initialization, let media = template.media else { return nil }
        var directory = ""
        for base in [baseURL, period.baseURL, set.baseURL, representation.baseURL].compactMap({ $0 }) {
            guard !base.contains("://"), !base.hasPrefix("/") else { return nil }
            directory += base.hasSuffix("/") ? base : String(base[..<(base.lastIndex(of: "/").map { base.index(after: $0) } ?? base.startIndex)])
        }
        func name(_ template: String, number: Int, time: Int64) throws(PipelineError) -> String? {
            let expanded = try Self.expand(template, representationID: representation.id, number: number, time: time, bandwidth: representation.bandwidth)
            return expanded.contains("://") || expanded.hasPrefix("/") ? nil : directory + expanded
        }
        guard let initName = try name(initialization, number: template.startNumber, time: 0) else { return nil }
        var names: [String] = []
        for segment in try segments(of: representation, in: period) {
            guard let next = try name(media, number: segment.number, time: segment.time) else { return nil }
            names.append(next)
        }
        return (initName, names)
    }

    /// A segment's name from a `SegmentTemplate@media` or `@initialization` template (5.3.9.4.4):
    /// `$RepresentationID$`, `$Number$`, `$Time$` and `$Bandwidth$` replaced by the values given,
    /// `$$` by `$`. `$Number$`, `$Time$` and `$Bandwidth$` take a width, `%0Nd` (N from 1 to 32),
    /// zero-padding the value to N digits (`$Number%05d$` → `00042`).
    ///
    /// - Throws: `PipelineError.unsupported` for an unknown identifier (`$SubNumber$`
    ///   included), a format other than `%0Nd`, a format on `$RepresentationID$`, an unclosed
    ///   `$`, `$Bandwidth$` with no bandwidth, or a name longer than ``maximumNameLength``.
    public static func expand(_ template: String, representationID: String, number: Int, time: Int64, bandwidth: Int?) throws(PipelineError) -> String {
        func refuse(_ what: String) -> PipelineError { .unsupported("MPD: the segment template \"\(template.prefix(200))\": \(what)") }
        var name = ""
        var rest = Substring(template)
        while let dollar = rest.firstIndex(of: "$") {
            name += rest[..<dollar]
            let afterDollar = rest.index(after: dollar)
            guard let close = rest[afterDollar...].firstIndex(of: "$") else { throw refuse("a $ is not closed") }
            let identifier = rest[afterDollar..<close]
            rest = rest[rest.index(after: close)...]
            if identifier.isEmpty {
                name += "$"
                continue
            }
            var width: Int?
            var key = identifier
            if let percent = identifier.firstIndex(of: "%") {
                key = identifier[..<percent]
                let format = identifier[percent...]
                let digits = format.dropFirst(2).dropLast()
                guard format.hasPrefix("%0"), format.hasSuffix("d"), format.count >= 4, digits.count <= 2,
                      digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits), (1...32).contains(value) else {
                    throw refuse("$\(identifier)$ has the format \"\(format)\"; the only one is %0Nd, N from 1 to 32")
                }
                width = value
            }
            switch key {
            case "RepresentationID":
                guard width == nil else { throw refuse("$RepresentationID$ takes no format") }
                name += representationID
            case "Number": name += padded(number, width: width)
            case "Time": name += padded(time, width: width)
            case "Bandwidth":
                guard let bandwidth else { throw refuse("$Bandwidth$, and the Representation has no @bandwidth") }
                name += padded(bandwidth, width: width)
            default:
                throw refuse("the identifier $\(key.prefix(64))$ is not one of RepresentationID, Number, Time, Bandwidth")
            }
            guard name.utf8.count <= maximumNameLength else { throw refuse("the name is longer than \(maximumNameLength) bytes") }
        }
        name += rest
        guard name.utf8.count <= maximumNameLength else { throw refuse("the name is longer than \(maximumNameLength) bytes") }
        return name
    }

    // MARK: - Helpers

    /// `value` in decimal, zero-padded to `width` characters (the sign included, as printf's `%0Nd`).
    static func padded<Value: BinaryInteger>(_ value: Value, width: Int?) -> String {
        let digits = String(value.magnitude)
        let sign = value < 0 ? "-" : ""
        let zeros = max(0, (width ?? 0) - sign.count - digits.count)
        return sign + String(repeating: "0", count: zeros) + digits
    }

    /// `⌈dividend / divisor⌉` for `dividend ≥ 0`, `divisor > 0`, without overflow.
    static func ceilingDivision(_ dividend: Int64, by divisor: Int64) -> Int64 {
        dividend / divisor + (dividend % divisor == 0 ? 0 : 1)
    }

    /// `seconds` in `timescale` units, rounded up unless within rounding error of a whole unit
    /// (`PT7.3S` at 48000 is exactly 350400); `nil` when negative, not finite or beyond 64 bits.
    static func ticks(seconds: Double, timescale: Int64) -> Int64? {
        guard seconds.isFinite, seconds >= 0, timescale > 0 else { return nil }
        let exact = seconds * Double(timescale)
        guard exact.isFinite, exact < 9.0e18 else { return nil }
        let nearest = exact.rounded()
        if abs(exact - nearest) <= max(exact * 1e-12, 1e-9) { return Int64(nearest) }
        return Int64(exact.rounded(.up))
    }

    /// The seconds in an `xs:duration` (`PT7.3S`, `PT1H2M3.5S`, `P1DT2H`): days, hours, minutes
    /// and seconds; years and months (no fixed length) only as 0; `nil` when malformed, negative or
    /// not finite.
    static func seconds(ofDuration text: String) -> Double? {
        var bytes = Substring(text.trimmingWhitespace).utf8[...]
        guard bytes.first == UInt8(ascii: "P") else { return nil }
        bytes = bytes.dropFirst()
        var total = 0.0
        var inTime = false
        var components = 0
        // The designators still allowed, in order: Y M D before T, H M S after it.
        var allowed: [UInt8] = Array("YMD".utf8)
        while let first = bytes.first {
            if first == UInt8(ascii: "T") {
                guard !inTime else { return nil }
                inTime = true
                allowed = Array("HMS".utf8)
                bytes = bytes.dropFirst()
                guard !bytes.isEmpty else { return nil }
                continue
            }
            let number = bytes.prefix(while: { ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") })
            bytes = bytes.dropFirst(number.count)
            guard let designator = bytes.first, let position = allowed.firstIndex(of: designator) else { return nil }
            bytes = bytes.dropFirst()
            allowed.removeSubrange(...position)
            let numberText = String(decoding: number, as: UTF8.self)
            let points = number.count(where: { $0 == UInt8(ascii: ".") })
            guard number.count > points, points <= (designator == UInt8(ascii: "S") ? 1 : 0),
                  let value = Double(numberText) else { return nil }
            components += 1
            switch (inTime, designator) {
            case (false, UInt8(ascii: "Y")), (false, UInt8(ascii: "M")):
                guard value == 0 else { return nil }
            case (false, _): total += value * 86_400
            case (true, UInt8(ascii: "H")): total += value * 3_600
            case (true, UInt8(ascii: "M")): total += value * 60
            default: total += value
            }
        }
        guard components > 0, total.isFinite else { return nil }
        return total
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    fileprivate var trimmingWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}

// MARK: - The SAX reader

/// The `MPD` element's own attributes.
private struct MPDRoot {
    var type: DASHManifest.PresentationType
    var mediaPresentationDuration: Double?
    var minBufferTime: Double?
    var profiles: [String]
}

/// A `SegmentTemplate`'s attributes as written at one level, before inheritance.
private struct WrittenTemplate {
    var timescale: Int64?
    var presentationTimeOffset: Int64?
    var initialization: String?
    var media: String?
    var startNumber: Int?
    var duration: Int64?
    var timeline: [DASHManifest.TimelineEntry]?
    var line: Int

    /// Each attribute this template does not write taken from `parent` (5.3.9.1).
    func inheriting(from parent: WrittenTemplate?) -> WrittenTemplate {
        guard let parent else { return self }
        return WrittenTemplate(timescale: timescale ?? parent.timescale, presentationTimeOffset: presentationTimeOffset ?? parent.presentationTimeOffset,
                               initialization: initialization ?? parent.initialization, media: media ?? parent.media,
                               startNumber: startNumber ?? parent.startNumber, duration: duration ?? parent.duration,
                               timeline: timeline ?? parent.timeline, line: line)
    }

    /// The template with the schema's defaults.
    var resolved: DASHManifest.SegmentTemplate {
        DASHManifest.SegmentTemplate(timescale: timescale ?? 1, presentationTimeOffset: presentationTimeOffset ?? 0, initialization: initialization,
                                     media: media, startNumber: startNumber ?? 1, duration: duration, timeline: timeline)
    }
}

/// The segment addressing written at one level (Period, Adaptation Set, Representation).
private struct Addressing {
    var template: WrittenTemplate?
    /// `SegmentBase (line 9)` or `SegmentList (line 9)`, when one is written here.
    var unread: String?
}

private struct OpenRepresentation {
    var id: String
    var bandwidth: Int?
    var codecs: String?
    var mimeType: String?
    var audioSamplingRate: Int?
    var channelConfiguration: String?
    var baseURL: String?
    var addressing = Addressing()
    var line: Int
}

private struct OpenAdaptationSet {
    var id: String?
    var contentType: String?
    var mimeType: String?
    var codecs: String?
    var audioSamplingRate: Int?
    var channelConfiguration: String?
    var segmentAlignment: Bool
    var baseURL: String?
    var addressing = Addressing()
    var representations: [OpenRepresentation] = []
    var line: Int
}

private struct OpenPeriod {
    var id: String?
    var start: Double?
    var duration: Double?
    var baseURL: String?
    var addressing = Addressing()
    var adaptationSets: [OpenAdaptationSet] = []
    var line: Int

    /// The Period with inheritance applied to each Representation.
    var resolved: DASHManifest.Period {
        DASHManifest.Period(id: id, start: start, duration: duration, baseURL: baseURL, adaptationSets: adaptationSets.map { set in
            DASHManifest.AdaptationSet(
                id: set.id, contentType: set.contentType, mimeType: set.mimeType, codecs: set.codecs, audioSamplingRate: set.audioSamplingRate,
                channelConfiguration: set.channelConfiguration, segmentAlignment: set.segmentAlignment,
                representations: set.representations.map { representation in
                    let levels = [addressing, set.addressing, representation.addressing]
                    var template: WrittenTemplate?
                    for level in levels {
                        if let written = level.template { template = written.inheriting(from: template) }
                    }
                    // The nearest level that names an addressing decides it.
                    var unread: String?
                    for level in levels.reversed() {
                        if let element = level.unread {
                            unread = "\(element) addressing is not read; only SegmentTemplate is"
                            break
                        }
                        if level.template != nil { break }
                    }
                    return DASHManifest.Representation(
                        id: representation.id, bandwidth: representation.bandwidth, codecs: representation.codecs ?? set.codecs,
                        mimeType: representation.mimeType ?? set.mimeType, audioSamplingRate: representation.audioSamplingRate ?? set.audioSamplingRate,
                        channelConfiguration: representation.channelConfiguration ?? set.channelConfiguration, baseURL: representation.baseURL,
                        segmentTemplate: template?.resolved, unsupportedAddressing: unread, line: representation.line)
                },
                baseURL: set.baseURL, line: set.line)
        }, line: line, impliedDuration: nil)
    }
}

/// The elements the reader is inside.
private enum Frame: Equatable {
    case mpd, period, adaptationSet, representation, segmentTemplate, segmentTimeline, baseURL
    /// An element this reader does not model, and everything in it.
    case skipped
}

/// Builds the manifest from the element tree, visiting it in document order as a SAX parser
/// would report it: the first error stops the reading.
private final class MPDReader {
    /// An `AudioChannelConfiguration` as a channel count: the 23003-3 scheme's `@value`, or the
    /// count of a CICP ChannelConfiguration index (ISO/IEC 23091-3, 8.2); `nil` for other schemes.
    static func channelCount(scheme: String?, value: String?) -> String? {
        guard let value else { return nil }
        switch scheme {
        case "urn:mpeg:dash:23003:3:audio_channel_configuration:2011", nil:
            return Int(value).map(String.init)
        case "urn:mpeg:mpegB:cicp:ChannelConfiguration":
            let counts = [1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 8, 9: 3, 10: 4, 11: 7, 12: 8, 13: 24, 14: 8, 15: 12, 16: 10, 17: 12, 18: 14, 19: 12, 20: 14]
            return Int(value).flatMap { counts[$0] }.map(String.init)
        default:
            return nil
        }
    }

    var root: MPDRoot?
    var mpdBaseURL: String?
    var periods: [DASHManifest.Period] = []

    private var rootNamespace = ""
    private var frames: [Frame] = []
    private var period: OpenPeriod?
    private var adaptationSet: OpenAdaptationSet?
    private var representation: OpenRepresentation?
    private var template: WrittenTemplate?
    private var timeline: [DASHManifest.TimelineEntry]?
    private var baseURLText = ""

    /// Visits `root` and everything in it in document order, without recursion (the tree is at
    /// most `XMLElementTree.Limits.depth` deep, but the walk does not rely on it): each
    /// element's start, then its children, then its end.
    func read(_ root: XMLElementTree.Element) throws(PipelineError) {
        var stack: [(element: XMLElementTree.Element, next: Int)] = [(root, -1)]
        while let (element, next) = stack.last {
            if next == -1 {
                try start(Element(name: element.localName, attributes: element.attributes, line: element.line), namespace: element.namespaceURI ?? "")
                // A BaseURL's text: its own character data and CDATA sections, as written.
                if frames.last == .baseURL { baseURLText = element.text }
                stack[stack.count - 1].next = 0
            } else if next < element.children.count {
                stack[stack.count - 1].next = next + 1
                stack.append((element.children[next], -1))
            } else {
                stack.removeLast()
                if let frame = frames.popLast() { end(frame) }
            }
        }
    }

    private func start(_ element: Element, namespace: String) throws(PipelineError) {
        guard let top = frames.last else {
            guard element.name == "MPD" else {
                throw element.refuse("the root element is <\(element.name.prefix(64))>, not <MPD>: the text is not an MPEG-DASH MPD")
            }
            rootNamespace = namespace
            root = try readRoot(element)
            frames.append(.mpd)
            return
        }
        guard top != .skipped, namespace == rootNamespace else {
            frames.append(.skipped)
            return
        }
        switch (top, element.name) {
        case (.mpd, "Period"):
            period = OpenPeriod(id: element["id"], start: try element.duration("start"), duration: try element.duration("duration"), line: element.line)
            frames.append(.period)
        case (.period, "AdaptationSet"):
            adaptationSet = OpenAdaptationSet(
                id: element["id"], contentType: element["contentType"], mimeType: element["mimeType"], codecs: element["codecs"],
                audioSamplingRate: try element.samplingRate(), segmentAlignment: element.conditionalBoolean("segmentAlignment"), line: element.line)
            frames.append(.adaptationSet)
        case (.adaptationSet, "Representation"):
            guard let id = element["id"], !id.isEmpty else { throw element.refuse("<Representation> has no @id") }
            representation = OpenRepresentation(
                id: id, bandwidth: try element.integer("bandwidth", in: 0...Int.max), codecs: element["codecs"], mimeType: element["mimeType"],
                audioSamplingRate: try element.samplingRate(), line: element.line)
            frames.append(.representation)
        case (.mpd, "BaseURL"), (.period, "BaseURL"), (.adaptationSet, "BaseURL"), (.representation, "BaseURL"):
            baseURLText = ""
            frames.append(.baseURL)
        case (.period, "SegmentTemplate"), (.adaptationSet, "SegmentTemplate"), (.representation, "SegmentTemplate"):
            guard addressing(of: top)?.template == nil else { throw element.refuse("a second <SegmentTemplate> in the same element") }
            template = WrittenTemplate(
                timescale: try element.integer("timescale", in: 1...Int64.max),
                presentationTimeOffset: try element.integer("presentationTimeOffset", in: 0...Int64.max),
                initialization: element["initialization"], media: element["media"], startNumber: try element.integer("startNumber", in: 0...Int.max),
                duration: try element.integer("duration", in: 1...Int64.max), line: element.line)
            frames.append(.segmentTemplate)
        case (.period, "SegmentBase"), (.period, "SegmentList"), (.adaptationSet, "SegmentBase"), (.adaptationSet, "SegmentList"),
             (.representation, "SegmentBase"), (.representation, "SegmentList"):
            updateAddressing(of: top) { if $0.unread == nil { $0.unread = "\(element.name) (line \(element.line))" } }
            frames.append(.skipped)
        case (.adaptationSet, "AudioChannelConfiguration"):
            if adaptationSet?.channelConfiguration == nil { adaptationSet?.channelConfiguration = Self.channelCount(scheme: element["schemeIdUri"], value: element["value"]) }
            frames.append(.skipped)
        case (.representation, "AudioChannelConfiguration"):
            if representation?.channelConfiguration == nil { representation?.channelConfiguration = Self.channelCount(scheme: element["schemeIdUri"], value: element["value"]) }
            frames.append(.skipped)
        case (.segmentTemplate, "SegmentTimeline"):
            guard template?.timeline == nil, timeline == nil else { throw element.refuse("a second <SegmentTimeline> in the same <SegmentTemplate>") }
            timeline = []
            frames.append(.segmentTimeline)
        case (.segmentTimeline, "S"):
            guard let duration: Int64 = try element.integer("d", in: 1...Int64.max) else { throw element.refuse("<S> has no @d") }
            timeline?.append(DASHManifest.TimelineEntry(time: try element.integer("t", in: 0...Int64.max), duration: duration,
                                                        repeatCount: try element.integer("r", in: -1...Int.max) ?? 0))
            frames.append(.skipped)
        default:
            frames.append(.skipped)
        }
    }

    private func end(_ frame: Frame) {
        switch frame {
        case .baseURL:
            let text = String(baseURLText.trimmingWhitespace)
            baseURLText = ""
            guard !text.isEmpty else { return }
            switch frames.last {
            case .mpd?: if mpdBaseURL == nil { mpdBaseURL = text }
            case .period?: if period?.baseURL == nil { period?.baseURL = text }
            case .adaptationSet?: if adaptationSet?.baseURL == nil { adaptationSet?.baseURL = text }
            case .representation?: if representation?.baseURL == nil { representation?.baseURL = text }
            default: break
            }
        case .segmentTimeline:
            template?.timeline = timeline
            timeline = nil
        case .segmentTemplate:
            let written = template
            template = nil
            if let top = frames.last { updateAddressing(of: top) { $0.template = written } }
        case .representation:
            if let representation { adaptationSet?.representations.append(representation) }
            representation = nil
        case .adaptationSet:
            if let adaptationSet { period?.adaptationSets.append(adaptationSet) }
            adaptationSet = nil
        case .period:
            if let period { periods.append(period.resolved) }
            period = nil
        case .mpd, .skipped:
            break
        }
    }

    private func addressing(of frame: Frame) -> Addressing? {
        switch frame {
        case .period: period?.addressing
        case .adaptationSet: adaptationSet?.addressing
        case .representation: representation?.addressing
        default: nil
        }
    }

    private func updateAddressing(of frame: Frame, _ update: (inout Addressing) -> Void) {
        switch frame {
        case .period: if period != nil { update(&period!.addressing) }
        case .adaptationSet: if adaptationSet != nil { update(&adaptationSet!.addressing) }
        case .representation: if representation != nil { update(&representation!.addressing) }
        default: break
        }
    }

    private func readRoot(_ element: Element) throws(PipelineError) -> MPDRoot {
        let type: DASHManifest.PresentationType
        switch element["type"]?.trimmingWhitespace {
        case nil, "static"?: type = .static
        case "dynamic"?: type = .dynamic
        case let other?: throw element.refuse("MPD@type is \"\(other.prefix(64))\", not static or dynamic")
        }
        let profiles = (element["profiles"] ?? "").split(separator: ",").map { String(String($0).trimmingWhitespace) }.filter { !$0.isEmpty }
        return MPDRoot(type: type, mediaPresentationDuration: try element.duration("mediaPresentationDuration"),
                       minBufferTime: try element.duration("minBufferTime"), profiles: profiles)
    }
}

/// One start tag: its local name, attributes (qualified names as written) and line, and the
/// readers of its attribute values.
private struct Element {
    var name: String
    var attributes: [XMLElementTree.Attribute]
    var line: Int

    subscript(attribute: String) -> String? { attributes.first { $0.name == attribute }?.value }

    func refuse(_ what: String) -> PipelineError { .unsupported("MPD line \(line): \(what)") }

    /// `@attribute` as an integer in `range`, `nil` when absent.
    func integer<Value: FixedWidthInteger>(_ attribute: String, in range: ClosedRange<Value>) throws(PipelineError) -> Value? {
        guard let text = self[attribute] else { return nil }
        guard let value = Value(text.trimmingWhitespace, radix: 10), range.contains(value) else {
            throw refuse("<\(name)> has \(attribute)=\"\(text.prefix(64))\", not an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// `@attribute` as an `xs:duration` in seconds, `nil` when absent.
    func duration(_ attribute: String) throws(PipelineError) -> Double? {
        guard let text = self[attribute] else { return nil }
        guard let seconds = DASHManifest.seconds(ofDuration: text) else {
            throw refuse("<\(name)> has \(attribute)=\"\(text.prefix(64))\", not an xs:duration in days, hours, minutes and seconds (PT7.3S)")
        }
        return seconds
    }

    /// `@audioSamplingRate`: one rate, or the first of a pair (HE-AAC's `24000 48000`).
    func samplingRate() throws(PipelineError) -> Int? {
        guard let text = self["audioSamplingRate"] else { return nil }
        guard let first = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).first,
              let rate = Int(first, radix: 10), rate > 0 else {
            throw refuse("<\(name)> has audioSamplingRate=\"\(text.prefix(64))\", not a rate in hertz")
        }
        return rate
    }

    /// A `ConditionalUintType` (`true`, `false` or a group number): `true` or a number is `true`.
    func conditionalBoolean(_ attribute: String) -> Bool {
        guard let text = self[attribute]?.trimmingWhitespace else { return false }
        return text == "true" || UInt32(text, radix: 10) != nil
    }
}
