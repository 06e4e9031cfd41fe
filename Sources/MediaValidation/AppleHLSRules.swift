public import MediaCore
public import SystemPackage
internal import MP4

/// The audio rules of Apple's "HLS Authoring Specification for Apple Devices" (the 2023–2025
/// editions; rule numbers as the specification numbers them) that a stream's playlists and
/// files show, checked on anyone's stream by `keyframe validate --rules apple`. A MUST broken is
/// an error, a SHOULD a warning; each finding names its rule.
///
/// | rule | what |
/// |---|---|
/// | 9.1 (MUST) | every `EXT-X-STREAM-INF` has `CODECS` |
/// | 9.14 (MUST) | every `EXT-X-STREAM-INF` has `AVERAGE-BANDWIDTH` |
/// | 1.26, 1.27 (MUST) | VOD: the measured average and peak bit rates within 10 % of `AVERAGE-BANDWIDTH` and `BANDWIDTH` |
/// | 9.11 (SHOULD) | the multivariant playlist has `EXT-X-INDEPENDENT-SEGMENTS` |
/// | 9.21 (MUST, iOS cellular) | a variant whose `BANDWIDTH` is at most 192 kb/s |
/// | 2.4 (SHOULD NOT) | HE-AAC above 64 kb/s |
/// | 8.2 (MUST) | every media playlist has the same `EXT-X-TARGETDURATION` |
/// | 7.5 (SHOULD) | a target duration of 6 s |
/// | 7.7 (MUST) | no `EXTINF` past the target duration by more than 0.5 s |
/// | 8.6 (MUST) | a VOD playlist says `EXT-X-PLAYLIST-TYPE:VOD` |
/// | 8.11 (MUST) | a live playlist lists at least six segments |
/// | 8.4 (MUST) | a live playlist has `EXT-X-PROGRAM-DATE-TIME` |
/// | 8.20 (MUST) | fMP4 segments have `EXT-X-MAP` |
/// | 2.19 (SHOULD) | an fMP4 init segment has a loudness box (`ludt`, ISO/IEC 14496-12 12.2.7) |
public enum AppleHLSRules {
    /// The findings of the rules on the playlist at `path` (multivariant or media) and the
    /// media playlists and init segments it names beside it.
    ///
    /// - Throws: the playlist's read errors.
    public static func findings(for path: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let document = HLSPlaylistDocument(text: try ManifestText.read(path, what: "a playlist"))
        let name = path.string
        var found: [ValidationFinding] = []
        func add(_ severity: ValidationFinding.Severity, _ location: String, _ rule: String, expected: String, found what: String, file: String = name) {
            found.append(ValidationFinding(severity, file: file, location: location, rule: "Apple HLS authoring " + rule, expected: expected, found: what))
        }
        var media: [(path: FilePath, variant: HLSPlaylistDocument.Variant?)] = []
        if document.isMaster {
            if !document.independentSegments {
                add(.warning, "the playlist", "9.11 (SHOULD): EXT-X-INDEPENDENT-SEGMENTS in the multivariant playlist",
                    expected: "#EXT-X-INDEPENDENT-SEGMENTS", found: "none")
            }
            for variant in document.variants {
                let location = "line \(variant.tagLine) EXT-X-STREAM-INF"
                if variant.codecs == nil {
                    add(.error, location, "9.1 (MUST): CODECS on every EXT-X-STREAM-INF", expected: "CODECS=\"…\"", found: "none")
                }
                if variant.averageBandwidth == nil {
                    add(.error, location, "9.14 (MUST): AVERAGE-BANDWIDTH on every EXT-X-STREAM-INF", expected: "AVERAGE-BANDWIDTH=…", found: "none")
                }
                let names: [String] = (variant.codecs ?? "").split(separator: ",").map { String($0).trimmingSpaces }
                let heAAC = names.contains("mp4a.40.5") || names.contains("mp4a.40.29")
                if heAAC, let bandwidth = variant.bandwidth, bandwidth > 64_000 * 11 / 10 {
                    add(.warning, location, "2.4 (SHOULD NOT): HE-AAC above 64 kb/s", expected: "AAC-LC above 64 kb/s", found: "\(variant.codecs ?? "") at \(bandwidth) b/s")
                }
                if let file = ManifestMedia.resolve(variant.uri, against: path) { media.append((file, variant)) }
            }
            if !document.variants.isEmpty, !document.variants.contains(where: { ($0.bandwidth ?? .max) <= 192_000 }) {
                add(.error, "the playlist", "9.21 (MUST, iOS cellular): a variant at or below 192 kb/s",
                    expected: "a BANDWIDTH of at most 192000", found: "the least is \(document.variants.compactMap(\.bandwidth).min() ?? 0)")
            }
        } else {
            media.append((path, nil))
        }
        var targets: [(String, Int)] = []
        for (file, variant) in media {
            guard let text = try? ManifestText.read(file, what: "a playlist") else { continue }
            let playlist = HLSPlaylistDocument(text: text)
            let fileName = file.string
            if let target = playlist.targetDuration {
                targets.append((fileName, target))
                if target != 6 {
                    add(.warning, "line \(playlist.targetDurationLine ?? 0) EXT-X-TARGETDURATION", "7.5 (SHOULD): a target duration of 6 s",
                        expected: "6", found: "\(target)", file: fileName)
                }
                for segment in playlist.segments where segment.duration > Double(target) + 0.5 {
                    add(.error, "line \(segment.extinfLine) EXTINF", "7.7 (MUST): a segment at most 0.5 s past the target duration",
                        expected: "at most \(Double(target) + 0.5) s", found: "\(segment.duration) s", file: fileName)
                }
            }
            if playlist.endList {
                if playlist.playlistType != "VOD", playlist.playlistType != "EVENT" {
                    add(.error, "the playlist", "8.6 (MUST): EXT-X-PLAYLIST-TYPE:VOD in a VOD playlist", expected: "#EXT-X-PLAYLIST-TYPE:VOD",
                        found: playlist.playlistType ?? "none", file: fileName)
                }
            } else {
                if playlist.segments.count < 6 {
                    add(.error, "the playlist", "8.11 (MUST): at least six segments in a live playlist", expected: "6 or more",
                        found: "\(playlist.segments.count)", file: fileName)
                }
                if playlist.segments.contains(where: { $0.programDateTime == nil }) {
                    add(.error, "the playlist", "8.4 (MUST): EXT-X-PROGRAM-DATE-TIME in a live playlist", expected: "a date-time for the segments",
                        found: "segments without one", file: fileName)
                }
            }
            let fragmented = playlist.segments.contains { $0.uri.hasSuffix(".m4s") || $0.uri.hasSuffix(".mp4") || $0.uri.hasSuffix(".cmfa") }
            if fragmented, playlist.segments.contains(where: { $0.map == nil }) {
                add(.error, "the playlist", "8.20 (MUST): EXT-X-MAP for fMP4 segments", expected: "#EXT-X-MAP:URI=…", found: "segments without one", file: fileName)
            }
            if let map = playlist.segments.first?.map, let initPath = ManifestMedia.resolve(map.uri, against: file),
               let bytes = try? FileByteSource(regularFileAt: initPath), bytes.byteCount < 16 << 20,
               let header = try? bytes.read(at: 0, count: Int(bytes.byteCount)), !containsLoudnessBox(header) {
                add(.warning, "\(initPath.string)", "2.19 (SHOULD): a loudness box (ludt) in the fMP4 init segment",
                    expected: "moov/trak/udta/ludt", found: "none", file: fileName)
            }
            // 1.26, 1.27: VOD bit rates measured over the whole, against what the variant declares.
            if let variant, playlist.endList, let measured = measuredBitrates(playlist, file: file) {
                for (declared, value, rule) in [(variant.averageBandwidth, measured.average, "1.26 (MUST): AVERAGE-BANDWIDTH within 10 % of the measured average"),
                                                (variant.bandwidth, measured.peak, "1.27 (MUST): BANDWIDTH within 10 % of the measured peak")] {
                    guard let declared, declared > 0 else { continue }
                    if abs(Double(value - declared)) > 0.1 * Double(declared) {
                        add(.error, "line \(variant.tagLine) EXT-X-STREAM-INF", rule, expected: "\(declared) b/s ±10 %",
                            found: "\(value) b/s measured over \(file.string)'s segments")
                    }
                }
            }
        }
        if Set(targets.map(\.1)).count > 1 {
            add(.error, "the playlist", "8.2 (MUST): the same target duration in every media playlist", expected: "one EXT-X-TARGETDURATION",
                found: targets.map { "\($0.0): \($0.1)" }.joined(separator: ", "))
        }
        return found
    }

    /// The average (all the bits over the whole duration) and peak (the largest segment's)
    /// bit rates of a VOD playlist's segment files; `nil` when one is missing.
    static func measuredBitrates(_ playlist: HLSPlaylistDocument, file: FilePath) -> (average: Int, peak: Int)? {
        var bits = 0.0
        var seconds = 0.0
        var peak = 0.0
        for segment in playlist.segments {
            guard let path = ManifestMedia.resolve(segment.uri, against: file), let size = try? FileByteSource(regularFileAt: path).byteCount else { return nil }
            let length = Double(segment.byteRange?.length ?? size) * 8
            bits += length
            seconds += segment.duration
            if segment.duration > 0 { peak = max(peak, length / segment.duration) }
        }
        guard seconds > 0 else { return nil }
        return (Int((bits / seconds).rounded()), Int(peak.rounded()))
    }

    /// Whether an init segment's `moov` has a `ludt` in a track's `udta` (or the movie's).
    static func containsLoudnessBox(_ bytes: [UInt8]) -> Bool {
        func search(_ reader: ByteReader, path: BoxPath, depth: Int) -> Bool {
            guard depth < 6, var boxes = try? BoxIterator(reader, path: path) else { return false }
            while let box = try? boxes.next() {
                if box.header.type == "ludt" { return true }
                if ["moov", "trak", "udta"].contains(box.header.type.description), search(box.payload, path: box.path, depth: depth + 1) { return true }
            }
            return false
        }
        return search(ByteReader(bytes), path: .root, depth: 0)
    }
}
