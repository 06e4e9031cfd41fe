public import MediaCore

/// The structure of an ISO BMFF file — MP4, M4A, MOV, fragmented MP4, or a CMAF init segment
/// followed by its media segments — read through random access: the top-level boxes are found
/// by their headers, `moov` and each `moof` are read whole (they are small), `mdat` is never read
/// here. Memory holds the sample tables, a few bytes per sample, never the media.
///
/// Damage that players play through — an `mdat` longer than the file, a broken track beside a
/// good one, trailing garbage — is reported in ``damage``; anything else is a thrown ``MP4Error``.
public struct MP4File: Sendable {
    /// The source's size in bytes.
    public let fileSize: Int64
    /// `ftyp` (or the first `styp`).
    public var fileType: FileTypeBox?
    /// `mvhd`.
    public var movieHeader: MovieHeaderBox?
    /// Every track, broken ones included (with their ``MP4Track/damage``).
    public var tracks: [MP4Track] = []
    /// `moov/udta` payload, when present.
    public var userData: ByteReader?
    /// The top-level boxes in file order, through the first movie fragment (`moof`) after `moov`:
    /// the boxes of a fragmented file's fragments are not kept, so that its size does not grow
    /// with them (``topLevelBoxCount`` counts them; ``MovieEditor/topLevelBoxes(of:)`` lists
    /// them all).
    public var topLevelBoxes: [BoxHeader] = []
    /// Every top-level box read, fragments included.
    public var topLevelBoxCount = 0
    /// Movie fragments (`moof`) read.
    public var fragmentCount = 0
    /// `mvex` (ISO/IEC 14496-12, 8.8.1), when `moov` has one: the movie is fragmented, even
    /// when no `moof` follows (an init segment).
    public var movieExtends: MovieExtendsBox?
    /// Damage found that does not stop playback, each with its kind, its byte offset where
    /// known, and a sentence naming the box path or offset.
    public var damage: [DamageEvent] = []
    /// Where the fragments' runs are read again from, sample by sample: the first `moof` after
    /// `moov` and the parser as `moov` left it. Nothing per fragment is kept.
    var fragmentStart: (offset: Int64, parser: MovieFragmentParser)?

    /// The largest `moov` or `moof` read into memory.
    public static let maximumHeaderBoxSize: Int64 = 1 << 30

    /// Reads the structure of `source`.
    public init(source: some RandomAccessByteSource) throws(MP4Error) {
        fileSize = source.byteCount
        var offset: Int64 = 0
        var moovSeen = false
        var defaults: [UInt32: TrackExtendsBox] = [:]
        var fragments: MovieFragmentParser?
        while offset + 8 <= fileSize {
            let header: BoxHeader
            do {
                header = try Self.header(source, at: offset, fileSize: fileSize)
            } catch {
                if case .stream = error { throw error }
                // Garbage after a complete movie is damage; before it, the file is broken.
                guard moovSeen else { throw error }
                damage.append(DamageEvent(.skippedBytes(count: fileSize - offset), at: offset,
                                          message: "\(error); the rest of the file (\(fileSize - offset) bytes) is ignored"))
                break
            }
            if fragmentStart == nil { topLevelBoxes.append(header) }
            topLevelBoxCount += 1
            let path = BoxPath.root.appending(header.type)
            switch header.type {
            case "ftyp", "styp":
                if fileType == nil {
                    var payload = try Self.payload(source, header, path: path)
                    fileType = try FileTypeBox(from: &payload, path: path)
                }
            case "moov":
                guard !moovSeen else {
                    damage.append(DamageEvent(.ignored, at: header.offset, message: "a second moov at byte \(header.offset) is ignored"))
                    break
                }
                moovSeen = true
                try parseMovie(try Self.payload(source, header, path: path), path: path, defaults: &defaults)
                // Track ids should be unique; a file where they are not keeps the first track's.
                let ends = Dictionary(tracks.map { ($0.id, $0.sampleTable.totalDuration) }, uniquingKeysWith: { first, _ in first })
                fragments = MovieFragmentParser(trackDefaults: defaults, decodeEnd: ends, fileSize: fileSize)
            case "moof":
                guard var parser = fragments else {
                    damage.append(DamageEvent(.ignored, at: header.offset,
                                              message: "a moof at byte \(header.offset) comes before any moov and is ignored"))
                    break
                }
                let payload = try Self.payload(source, header, path: path)
                if fragmentStart == nil, let start = fragments { fragmentStart = (header.offset, start) }
                do {
                    let runs = try parser.parse(moof: payload, moofOffset: header.offset, path: path)
                    fragments = parser
                    fragmentCount += 1
                    for run in runs {
                        guard let index = tracks.firstIndex(where: { $0.id == run.trackID }) else {
                            damage.append(DamageEvent(.ignored, at: header.offset,
                                                      message: "moof at byte \(header.offset): a run for track \(run.trackID), which moov does not declare"))
                            continue
                        }
                        tracks[index].fragments.add(run)
                    }
                } catch {
                    damage.append(DamageEvent(.ignored, at: header.offset, message: "\(error); this fragment is skipped"))
                }
            default:
                break
            }
            if header.end > fileSize {
                damage.append(DamageEvent(.truncated(declared: header.size, available: fileSize - header.offset), at: header.offset,
                                          message: "\(header.type) at byte \(header.offset) declares \(header.size) bytes but the file ends after \(fileSize - header.offset)"))
                break
            }
            offset = header.end
        }
        if offset < fileSize && offset + 8 > fileSize && damage.isEmpty && offset > 0 {
            damage.append(DamageEvent(.skippedBytes(count: fileSize - offset), at: offset,
                                      message: "\(fileSize - offset) stray bytes at the end of the file (byte \(offset))"))
        }
        guard moovSeen else { throw .noMovie(offset: offset) }
    }

    /// The movie timescale (`mvhd`), 1000 when absent.
    public var movieTimescale: Int { Int(movieHeader?.timescale ?? 1000) }

    /// Whether the movie is fragmented: samples come from movie fragments, or `moov` has an
    /// `mvex` (ISO/IEC 14496-12, 8.8.1: "there might be Movie Fragment Boxes") and its tracks'
    /// sample tables are empty — an init segment, read as Firefox's MP4 parser reads it. A
    /// movie with an `mvex` whose samples are all in `moov` (FFmpeg's `frag_keyframe` without
    /// `empty_moov`, when one fragment holds everything) is not.
    public var isFragmented: Bool {
        if fragmentCount > 0 || tracks.contains(where: { $0.fragments.runCount > 0 }) { return true }
        return movieExtends != nil && tracks.allSatisfy { $0.sampleTable.sampleCount == 0 && $0.sampleTable.chunkOffsets.isEmpty }
    }

    /// The duration of the whole fragmented movie that `mvex/mehd` declares
    /// (`fragment_duration`), in seconds of the movie timescale; `nil` without `mehd`.
    public var fragmentDurationSeconds: Double? {
        guard let duration = movieExtends?.fragmentDuration, duration > 0 else { return nil }
        return Double(duration) / Double(movieTimescale)
    }

    /// The track with `id`.
    public func track(id: UInt32) -> MP4Track? { tracks.first { $0.id == id } }

    /// A cursor over the samples of track `id`'s fragments, reading them from the source as it
    /// goes.
    func fragmentCursor(trackID id: UInt32) -> FragmentCursor {
        let runs = track(id: id)?.fragments.runCount ?? 0
        guard runs > 0, let walk = fragmentWalk() else { return FragmentCursor(walk: nil, trackID: id, runCount: 0) }
        return FragmentCursor(walk: walk, trackID: id, runCount: runs)
    }

    /// A walk of the fragments from the first `moof`, `nil` for a file without one.
    private func fragmentWalk() -> FragmentWalk? {
        fragmentStart.map { FragmentWalk(from: $0.offset, parser: $0.parser, declaredTracks: Set(tracks.map(\.id))) }
    }

    /// The runs of track `id`'s movie fragments (ISO/IEC 14496-12, 8.8.8), read again from
    /// `source` (the source this file was read from): every run at once, so memory grows with
    /// the fragments; the demuxer reads them one `moof` at a time instead.
    public func fragmentRuns(trackID id: UInt32, in source: some RandomAccessByteSource) throws(MP4Error) -> [FragmentRun] {
        guard var walk = fragmentWalk() else { return [] }
        var runs: [FragmentRun] = []
        while let fragment = try walk.nextFragment(from: source) { runs += fragment.filter { $0.trackID == id } }
        return runs
    }

    // MARK: - Reading

    static func read(_ source: some RandomAccessByteSource, at offset: Int64, count: Int) throws(MP4Error) -> [UInt8] {
        do { return try source.read(at: offset, count: count) } catch { throw .stream(error) }
    }

    /// The header of the top-level box at `offset` (an `mdat` may claim more than the file has).
    static func header(_ source: some RandomAccessByteSource, at offset: Int64, fileSize: Int64) throws(MP4Error) -> BoxHeader {
        let head = try read(source, at: offset, count: Int(min(32, fileSize - offset)))
        var reader = ByteReader(head, baseOffset: offset)
        return try BoxHeader.parse(from: &reader, containerRemaining: fileSize - offset, path: .root, allowOverrun: { $0 == "mdat" })
    }

    /// The header at `offset` after the movie, or `nil` where one does not read (garbage after
    /// the movie ends the file, as ``init(source:)`` reads it).
    static func topLevelHeader(_ source: some RandomAccessByteSource, at offset: Int64, fileSize: Int64) throws(MP4Error) -> BoxHeader? {
        do { return try header(source, at: offset, fileSize: fileSize) } catch {
            if case .stream = error { throw error }
            return nil
        }
    }

    /// The payload of a small top-level box, read whole.
    static func payload(_ source: some RandomAccessByteSource, _ header: BoxHeader, path: BoxPath) throws(MP4Error) -> ByteReader {
        guard header.payloadSize <= maximumHeaderBoxSize else {
            throw .invalidBoxSize(path: path, offset: header.offset, size: header.size, reason: "is larger than the \(maximumHeaderBoxSize) bytes a header box may have")
        }
        let bytes = try read(source, at: header.payloadOffset, count: Int(header.payloadSize))
        guard bytes.count == Int(header.payloadSize) else {
            throw .truncated(path: path, BinaryReadError(offset: header.payloadOffset, needed: Int(header.payloadSize), available: bytes.count, unit: .bytes))
        }
        return ByteReader(bytes, baseOffset: header.payloadOffset)
    }

    // MARK: - moov

    private mutating func parseMovie(_ payload: ByteReader, path: BoxPath, defaults: inout [UInt32: TrackExtendsBox]) throws(MP4Error) {
        var children = try BoxIterator(payload, path: path)
        while let child = try children.next() {
            var reader = child.payload
            switch child.header.type {
            case "mvhd":
                movieHeader = try MovieHeaderBox(from: &reader, path: child.path)
            case "trak":
                tracks.append(Self.parseTrack(child.payload, path: child.path, damage: &damage))
            case "mvex":
                var extends = MovieExtendsBox()
                var inner = try BoxIterator(child.payload, path: child.path)
                while let box = try inner.next() {
                    var boxReader = box.payload
                    switch box.header.type {
                    case "trex":
                        let trex = try TrackExtendsBox(from: &boxReader, path: box.path)
                        defaults[trex.trackID] = trex
                        extends.trackDefaults.append(trex)
                    case "mehd":
                        extends.fragmentDuration = try MovieExtendsBox.fragmentDuration(from: &boxReader, path: box.path)
                    default:
                        continue
                    }
                }
                if movieExtends == nil { movieExtends = extends }
            case "udta":
                userData = child.payload
            default:
                continue
            }
        }
    }

    /// Parses a `trak`; a broken track is returned with its damage instead of failing the file.
    static func parseTrack(_ payload: ByteReader, path: BoxPath, damage: inout [DamageEvent]) -> MP4Track {
        var track = MP4Track(id: 0, path: path, handlerType: FourCharacterCode(rawValue: 0),
                             trackHeader: TrackHeaderBox.empty, mediaHeader: MediaHeaderBox.empty,
                             sampleEntries: [], editList: [], sampleTable: SampleTable(), fragments: FragmentTotals())
        do throws(MP4Error) {
            try parseTrackBoxes(payload, path: path, into: &track)
            if track.mediaHeader.timescale == 0 { throw MP4Error.missingBox(path: path.appending("mdia"), type: "mdhd") }
            if track.sampleEntries.isEmpty { throw MP4Error.missingBox(path: path.appending("mdia").appending("minf").appending("stbl"), type: "stsd") }
            for entry in track.sampleEntries { damage += entry.damage }
            for repair in track.sampleTable.repairs { damage.append(DamageEvent(.inconsistentHeader, message: repair)) }
            if let problem = track.sampleTable.consistencyProblem {
                damage.append(DamageEvent(.inconsistentHeader, message: "\(path): \(problem)"))
            }
        } catch {
            let event = DamageEvent(.unreadableTrack(id: track.id), at: payload.offset, message: "track \(track.id) is unreadable: \(error)")
            track.damage = DamageEvent(.unreadableTrack(id: track.id), at: payload.offset, message: error.description)
            damage.append(event)
        }
        return track
    }

    private static func parseTrackBoxes(_ payload: ByteReader, path: BoxPath, into track: inout MP4Track) throws(MP4Error) {
        var children = try BoxIterator(payload, path: path)
        var sawHeader = false
        while let child = try children.next() {
            var reader = child.payload
            switch child.header.type {
            case "tkhd":
                track.trackHeader = try TrackHeaderBox(from: &reader, path: child.path)
                track.id = track.trackHeader.trackID
                sawHeader = true
            case "edts":
                var inner = try BoxIterator(child.payload, path: child.path)
                while let box = try inner.next() {
                    guard box.header.type == "elst" else { continue }
                    var elst = box.payload
                    track.editList = try EditListEntry.parseList(from: &elst, path: box.path)
                }
            case "mdia":
                try parseMedia(child.payload, path: child.path, into: &track)
            case "tref":
                // TrackReferenceBox (ISO/IEC 14496-12, 8.3.3): typed lists of track IDs.
                var inner = try BoxIterator(child.payload, path: child.path)
                while let box = try inner.next() {
                    var ids = box.payload
                    let list = try MP4Error.reading(box.path) { () throws(BinaryReadError) -> [UInt32] in
                        var list: [UInt32] = []
                        while ids.remaining >= 4 { list.append(try ids.readUInt32()) }
                        return list
                    }
                    track.references[box.header.type, default: []] += list
                }
            case "udta":
                track.userData = child.payload
            default:
                continue
            }
        }
        guard sawHeader else { throw .missingBox(path: path, type: "tkhd") }
    }

    private static func parseMedia(_ payload: ByteReader, path: BoxPath, into track: inout MP4Track) throws(MP4Error) {
        // hdlr first: the sample entries are read by media type.
        var scan = try BoxIterator(payload, path: path)
        while let child = try scan.next() {
            guard child.header.type == "hdlr" else { continue }
            var reader = child.payload
            track.handlerType = try HandlerBox(from: &reader, path: child.path).handlerType
            break
        }
        var children = try BoxIterator(payload, path: path)
        while let child = try children.next() {
            var reader = child.payload
            switch child.header.type {
            case "mdhd":
                track.mediaHeader = try MediaHeaderBox(from: &reader, path: child.path)
            case "minf":
                var inner = try BoxIterator(child.payload, path: child.path)
                while let box = try inner.next() {
                    guard box.header.type == "stbl" else { continue }
                    try parseSampleTable(box.payload, path: box.path, into: &track)
                }
            default:
                continue
            }
        }
    }

    private static func parseSampleTable(_ payload: ByteReader, path: BoxPath, into track: inout MP4Track) throws(MP4Error) {
        var children = try BoxIterator(payload, path: path)
        let handler: FourCharacterCode? = track.handlerType.rawValue == 0 ? nil : track.handlerType
        while let child = try children.next() {
            var reader = child.payload
            switch child.header.type {
            case "stsd": track.sampleEntries = try SampleDescriptionBox.entries(&reader, path: child.path, handler: handler)
            case "stts": track.sampleTable.timeToSample = try SampleTableBoxes.timeToSample(&reader, path: child.path)
            case "ctts": track.sampleTable.compositionOffsets = try SampleTableBoxes.compositionOffsets(&reader, path: child.path)
            case "stsc":
                let (entries, repairs) = try SampleTableBoxes.sampleToChunk(&reader, path: child.path)
                track.sampleTable.sampleToChunk = entries
                track.sampleTable.repairs += repairs
            case "stsz": track.sampleTable.sampleSizes = try SampleTableBoxes.sampleSizes(&reader, path: child.path)
            case "stz2": track.sampleTable.sampleSizes = try SampleTableBoxes.compactSampleSizes(&reader, path: child.path)
            case "stco": track.sampleTable.chunkOffsets = try SampleTableBoxes.chunkOffsets(&reader, path: child.path, wide: false)
            case "co64": track.sampleTable.chunkOffsets = try SampleTableBoxes.chunkOffsets(&reader, path: child.path, wide: true)
            case "stss": track.sampleTable.syncSamples = try SampleTableBoxes.syncSamples(&reader, path: child.path)
            default: continue
            }
        }
    }
}

extension TrackHeaderBox {
    static let empty = TrackHeaderBox(flags: 0, trackID: 0, duration: 0, matrix: [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000], width: 0, height: 0)
}

extension MediaHeaderBox {
    static let empty = MediaHeaderBox(timescale: 0, duration: 0, language: "und")
}
