public import SystemPackage
internal import MediaFormats

/// HLS playlists checked against RFC 8216 and draft-pantos-hls-rfc8216bis (low-latency HLS),
/// and against the media they name.
///
/// A **media playlist**: its syntax (``HLSPlaylistDocument/problems``);
/// `EXT-X-TARGETDURATION` present and at least every `EXTINF` rounded (RFC 8216 4.3.3.1);
/// `EXT-X-VERSION` high enough for the tags used (RFC 8216 7); a VOD playlist ended
/// (`EXT-X-ENDLIST`, 4.3.3.4/6.2.1), and an ended one without a preload hint (rfc8216bis
/// 4.4.5.3); its init segment (`EXT-X-MAP`) and segments read as one
/// ``/MP4/SegmentSequenceValidation``, and each `EXTINF` against the sum of its segment's `trun`
/// sample durations. With parts (rfc8216bis): `EXT-X-PART-INF` present, every part at most
/// `PART-TARGET` (4.4.4.9) and at least 85 % of it but where the draft exempts it,
/// `PART-HOLD-BACK` present and at least twice (MUST) and three times (SHOULD) the part target
/// (4.4.3.8), `HOLD-BACK` at least three target durations, at most one preload hint of a type,
/// blocking reload offered, the parts of a segment adding up to its `EXTINF`, and each part's
/// file against its `DURATION`.
///
/// A **master playlist**: each variant's media playlist checked as above; `BANDWIDTH` against
/// the peak segment bit rate (RFC 8216 4.1: the largest bit rate of any run of segments lasting
/// 0.5 to 1.5 target durations) and `AVERAGE-BANDWIDTH` against the mean; `CODECS` against
/// each rendition's sample entry (RFC 6381); and across the renditions: the same target
/// duration and playlist type (RFC 8216 6.2.4), the same start for VOD, and the same
/// AudioSpecificConfig rate, channels and object type, segment boundaries aligned.
public enum HLSValidation {
    /// `EXTINF` against the media: at most this far apart, in seconds (a playlist prints
    /// durations to the millisecond or finer; one AAC frame is over 20 ms).
    static let durationTolerance = 0.001
    /// The most segments of one media playlist whose files are read.
    static let segmentBudget = 100_000
    /// The most variants of one master whose playlists are read.
    static let variantBudget = 100

    /// The findings for the playlist at `path` (master or media).
    ///
    /// - Throws: ``/MediaCore/PipelineError`` when the file cannot be read.
    public static func findings(forPlaylist path: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let document = try read(path)
        return document.isMaster ? masterFindings(document, path: path) : MediaCheck(document, path: path).findings
    }

    static func read(_ path: FilePath) throws(PipelineError) -> HLSPlaylistDocument {
        HLSPlaylistDocument(text: try ManifestText.read(path, what: "a playlist"))
    }

    /// The syntax problems as findings.
    static func syntaxFindings(_ document: HLSPlaylistDocument, name: String) -> [ValidationFinding] {
        var found = document.problems.map { problem in
            ValidationFinding(problem.kind == .whitespace ? .warning : .error, file: name, location: "line \(problem.line)" + (problem.tag.isEmpty ? "" : " \(problem.tag)"),
                              rule: "playlist syntax (RFC 8216 4): \(problem.kind.rawValue)", expected: "a well-formed line", found: problem.message)
        }
        if document.omittedProblemCount > 0 {
            found.append(ValidationFinding(.error, file: name, location: "the playlist", rule: "playlist syntax (RFC 8216 4)",
                                           expected: "a well-formed playlist", found: "\(document.omittedProblemCount) more problems"))
        }
        return found
    }

    // MARK: - Media playlists

    /// A media playlist checked, and what the master's rules need of it.
    struct MediaCheck {
        var findings: [ValidationFinding] { found.elements }
        /// The findings as they are made, repeats counted (one per file and rule kept).
        var found = ValidationFindingList()
        let document: HLSPlaylistDocument
        var track: SegmentSequenceValidation.TrackSummary?
        /// Each segment's bytes (0 when not read).
        var sizes: [Int64] = []
        /// Each segment's first decode time, when read.
        var starts: [Int64?] = []

        init(_ document: HLSPlaylistDocument, path: FilePath) {
            self.document = document
            let name = path.string
            found += HLSValidation.syntaxFindings(document, name: name)
            checkTags(name: name)
            checkParts(name: name)
            checkMedia(path: path)
        }

        private mutating func add(_ severity: ValidationFinding.Severity, _ location: String, _ rule: String, expected: String, found: String, file: String) {
            self.found.append(ValidationFinding(severity, file: file, location: location, rule: rule, expected: expected, found: found))
        }

        private mutating func checkTags(name: String) {
            if let target = document.targetDuration {
                for segment in document.segments where segment.duration.isFinite && Int(exactly: segment.duration.rounded()).map({ $0 > target }) ?? true {
                    add(.error, "line \(segment.extinfLine) EXTINF", "EXTINF rounded at most EXT-X-TARGETDURATION (RFC 8216 4.3.3.1)",
                        expected: "at most \(target) s", found: "\(segment.duration) s", file: name)
                }
            } else if !document.segments.isEmpty {
                add(.error, "the playlist", "EXT-X-TARGETDURATION present (RFC 8216 4.3.3.1)", expected: "an EXT-X-TARGETDURATION tag", found: "none", file: name)
            }
            // RFC 8216 7: the lowest version that has every tag and value used.
            var needed = (1, "")
            func need(_ version: Int, _ why: String) { if version > needed.0 { needed = (version, why) } }
            let keys = document.segments.compactMap(\.key)
            if keys.contains(where: { $0.iv != nil }) { need(2, "the IV of EXT-X-KEY") }
            if document.segments.contains(where: { $0.duration.rounded() != $0.duration }) { need(3, "a fractional EXTINF") }
            if document.segments.contains(where: { $0.byteRange != nil }) { need(4, "EXT-X-BYTERANGE") }
            if document.iFramesOnly { need(4, "EXT-X-I-FRAMES-ONLY") }
            if keys.contains(where: { $0.method == "SAMPLE-AES" || $0.keyFormat != nil }) { need(5, "SAMPLE-AES or KEYFORMAT") }
            if !document.maps.isEmpty { document.iFramesOnly ? need(5, "EXT-X-MAP") : need(6, "EXT-X-MAP in a playlist of whole segments") }
            if (document.version ?? 1) < needed.0 {
                add(.error, document.versionLine.map { "line \($0) EXT-X-VERSION" } ?? "the playlist", "EXT-X-VERSION for the tags used (RFC 8216 7)",
                    expected: "at least \(needed.0) (for \(needed.1))", found: document.version.map(String.init) ?? "none (version 1)", file: name)
            }
            if document.playlistType == "VOD" && !document.endList {
                add(.error, document.playlistTypeLine.map { "line \($0) EXT-X-PLAYLIST-TYPE" } ?? "the playlist", "a VOD playlist is ended (RFC 8216 4.3.3.5, 6.2.1)",
                    expected: "EXT-X-ENDLIST", found: "none", file: name)
            }
            if document.endList, let hint = document.preloadHints.first {
                add(.error, "line \(hint.line) EXT-X-PRELOAD-HINT", "no preload hint in an ended playlist (rfc8216bis 4.4.5.3)",
                    expected: "no EXT-X-PRELOAD-HINT after EXT-X-ENDLIST", found: "a hint for \(hint.uri)", file: name)
            }
            // One pass: the hints of each type counted, the second's line kept.
            var hintsByType: [String: (count: Int, second: Int?)] = [:]
            var order: [String] = []
            for hint in document.preloadHints {
                if let seen = hintsByType[hint.type] {
                    hintsByType[hint.type] = (seen.count + 1, seen.second ?? hint.line)
                } else {
                    hintsByType[hint.type] = (1, nil)
                    order.append(hint.type)
                }
            }
            for type in order {
                guard let seen = hintsByType[type], seen.count > 1, let second = seen.second else { continue }
                add(.warning, "line \(second) EXT-X-PRELOAD-HINT", "one preload hint of a type (rfc8216bis 6.2.6)",
                    expected: "1 hint of TYPE=\(type)", found: "\(seen.count)", file: name)
            }
            if let control = document.serverControl, let target = document.targetDuration, let holdBack = control.holdBack, holdBack < 3 * Double(target) {
                add(.error, "line \(control.line) EXT-X-SERVER-CONTROL", "HOLD-BACK at least three target durations (rfc8216bis 4.4.3.8)",
                    expected: "at least \(fixed(3 * Double(target), digits: 3)) s", found: "\(holdBack) s", file: name)
            }
        }

        private mutating func checkParts(name: String) {
            let parts = document.segments.flatMap(\.parts) + document.trailingParts
            guard !parts.isEmpty else { return }
            guard let target = document.partTarget else {
                add(.error, "line \(parts[0].line) EXT-X-PART", "EXT-X-PART-INF with parts (rfc8216bis 4.4.3.7)",
                    expected: "an EXT-X-PART-INF tag", found: "none", file: name)
                return
            }
            let control = document.serverControl
            if let holdBack = control?.partHoldBack {
                if holdBack < 2 * target {
                    add(.error, "line \(control!.line) EXT-X-SERVER-CONTROL", "PART-HOLD-BACK at least twice the part target (rfc8216bis 4.4.3.8)",
                        expected: "at least \(fixed(2 * target, digits: 3)) s", found: "\(holdBack) s", file: name)
                } else if holdBack < 3 * target - 0.0005 {
                    add(.warning, "line \(control!.line) EXT-X-SERVER-CONTROL", "PART-HOLD-BACK three part targets (rfc8216bis 4.4.3.8)",
                        expected: "at least \(fixed(3 * target, digits: 3)) s", found: "\(holdBack) s", file: name)
                }
            } else {
                add(.error, control.map { "line \($0.line) EXT-X-SERVER-CONTROL" } ?? "the playlist", "PART-HOLD-BACK with EXT-X-PART-INF (rfc8216bis 4.4.3.8)",
                    expected: "EXT-X-SERVER-CONTROL:PART-HOLD-BACK", found: "none", file: name)
            }
            if !document.endList && !(control?.canBlockReload ?? false) {
                add(.warning, control.map { "line \($0.line) EXT-X-SERVER-CONTROL" } ?? "the playlist", "blocking reload with parts (rfc8216bis 6.2.5.2)",
                    expected: "CAN-BLOCK-RELOAD=YES", found: "no blocking reload", file: name)
            }
            for part in parts where part.duration > target + 0.0005 {
                add(.error, "line \(part.line) EXT-X-PART", "a part at most PART-TARGET (rfc8216bis 4.4.4.9)",
                    expected: "at most \(target) s", found: "\(part.duration) s", file: name)
            }
            // The 85 % floor, for all but the exempt parts.
            let groups = document.segments.map(\.parts) + [document.trailingParts]
            for (number, group) in groups.enumerated() {
                let isOpen = number == groups.count - 1
                for (index, part) in group.enumerated() {
                    let isLast = index == group.count - 1 && !isOpen
                    let nextIsGap = index + 1 < group.count && group[index + 1].gap
                    if !isLast && !part.independent && !part.gap && !nextIsGap && part.duration < 0.85 * target {
                        add(.error, "line \(part.line) EXT-X-PART", "a part at least 85 % of PART-TARGET (rfc8216bis 4.4.4.9)",
                            expected: "at least \(fixed(0.85 * target, digits: 3)) s", found: "\(part.duration) s", file: name)
                    }
                }
            }
            for segment in document.segments where !segment.parts.isEmpty {
                let sum = segment.parts.reduce(0) { $0 + $1.duration }
                if abs(sum - segment.duration) > HLSValidation.durationTolerance {
                    add(.warning, "line \(segment.extinfLine) EXTINF", "the parts of a segment add up to its EXTINF (rfc8216bis 3.2)",
                        expected: "\(fixed(sum, digits: 6)) s (its parts)", found: "\(segment.duration) s", file: name)
                }
            }
        }

        private mutating func checkMedia(path: FilePath) {
            let name = path.string
            guard let first = document.segments.first ?? nil else { return }
            guard let map = first.map else {
                if first.uri.hasSuffix(".aac") {
                    checkPackedAudio(path: path)
                } else {
                    add(.warning, "line \(first.line)", "segments checked: fMP4 with EXT-X-MAP or packed audio (.aac)",
                        expected: "an EXT-X-MAP (fMP4 segments) or .aac segments", found: "none: MPEG-TS segments, whose media is not checked", file: name)
                }
                return
            }
            if document.segments.contains(where: { $0.map != map }) {
                add(.warning, "line \(first.line)", "segments checked: one EXT-X-MAP", expected: "one init segment for all the segments",
                    found: "several; the segments after the first EXT-X-MAP's are not checked", file: name)
            }
            var segments = document.segments.prefix { $0.map == map }
            if segments.count > HLSValidation.segmentBudget {
                add(.warning, "line \(segments[segments.startIndex + HLSValidation.segmentBudget].line)", "segments checked: at most \(HLSValidation.segmentBudget) in a playlist",
                    expected: "fewer segments", found: "\(segments.count): the first \(HLSValidation.segmentBudget) are checked", file: name)
                segments = segments.prefix(HLSValidation.segmentBudget)
            }
            guard let mapPath = ManifestMedia.resolve(map.uri, against: path) else {
                add(.warning, "line \(map.line) EXT-X-MAP", "segments checked: files beside the playlist", expected: "a relative URI",
                    found: "\(map.uri): a URL, not fetched", file: name)
                return
            }
            var references: [ManifestMedia.Reference] = []
            for segment in segments {
                guard let file = ManifestMedia.resolve(segment.uri, against: path) else {
                    add(.warning, "line \(segment.line)", "segments checked: files beside the playlist", expected: "a relative URI",
                        found: "\(segment.uri): a URL, not fetched", file: name)
                    return
                }
                references.append(.init(path: file, range: segment.byteRange.map { ($0.offset, $0.length) }, location: "line \(segment.line)"))
            }
            let media = ManifestMedia(manifest: name, initSegment: .init(path: mapPath, range: map.byteRange.map { ($0.offset, $0.length) }, location: "line \(map.line) EXT-X-MAP"),
                                      segments: references)
            found += media.findings
            found += media.sequence?.findings ?? []
            track = media.sequence?.track
            sizes = media.sizes
            let tolerance = (document.version ?? 1) < 3 ? 0.5 : HLSValidation.durationTolerance
            for (index, segment) in segments.enumerated() {
                let timing = media.timing(index)
                starts.append(timing?.firstDecodeTime)
                guard let timing, let timescale = track?.timescale, timescale > 0 else { continue }
                if timing.fragmentCount == 0 {
                    add(.error, "line \(segment.line)", "a segment holds a movie fragment", expected: "a moof and its mdat", found: "none", file: name)
                    continue
                }
                let seconds = Double(timing.duration) / Double(timescale)
                if abs(seconds - segment.duration) > tolerance {
                    add(.error, "line \(segment.extinfLine) EXTINF", "EXTINF against the trun sample durations",
                        expected: "\(fixed(seconds, digits: 6)) s (\(timing.duration) / \(timescale) in \(timing.name))", found: "\(segment.duration) s", file: name)
                }
            }
            checkPartMedia(path: path, map: map, mapPath: mapPath)
        }

        /// Packed audio segments (RFC 8216 3.4): each starts with an ID3 tag whose `PRIV`
        /// `com.apple.streaming.transportStreamTimestamp` gives its first frame's timestamp, then
        /// ADTS frames and ID3 tags; its frames last its `EXTINF` (the last may list less, down to
        /// a frame less: the end of the presented samples); each timestamp continues the one
        /// before by its frames.
        private mutating func checkPackedAudio(path: FilePath) {
            let name = path.string
            var expectedTimestamp: UInt64?
            for (index, segment) in document.segments.prefix(HLSValidation.segmentBudget).enumerated() {
                guard let file = ManifestMedia.resolve(segment.uri, against: path) else {
                    add(.warning, "line \(segment.line)", "segments checked: files beside the playlist", expected: "a relative URI",
                        found: "\(segment.uri): a URL, not fetched", file: name)
                    return
                }
                let packed: PackedAudioSegment
                do { packed = try PackedAudioSegment(path: file) } catch {
                    add(.error, "line \(segment.line)", "a packed audio segment (RFC 8216 3.4)", expected: "an ID3 timestamp, then ADTS frames",
                        found: "\(file): \(error)", file: name)
                    expectedTimestamp = nil
                    continue
                }
                guard let timestamp = packed.timestamp else {
                    add(.error, "line \(segment.line)", "a packed audio segment's timestamp (RFC 8216 3.4)",
                        expected: "an ID3 PRIV \(PackedAudioSegment.timestampOwner) of 8 bytes", found: "none in \(file)", file: name)
                    expectedTimestamp = nil
                    continue
                }
                let isLast = index == document.segments.count - 1 && document.endList
                let frame = 1024.0 / Double(max(packed.sampleRate, 1))
                if segment.duration > packed.seconds + HLSValidation.durationTolerance
                    || segment.duration < packed.seconds - (isLast ? frame : 0) - HLSValidation.durationTolerance {
                    add(.error, "line \(segment.extinfLine) EXTINF", "EXTINF against the ADTS frames",
                        expected: "\(fixed(packed.seconds, digits: 6)) s (\(packed.frameCount) frames at \(packed.sampleRate) Hz in \(file))",
                        found: "\(segment.duration) s", file: name)
                }
                if let expected = expectedTimestamp, !document.segments[index].discontinuity,
                   abs(Int64(timestamp) - Int64(expected)) > 1 {
                    add(.warning, "line \(segment.line)", "a packed audio segment's timestamp continues the one before (RFC 8216 3.4)",
                        expected: "\(expected) (90 kHz)", found: "\(timestamp) in \(file)", file: name)
                }
                expectedTimestamp = (timestamp + UInt64(packed.sampleCount) * 90_000 / UInt64(max(packed.sampleRate, 1))) & ((1 << 33) - 1)
            }
        }

        /// Each part's file against its `DURATION`, the parts read in order as one sequence.
        private mutating func checkPartMedia(path: FilePath, map: HLSPlaylistDocument.Map, mapPath: FilePath) {
            // Lazily: the segments are not copied to find the few that have parts.
            let parts = document.segments.lazy.filter { !$0.parts.isEmpty && $0.map == map }.flatMap(\.parts) + document.trailingParts
            guard !parts.isEmpty else { return }
            var references: [ManifestMedia.Reference] = []
            for part in parts {
                guard let file = ManifestMedia.resolve(part.uri, against: path) else { return }
                references.append(.init(path: file, range: part.byteRange.map { ($0.offset, $0.length) }, location: "line \(part.line) EXT-X-PART"))
            }
            let initReference = ManifestMedia.Reference(path: mapPath, range: map.byteRange.map { ($0.offset, $0.length) }, location: "line \(map.line) EXT-X-MAP")
            let media = ManifestMedia(manifest: path.string, initSegment: initReference, segments: references)
            // The init's own findings were reported with the segments.
            let initName = media.sequence?.segments.isEmpty == false ? mapPath.string : ""
            found += media.findings
            found += (media.sequence?.findings ?? []).filter { !$0.file.hasPrefix(initName) || initName.isEmpty }
            guard let timescale = media.sequence?.track?.timescale, timescale > 0 else { return }
            for (index, part) in parts.enumerated() {
                guard let timing = media.timing(index) else { continue }
                let seconds = Double(timing.duration) / Double(timescale)
                if abs(seconds - part.duration) > HLSValidation.durationTolerance {
                    add(.error, "line \(part.line) EXT-X-PART", "part DURATION against the trun sample durations",
                        expected: "\(fixed(seconds, digits: 6)) s (\(timing.duration) / \(timescale) in \(timing.name))", found: "\(part.duration) s",
                        file: path.string)
                }
            }
        }
    }

    // MARK: - Master playlists

    static func masterFindings(_ document: HLSPlaylistDocument, path: FilePath) -> [ValidationFinding] {
        let name = path.string
        var findings = syntaxFindings(document, name: name)
        var checks: [(variant: HLSPlaylistDocument.Variant, media: MediaCheck)] = []
        if document.variants.count > variantBudget {
            findings.append(ValidationFinding(.warning, file: name, location: "line \(document.variants[variantBudget].tagLine) EXT-X-STREAM-INF",
                                              rule: "renditions checked: at most \(variantBudget)", expected: "fewer variants",
                                              found: "\(document.variants.count): the first \(variantBudget) are checked"))
        }
        for variant in document.variants.prefix(variantBudget) {
            let location = "line \(variant.tagLine) EXT-X-STREAM-INF"
            if variant.codecs == nil {
                findings.append(ValidationFinding(.warning, file: name, location: location, rule: "CODECS (RFC 8216 4.3.4.2)",
                                                  expected: "a CODECS attribute", found: "none"))
            }
            guard let file = ManifestMedia.resolve(variant.uri, against: path) else {
                findings.append(ValidationFinding(.warning, file: name, location: "line \(variant.line)", rule: "renditions checked: files beside the playlist",
                                                  expected: "a relative URI", found: "\(variant.uri): a URL, not fetched"))
                continue
            }
            let document: HLSPlaylistDocument
            do { document = try read(file) } catch {
                findings.append(ValidationFinding(.error, file: name, location: "line \(variant.line)", rule: "the files it names exist",
                                                  expected: file.string, found: "\(error)"))
                continue
            }
            let media = MediaCheck(document, path: file)
            findings += media.findings
            checks.append((variant, media))
            findings += bitrateFindings(variant, media, location: location, name: name)
            if let codecs = variant.codecs, let track = media.track, let actual = track.codecs {
                let listed = codecs.split(separator: ",").map { String($0).trimmingSpaces }
                if !listed.contains(actual) {
                    findings.append(ValidationFinding(.error, file: name, location: location, rule: "CODECS against the sample entry (RFC 8216 4.3.4.2)",
                                                      expected: "\(actual) listed (\(file.string)'s \(track.sampleEntryType))", found: "\"\(codecs)\""))
                }
            }
        }
        findings += ladderFindings(checks, name: name)
        return findings
    }

    /// `BANDWIDTH` and `AVERAGE-BANDWIDTH` against the segments (RFC 8216 4.1, 4.3.4.2).
    static func bitrateFindings(_ variant: HLSPlaylistDocument.Variant, _ media: MediaCheck, location: String, name: String) -> [ValidationFinding] {
        let durations = media.document.segments.prefix(media.sizes.count).map(\.duration)
        guard !durations.isEmpty, media.sizes.allSatisfy({ $0 > 0 }), let target = media.document.targetDuration else { return [] }
        let peak = HLSPeakBitrate.of(sizes: media.sizes, durations: Array(durations), targetDuration: Double(target))
        let total = durations.reduce(0, +)
        let average = total > 0 ? Double(media.sizes.reduce(0, +)) * 8 / total : 0
        var findings: [ValidationFinding] = []
        if let bandwidth = variant.bandwidth {
            if peak > Double(bandwidth) * 1.005 {
                findings.append(ValidationFinding(.error, file: name, location: location, rule: "BANDWIDTH at least the peak segment bit rate (RFC 8216 4.3.4.2)",
                                                  expected: "at least \(fixed(peak.rounded(.up), digits: 0)) b/s", found: "\(bandwidth)"))
            } else if Double(bandwidth) > peak * 1.1 {
                findings.append(ValidationFinding(.warning, file: name, location: location, rule: "BANDWIDTH is the peak segment bit rate (RFC 8216 4.3.4.2)",
                                                  expected: "about \(fixed(peak.rounded(.up), digits: 0)) b/s (a player picks a lower rendition than it could)", found: "\(bandwidth)"))
            }
        }
        if let declared = variant.averageBandwidth, average > 0, abs(Double(declared) - average) > 0.1 * average {
            findings.append(ValidationFinding(.warning, file: name, location: location, rule: "AVERAGE-BANDWIDTH is the average segment bit rate (RFC 8216 4.3.4.2)",
                                              expected: "about \(fixed(average.rounded(.up), digits: 0)) b/s", found: "\(declared)"))
        }
        return findings
    }

    /// What the renditions of one master must share.
    static func ladderFindings(_ checks: [(variant: HLSPlaylistDocument.Variant, media: MediaCheck)], name: String) -> [ValidationFinding] {
        guard let first = checks.first else { return [] }
        var findings: [ValidationFinding] = []
        func describe(_ check: (variant: HLSPlaylistDocument.Variant, media: MediaCheck)) -> String { check.variant.uri }
        for other in checks.dropFirst() {
            let location = "line \(other.variant.tagLine) EXT-X-STREAM-INF"
            if other.media.document.targetDuration != first.media.document.targetDuration {
                findings.append(ValidationFinding(.error, file: name, location: location, rule: "the renditions' target duration (RFC 8216 6.2.4)",
                                                  expected: "\(first.media.document.targetDuration.map(String.init) ?? "none") (\(describe(first)))",
                                                  found: "\(other.media.document.targetDuration.map(String.init) ?? "none")"))
            }
            if other.media.document.playlistType != first.media.document.playlistType {
                findings.append(ValidationFinding(.error, file: name, location: location, rule: "the renditions' playlist type (RFC 8216 6.2.4)",
                                                  expected: "\(first.media.document.playlistType ?? "none") (\(describe(first)))",
                                                  found: other.media.document.playlistType ?? "none"))
            }
            if (other.media.document.serverControl == nil) != (first.media.document.serverControl == nil) {
                findings.append(ValidationFinding(.error, file: name, location: location, rule: "EXT-X-SERVER-CONTROL in every rendition (rfc8216bis 4.4.3.8)",
                                                  expected: first.media.document.serverControl == nil ? "none (as \(describe(first)))" : "one (as \(describe(first)))",
                                                  found: other.media.document.serverControl == nil ? "none" : "one"))
            }
            if first.media.document.playlistType == "VOD", let a = first.media.starts.first ?? nil, let b = other.media.starts.first ?? nil, a != b {
                findings.append(ValidationFinding(.error, file: name, location: location, rule: "VOD renditions start at the same media time (RFC 8216 6.2.4)",
                                                  expected: "tfdt \(a) (\(describe(first)))", found: "\(b)"))
            }
            if let a = first.media.track, let b = other.media.track {
                if let finding = ManifestMedia.audioConfigurationFinding(a, describe(first), b, other.variant.uri, file: name, location: location) {
                    findings.append(finding)
                }
                if a.timescale == b.timescale, first.media.starts.count == other.media.starts.count, first.media.starts != other.media.starts {
                    findings.append(ValidationFinding(.warning, file: name, location: location, rule: "the renditions' segment boundaries aligned",
                                                      expected: "the same segment start times as \(describe(first))", found: "different ones"))
                }
            }
        }
        return findings
    }
}
