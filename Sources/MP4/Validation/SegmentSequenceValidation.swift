public import MediaCore

/// A fragmented track checked as a player reads it: an init segment and its media segments (a
/// CMAF track, ISO/IEC 23000-19, or any fragmented ISO BMFF movie, 14496-12 8.8), or one
/// fragmented file that holds both. The rules:
///
/// - **brands** (14496-12 4.3; 23000-19 7.2): the init starts with `ftyp`; a media segment
///   holds no `ftyp`/`moov`; a segment's `styp`, when present, comes first;
/// - **the header** (23000-19 7.3.1): `moov` has an `mvex`, one track, and no samples;
/// - **one track per fragment** (23000-19 7.3.2.3): one `traf` per `moof`, for the init's track;
/// - **`mfhd`** (14496-12 8.8.5): present, its `sequence_number` increasing from fragment to
///   fragment;
/// - **`tfdt`** (14496-12 8.8.12; 23000-19 7.5.17 makes it mandatory): present, and each
///   fragment starting where the one before ended (continuity);
/// - **`tfhd`/`trun` addressing** (23000-19 7.5.16, 7.5.18): `default-base-is-moof` set,
///   no `base_data_offset`, a `data_offset` in every `trun`, the samples inside the `mdat` that
///   follows their `moof`;
/// - **whole frames** (for AAC): every sample lasts one frame, but the last of the sequence,
///   which may be shorter (it trims the tail) and must then end at the valid length;
/// - **`sidx`** (14496-12 8.16.3): `reference_ID` and `timescale` the track's, the earliest
///   presentation time the next fragment's `tfdt`, each reference's size and duration those of
///   the fragments it spans;
/// - the gapless signals of the init (``GaplessValidation``).
///
/// Severity: a rule a player depends on (continuity, the samples inside their `mdat`, one
/// track) is an error; a CMAF rule that a reader of plain fragmented MP4 does not need is an
/// error when the init claims CMAF (`cmfc`/`cmf2`), a warning for the segments of one that
/// does not, and not checked in a single fragmented file that does not.
///
/// The segment timings (``segments``) are what a manifest's durations are checked against.
public struct SegmentSequenceValidation: Sendable {
    /// One part of the source, as the caller names it (a file).
    public struct Part: Sendable, Hashable {
        /// Its name in findings.
        public var name: String
        /// Its length in bytes.
        public var byteCount: Int64

        /// A part.
        public init(name: String, byteCount: Int64) {
            self.name = name
            self.byteCount = byteCount
        }
    }

    /// What one part holds, in the track's media timescale.
    public struct SegmentTiming: Sendable, Hashable {
        /// The part's name.
        public var name: String
        /// The first fragment's decode time (`tfdt`), `nil` when the part has no fragment.
        public var firstDecodeTime: Int64?
        /// The sum of its samples' durations (the `trun`s').
        public var duration: Int64
        /// Its samples.
        public var sampleCount: Int
        /// Its `moof`s.
        public var fragmentCount: Int
        /// Its length in bytes.
        public var byteCount: Int64
    }

    /// The track the init declares, as manifests describe it.
    public struct TrackSummary: Sendable, Hashable {
        /// `track_ID`.
        public var trackID: UInt32
        /// The media timescale (`mdhd`).
        public var timescale: Int
        /// The sample entry's type (`mp4a`).
        public var sampleEntryType: FourCharacterCode
        /// The RFC 6381 codec name (``SampleEntry/codecsParameter``).
        public var codecs: String?
        /// The decoded sample rate (the AudioSpecificConfig's output rate), for AAC.
        public var sampleRate: Int?
        /// Channels (the AudioSpecificConfig's, else the sample entry's).
        public var channelCount: Int?
        /// The AudioSpecificConfig's audioObjectType, for AAC.
        public var audioObjectType: Int?
        /// One AAC frame in media units.
        public var frameDuration: Int64?
        /// The edit's `media_time` (the encoder's priming), 0 without an edit.
        public var priming: Int64
        /// The presented length in media units, from the edit (or `nil`).
        public var validLength: Int64?
        /// How far ``validLength`` may be from the samples' end: 1 when it came from an iTunSMPB
        /// counting HE-AAC's core samples (two media units each, so an odd length rounds), else 0.
        public var validLengthTolerance: Int64 = 0
    }

    /// Everything found, in file order.
    public var findings: [ValidationFinding] { found.elements }
    /// The findings as they are made, repeats counted.
    private var found = ValidationFindingList()
    /// The init's track (the first audio track, else the first track); `nil` when it has none.
    public private(set) var track: TrackSummary?
    /// One timing per media segment part (every part after the first; for a single part, the
    /// part itself).
    public private(set) var segments: [SegmentTiming] = []
    /// Whether the init's `ftyp` claims CMAF (`cmfc` or `cmf2`).
    public private(set) var claimsCMAF = false
    /// The parts' names, by index.
    private var partNames: [String] = []
    /// The most samples walked one by one: the source's bytes.
    private var sampleBudget = 0
    /// How far a sample may be from ``TrackSummary/frameDuration``: 1 where a frame is no whole
    /// number of the timescale's units (44.1 kHz in a 90-kHz timescale: 2089 and 2090), else 0.
    private var frameTolerance: UInt64 = 0
    /// Whether the CMAF track rules apply: the init claims CMAF, or it has one track (a
    /// fragmented movie of several tracks is checked by the ISO BMFF rules only).
    private var isTrackFile = false

    /// Checks `source`, the parts end to end.
    ///
    /// - Throws: ``MP4Error`` when the init segment cannot be read as a movie at all.
    public init(source: some RandomAccessByteSource, parts: [Part]) throws(MP4Error) {
        // Of several parts, the movie is the first (the init segment): read alone, so that the
        // segments' fragments are read once, by the walk, and never held (a playlist of 200,000
        // segments would otherwise hold every sample's size and duration).
        let movie = parts.count > 1 ? try MP4File(source: LeadingBytes(base: source, byteCount: parts[0].byteCount))
            : try MP4File(source: source)
        try self.init(file: movie, source: source, parts: parts)
    }

    /// The first `byteCount` bytes of `base`.
    private struct LeadingBytes<Base: RandomAccessByteSource>: RandomAccessByteSource {
        let base: Base
        let byteCount: Int64

        init(base: Base, byteCount: Int64) {
            self.base = base
            self.byteCount = max(0, min(byteCount, base.byteCount))
        }

        func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
            guard offset < byteCount, count > 0 else { return [] }
            return try base.read(at: offset, count: Int(min(Int64(count), byteCount - offset)))
        }
    }

    /// Checks `source`, the parts end to end, whose structure `file` already read (a caller
    /// that has parsed the movie does not parse it again).
    ///
    /// - Throws: ``MP4Error`` when a read of `source` fails.
    public init(file: MP4File, source: some RandomAccessByteSource, parts: [Part]) throws(MP4Error) {
        let initName = parts.first?.name ?? "init"
        partNames = parts.map(\.name)
        claimsCMAF = file.fileType.map { ftyp in ([ftyp.majorBrand] + ftyp.compatibleBrands).contains { $0 == "cmfc" || $0 == "cmf2" } } ?? false
        // The reader's damage in the init; the segments' is found by the walk, part by part.
        found += file.damageFindings(name: initName, within: parts.count > 1 ? 0..<(parts.first?.byteCount ?? 0) : nil)
        found += GaplessValidation.findings(in: file, name: initName)
        let empty = parts.map { SegmentTiming(name: $0.name, firstDecodeTime: nil, duration: 0, sampleCount: 0, fragmentCount: 0, byteCount: $0.byteCount) }
        segments = parts.count <= 1 ? empty : Array(empty.dropFirst())
        guard let index = file.tracks.firstIndex(where: { $0.mediaType == .audio }) ?? file.tracks.indices.first else {
            found.append(ValidationFinding(.error, file: initName, location: "moov", rule: "a track", expected: "one trak", found: "none"))
            return
        }
        let trak = file.tracks[index]
        isTrackFile = claimsCMAF || file.tracks.count == 1
        track = Self.summary(of: trak, in: file)
        sampleBudget = Int(clamping: source.byteCount)
        if case .audio(let audio)? = try? trak.audioSpecificConfig()?.formatDescription() {
            frameTolerance = UInt64(GaplessValidation.frameTolerance(audio, timescale: trak.timescale))
        }
        checkHeader(file, trackIndex: index, name: initName, isSegmented: parts.count > 1)
        try walk(source: source, parts: parts, file: file, track: trak)
    }

    // MARK: - The init

    private static func summary(of track: MP4Track, in file: MP4File) -> TrackSummary {
        let asc = try? track.audioSpecificConfig()
        let format: EncodedAudioFormat? = if let asc, case .audio(let audio)? = try? asc.formatDescription() { audio } else { nil }
        var frame: Int64?
        if let format, format.sampleRate > 0 {
            frame = Int64(exactly: (Double(format.framesPerPacket) * Double(track.timescale) / Double(format.sampleRate)).rounded())
        }
        let edit = track.mediaEdit
        // The valid length: the edit's duration, or (an edit of segment_duration 0, as CMAF's
        // offset edit list is) iTunSMPB's, in media units.
        var validLength = track.editedMediaDuration(movieTimescale: file.movieTimescale)
        var validLengthTolerance: Int64 = 0
        if validLength == nil, let format, format.sampleRate > 0 {
            let movieTags = file.userData.flatMap { try? MetadataTags.parse(udta: $0, path: BoxPath(components: ["moov", "udta"])) }
            let trackTags = track.userData.flatMap { try? MetadataTags.parse(udta: $0, path: track.path) }
            // iTunSMPB counts samples at the rate iTunes writes: the core's for HE-AAC (half the
            // output rate), else the output rate (as ``GaplessValidation`` reads it).
            let tagRate = asc.map { $0.sbrPresent && $0.samplingFrequency > 0 ? $0.samplingFrequency : format.sampleRate } ?? format.sampleRate
            if let gapless = trackTags?.gapless ?? movieTags?.gapless, gapless.originalSampleCount > 0 {
                validLength = Int64(exactly: (Double(gapless.originalSampleCount) * Double(track.timescale) / Double(tagRate)).rounded())
                validLengthTolerance = max(0, Int64((Double(track.timescale) / Double(tagRate)).rounded(.up)) - 1)
            }
        }
        return TrackSummary(trackID: track.id, timescale: track.timescale, sampleEntryType: track.sampleEntry?.type ?? "none",
                            codecs: track.sampleEntry?.codecsParameter, sampleRate: format?.sampleRate ?? track.sampleEntry?.audio?.sampleRate,
                            channelCount: format.map(\.channelCount).flatMap { $0 > 0 ? $0 : nil } ?? track.sampleEntry?.audio?.channelCount,
                            audioObjectType: asc.map { Int($0.audioObjectType.rawValue) }, frameDuration: frame,
                            priming: edit?.mediaTime ?? 0,
                            validLength: validLength, validLengthTolerance: validLengthTolerance)
    }

    private mutating func checkHeader(_ file: MP4File, trackIndex: Int, name: String, isSegmented: Bool) {
        let cmaf: ValidationFinding.Severity = claimsCMAF ? .error : .warning
        if file.topLevelBoxes.first?.type != "ftyp" {
            found.append(ValidationFinding(.error, file: name, location: file.topLevelBoxes.first.map { String(describing: $0.type) } ?? "(empty)",
                                              rule: "brands: the header starts with ftyp", expected: "ftyp first",
                                              found: file.topLevelBoxes.first.map { "\($0.type) first" } ?? "no box"))
        }
        if file.movieExtends == nil {
            found.append(ValidationFinding(.error, file: name, location: "moov", rule: "fragmented header: mvex",
                                              expected: "moov/mvex (the movie is fragmented)", found: "no mvex"))
        }
        if claimsCMAF && file.tracks.count != 1 {
            found.append(ValidationFinding(cmaf, file: name, location: "moov", rule: "CMAF header: one track",
                                              expected: "1 trak", found: "\(file.tracks.count)"))
        }
        let trak = file.tracks[trackIndex]
        // A plain fragmented file may hold samples in moov too (14496-12 8.8).
        if isTrackFile && (claimsCMAF || isSegmented) && trak.sampleTable.sampleCount > 0 {
            found.append(ValidationFinding(cmaf, file: name, location: "moov/trak[\(trackIndex + 1)]/mdia/minf/stbl",
                                              rule: "CMAF header: no samples in moov", expected: "0 samples", found: "\(trak.sampleTable.sampleCount)"))
        }
    }

    // MARK: - The fragments

    /// What the walk carries from fragment to fragment.
    private struct Progress {
        var sequenceNumber: UInt32?
        var decodeEnd: Int64?
        var samplesSeen = 0
        /// Whether the runs named more samples than there are bytes.
        var overBudget = false
        /// The last sample: where (part, moof path) and its duration, and where it ends.
        var lastSample: (part: Int, run: String, index: Int, duration: Int64, end: Int64)?
        var fragments = 0
    }

    private mutating func walk(source: some RandomAccessByteSource, parts: [Part], file: MP4File, track: MP4Track) throws(MP4Error) {
        var starts: [Int64] = []
        var total: Int64 = 0
        for part in parts {
            starts.append(total)
            total = total.saturatingAdding(part.byteCount)
        }
        // The last part starting at or before an offset, by binary search.
        func partIndex(_ offset: Int64) -> Int {
            var low = 0, high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle] <= offset { low = middle + 1 } else { high = middle }
            }
            return max(0, low - 1)
        }
        var progress = Progress()
        var timings = parts.map { SegmentTiming(name: $0.name, firstDecodeTime: nil, duration: 0, sampleCount: 0, fragmentCount: 0, byteCount: $0.byteCount) }
        // The CMAF addressing rules: errors when the init claims CMAF, warnings for segments
        // (HLS and DASH readers expect them), not checked in a plain fragmented file.
        let cmaf: ValidationFinding.Severity? = claimsCMAF ? .error : parts.count > 1 ? .warning : nil
        var parser = MovieFragmentParser(trackDefaults: Dictionary((file.movieExtends?.trackDefaults ?? []).map { ($0.trackID, $0) }, uniquingKeysWith: { a, _ in a }),
                                         decodeEnd: [:], fileSize: source.byteCount)
        var offset: Int64 = 0
        var boxIndexInPart = 0
        var currentPart = 0
        var moofInPart = 0
        var pendingMoof: (header: BoxHeader, runs: [FragmentRun], location: String)?
        var pendingSidx: [(location: String, part: Int, index: SegmentIndex, end: Int64)] = []
        var fragmentSpans: [(start: Int64, end: Int64, decodeTime: Int64, duration: Int64)] = []
        while offset + 8 <= source.byteCount {
            let head = try MP4File.read(source, at: offset, count: Int(min(32, source.byteCount - offset)))
            var reader = ByteReader(head, baseOffset: offset)
            let header: BoxHeader
            do {
                header = try BoxHeader.parse(from: &reader, containerRemaining: source.byteCount - offset, path: .root, allowOverrun: { $0 == "mdat" })
            } catch {
                let part = partIndex(offset)
                found.append(ValidationFinding(.error, file: parts[part].name, location: "byte \(offset - starts[part])",
                                                  rule: "box structure", expected: "a box header", found: "\(error)"))
                // The next segment is checked from its own start.
                guard part + 1 < parts.count else { break }
                offset = starts[part + 1]
                continue
            }
            let part = partIndex(offset)
            if part != currentPart {
                if let moof = pendingMoof {
                    found.append(ValidationFinding(.error, file: parts[currentPart].name, location: moof.location, rule: "moof followed by its mdat",
                                                      expected: "mdat", found: "the end of the segment"))
                    pendingMoof = nil
                }
                currentPart = part
                boxIndexInPart = 0
                moofInPart = 0
            }
            let name = parts[part].name
            let partEnd = starts[part].saturatingAdding(parts[part].byteCount)
            boxIndexInPart += 1
            if header.end > partEnd && parts.count > 1 {
                found.append(ValidationFinding(.error, file: name, location: "\(header.type) at byte \(offset - starts[part])",
                                                  rule: "a box ends inside its segment", expected: "\(partEnd - offset) bytes at most",
                                                  found: "\(header.size)"))
            }
            if let moof = pendingMoof, header.type != "mdat" {
                found.append(ValidationFinding(.error, file: name, location: moof.location, rule: "moof followed by its mdat",
                                                  expected: "mdat", found: "\(header.type)"))
                pendingMoof = nil
            }
            let isMediaSegment = part > 0 || parts.count == 1
            switch header.type {
            case "ftyp", "moov":
                if part > 0 {
                    found.append(ValidationFinding(.error, file: name, location: "\(header.type)", rule: "a media segment holds no header box",
                                                      expected: "styp, sidx, moof, mdat", found: "\(header.type)"))
                }
            case "styp":
                if boxIndexInPart != 1 && parts.count > 1 {
                    found.append(ValidationFinding(.error, file: name, location: "styp", rule: "brands: styp comes first in its segment",
                                                      expected: "box 1", found: "box \(boxIndexInPart)"))
                }
                if claimsCMAF, var payload = try? MP4File.payload(source, header, path: BoxPath.root.appending("styp")),
                   let styp = try? FileTypeBox(from: &payload, path: BoxPath.root.appending("styp")),
                   !([styp.majorBrand] + styp.compatibleBrands).contains(where: { ["cmfs", "cmff", "cmfl", "cmfc"].contains($0) }) {
                    found.append(ValidationFinding(.warning, file: name, location: "styp", rule: "brands: a CMAF segment's styp",
                                                      expected: "cmfs (or cmff, cmfl) among its brands",
                                                      found: ([styp.majorBrand] + styp.compatibleBrands).map(\.description).joined(separator: ",")))
                }
            case "sidx":
                let location = "sidx at byte \(offset - starts[part])"
                do {
                    let index = try SegmentIndex(from: try MP4File.payload(source, header, path: BoxPath.root.appending("sidx")), path: BoxPath.root.appending("sidx"))
                    pendingSidx.append((location, part, index, header.end))
                } catch {
                    found.append(ValidationFinding(.error, file: name, location: location, rule: "sidx", expected: "a readable sidx", found: "\(error)"))
                }
            case "moof":
                moofInPart += 1
                let location = "moof[\(moofInPart)]"
                let payload: ByteReader
                do { payload = try MP4File.payload(source, header, path: BoxPath.root.appending("moof")) } catch {
                    found.append(ValidationFinding(.error, file: name, location: location, rule: "moof", expected: "a readable moof", found: "\(error)"))
                    break
                }
                checkFragmentBoxes(payload, location: location, name: name, trackID: track.id, severity: cmaf, progress: &progress,
                                   trackRules: isTrackFile)
                let runs: [FragmentRun]
                do { runs = try parser.parse(moof: payload, moofOffset: header.offset, path: BoxPath.root.appending("moof")) } catch {
                    found.append(ValidationFinding(.error, file: name, location: location, rule: "moof", expected: "readable track runs", found: "\(error)"))
                    break
                }
                progress.fragments += 1
                let ours = runs.filter { $0.trackID == track.id }
                if let first = ours.first {
                    if let end = progress.decodeEnd, first.firstDecodeTime != end {
                        found.append(ValidationFinding(.error, file: name, location: "\(location)/traf/tfdt", rule: "tfdt continuity",
                                                          expected: "\(end) (where the fragment before ended)", found: "\(first.firstDecodeTime)"))
                    }
                    if isMediaSegment, timings[part].firstDecodeTime == nil { timings[part].firstDecodeTime = first.firstDecodeTime }
                }
                var duration: Int64 = 0
                for run in ours {
                    if run.descriptionIndex < 1 || run.descriptionIndex > track.sampleEntries.count {
                        found.append(ValidationFinding(.error, file: name, location: "\(location)/traf/tfhd", rule: "sample_description_index names an stsd entry",
                                                          expected: "1…\(track.sampleEntries.count)", found: "\(run.descriptionIndex)"))
                    }
                    duration = duration.saturatingAdding(run.duration)
                    checkSamples(run, location: "\(location)/traf/trun", part: part, name: name, progress: &progress)
                }
                if let first = ours.first { progress.decodeEnd = first.firstDecodeTime.saturatingAdding(duration) }
                timings[part].duration = timings[part].duration.saturatingAdding(duration)
                timings[part].sampleCount += ours.reduce(0) { $0 + $1.sampleCount }
                timings[part].fragmentCount += 1
                pendingMoof = (header, ours, location)
            case "mdat":
                if let moof = pendingMoof {
                    for run in moof.runs where run.sampleCount > 0 {
                        let end = run.dataOffset.saturatingAdding(run.byteCount)
                        if run.dataOffset < header.payloadOffset || end > min(header.end, partEnd) {
                            found.append(ValidationFinding(.error, file: name, location: "\(moof.location)/traf/trun", rule: "samples inside the mdat that follows",
                                                              expected: "bytes \(header.payloadOffset - starts[part])..<\(min(header.end, partEnd) - starts[part])",
                                                              found: "bytes \(run.dataOffset - starts[part])..<\(end - starts[part])"))
                        }
                    }
                    let start = moof.header.offset
                    let time = moof.runs.first?.firstDecodeTime ?? 0
                    fragmentSpans.append((start, header.end, time, moof.runs.reduce(Int64(0)) { $0.saturatingAdding($1.duration) }))
                    pendingMoof = nil
                }
            default:
                break
            }
            // A box past its segment's end: the next segment is checked from its own start.
            if parts.count > 1 && header.end > partEnd {
                offset = partEnd
                continue
            }
            if header.end > source.byteCount { break }
            offset = header.end
        }
        if let moof = pendingMoof {
            found.append(ValidationFinding(.error, file: parts[currentPart].name, location: moof.location, rule: "moof followed by its mdat",
                                              expected: "mdat", found: "the end of the segment"))
        }
        for sidx in pendingSidx {
            checkSegmentIndex(sidx.index, location: sidx.location, name: parts[sidx.part].name, end: sidx.end, trackID: track.id,
                              timescale: track.timescale, spans: fragmentSpans)
        }
        checkEnd(progress, parts: parts, firstDecodeTime: (parts.count == 1 ? timings.first : timings.dropFirst().first)?.firstDecodeTime)
        segments = parts.count == 1 ? timings : Array(timings.dropFirst())
    }

    /// `mfhd`, the `traf` count and `tfhd`/`tfdt`/`trun` flags of one `moof`.
    private mutating func checkFragmentBoxes(_ payload: ByteReader, location: String, name: String, trackID: UInt32,
                                             severity: ValidationFinding.Severity?, progress: inout Progress, trackRules: Bool) {
        var sequence: UInt32?
        var trafs = 0
        guard var children = try? BoxIterator(payload, path: BoxPath.root.appending("moof")) else { return }
        while let child = try? children.next() {
            switch child.header.type {
            case "mfhd":
                var reader = child.payload
                if (try? FullBoxHeader.parse(from: &reader, path: child.path)) != nil { sequence = try? reader.readUInt32() }
            case "traf" where trackRules:
                trafs += 1
                checkTrackFragment(child.payload, path: child.path, location: "\(location)/traf", name: name, trackID: trackID, severity: severity)
            default:
                break
            }
        }
        if let sequence {
            if let previous = progress.sequenceNumber, sequence <= previous {
                found.append(ValidationFinding(.error, file: name, location: "\(location)/mfhd", rule: "mfhd sequence_number increases",
                                                  expected: "more than \(previous)", found: "\(sequence)"))
            }
            progress.sequenceNumber = sequence
        } else {
            found.append(ValidationFinding(.error, file: name, location: "\(location)/mfhd", rule: "mfhd present",
                                              expected: "an mfhd", found: "none"))
        }
        if trackRules, let severity, trafs != 1 {
            found.append(ValidationFinding(severity, file: name, location: location, rule: "one track per fragment",
                                              expected: "1 traf", found: "\(trafs)"))
        }
    }

    private mutating func checkTrackFragment(_ payload: ByteReader, path: BoxPath, location: String, name: String, trackID: UInt32,
                                             severity: ValidationFinding.Severity?) {
        guard var children = try? BoxIterator(payload, path: path) else { return }
        var tfdt = false
        var tfhd = false
        while let child = try? children.next() {
            var reader = child.payload
            switch child.header.type {
            case "tfhd":
                tfhd = true
                guard let full = try? FullBoxHeader.parse(from: &reader, path: child.path), let id = try? reader.readUInt32() else { continue }
                if id != trackID {
                    found.append(ValidationFinding(.error, file: name, location: "\(location)/tfhd", rule: "one track per fragment: the init's track",
                                                      expected: "track_ID \(trackID)", found: "\(id)"))
                }
                if let severity, full.flags & 0x01 != 0 {
                    found.append(ValidationFinding(severity, file: name, location: "\(location)/tfhd", rule: "CMAF: no base_data_offset",
                                                      expected: "base-data-offset-present 0", found: "1"))
                }
                if let severity, full.flags & 0x02_0000 == 0 {
                    found.append(ValidationFinding(severity, file: name, location: "\(location)/tfhd", rule: "CMAF: default-base-is-moof",
                                                      expected: "1", found: "0"))
                }
            case "tfdt":
                tfdt = true
            case "trun":
                guard let full = try? FullBoxHeader.parse(from: &reader, path: child.path) else { continue }
                if let severity, full.flags & 0x01 == 0 {
                    found.append(ValidationFinding(severity, file: name, location: "\(location)/trun", rule: "CMAF: trun data_offset",
                                                      expected: "data-offset-present 1", found: "0"))
                }
            default:
                break
            }
        }
        if !tfhd {
            found.append(ValidationFinding(.error, file: name, location: "\(location)/tfhd", rule: "tfhd present", expected: "a tfhd", found: "none"))
        }
        if let severity, !tfdt {
            found.append(ValidationFinding(severity, file: name, location: "\(location)/tfdt", rule: "CMAF: tfdt present",
                                              expected: "a tfdt", found: "none"))
        }
    }

    /// Whole frames: every sample one frame long, but the sequence's last.
    private mutating func checkSamples(_ run: FragmentRun, location: String, part: Int, name: String, progress: inout Progress) {
        guard let frame = track?.frameDuration, frame > 0 else { return }
        // Every sample has a byte at least: runs that name more samples than the source has
        // bytes overlap (their bytes are checked against their mdat), and are not walked.
        guard progress.samplesSeen.addingReportingOverflow(run.sampleCount).partialValue <= sampleBudget else {
            if !progress.overBudget {
                progress.overBudget = true
                found.append(ValidationFinding(.error, file: name, location: location, rule: "whole frames: a byte per sample at least",
                                                  expected: "at most \(sampleBudget) samples (the bytes there are)", found: "more: runs that overlap"))
            }
            return
        }
        var time = run.firstDecodeTime
        for i in 0..<run.sampleCount {
            let duration = Int64(run.durations?[i] ?? run.defaultDuration)
            let size = run.sizes?[i] ?? run.defaultSize
            // The sample before this one was not the last: it had to be a whole frame (within a
            // unit where a frame is no whole number of the timescale's units).
            if let last = progress.lastSample, last.duration.saturatingSubtracting(frame).magnitude > frameTolerance {
                found.append(ValidationFinding(.error, file: partNames[last.part], location: "\(last.run) sample \(last.index)",
                                                  rule: "whole frames: a sample lasts one frame (but the last)",
                                                  expected: "\(frame)", found: "\(last.duration)"))
            }
            if size == 0 {
                found.append(ValidationFinding(.error, file: name, location: "\(location) sample \(i + 1)", rule: "whole frames: no empty sample",
                                                  expected: "an AAC frame's bytes", found: "0 bytes"))
            }
            time = time.saturatingAdding(duration)
            progress.lastSample = (part, location, i + 1, duration, time)
            progress.samplesSeen += 1
        }
    }

    /// The sequence's last sample: at most a frame; when short, it ends at the valid length.
    private mutating func checkEnd(_ progress: Progress, parts: [Part], firstDecodeTime: Int64?) {
        guard let last = progress.lastSample, let summary = self.track, let frame = summary.frameDuration else { return }
        let name = parts[last.part].name
        let location = "\(last.run) sample \(last.index)"
        if last.duration > frame + Int64(frameTolerance) || last.duration <= 0 {
            found.append(ValidationFinding(.error, file: name, location: location, rule: "whole frames: the last sample at most a frame",
                                              expected: "1…\(frame)", found: "\(last.duration)"))
        }
        // The valid length counts from the first sample: a sequence that starts later (a live
        // window) is not checked against it.
        guard let valid = summary.validLength, (firstDecodeTime ?? 0) == 0 else { return }
        let presentedEnd = summary.priming.saturatingAdding(valid)
        if last.duration < frame && last.end.saturatingSubtracting(presentedEnd).magnitude > UInt64(summary.validLengthTolerance) {
            found.append(ValidationFinding(.error, file: name, location: location, rule: "short last sample against the valid length",
                                              expected: "the samples to end at \(presentedEnd) (the edit's end)", found: "\(last.end)"))
        } else if last.end < presentedEnd.saturatingSubtracting(summary.validLengthTolerance) {
            found.append(ValidationFinding(.error, file: name, location: location, rule: "the samples cover the valid length",
                                              expected: "the samples to end at \(presentedEnd) or later (the edit's end)", found: "\(last.end)"))
        }
    }

    /// `sidx` against the fragments it indexes.
    private mutating func checkSegmentIndex(_ index: SegmentIndex, location: String, name: String, end: Int64, trackID: UInt32, timescale: Int,
                                            spans: [(start: Int64, end: Int64, decodeTime: Int64, duration: Int64)]) {
        if index.referenceID != trackID {
            found.append(ValidationFinding(.error, file: name, location: "\(location)", rule: "sidx reference_ID", expected: "\(trackID)", found: "\(index.referenceID)"))
        }
        guard index.timescale > 0 else {
            found.append(ValidationFinding(.error, file: name, location: "\(location)", rule: "sidx timescale", expected: "more than 0", found: "0"))
            return
        }
        if Int(index.timescale) != timescale {
            found.append(ValidationFinding(.warning, file: name, location: "\(location)", rule: "sidx timescale", expected: "\(timescale) (the track's)", found: "\(index.timescale)"))
        }
        func scaled(_ value: Int64) -> Int64 { Int64(saturating: Double(value) * Double(index.timescale) / Double(max(timescale, 1))) }
        // Writers differ on whether the index's times are decode times (FFmpeg) or presentation
        // times after the edit that skips the priming (14496-12's "earliest presentation
        // time"): either is taken.
        let skip = self.track?.priming ?? 0
        func presented(_ time: Int64) -> Int64 { max(0, time.saturatingSubtracting(skip)) }
        // The fragments are in file order: the first at or after an offset by binary search.
        func firstSpan(atOrAfter offset: Int64) -> Int {
            var low = 0, high = spans.count
            while low < high {
                let middle = (low + high) / 2
                if spans[middle].start < offset { low = middle + 1 } else { high = middle }
            }
            return low
        }
        var position = end.saturatingAdding(Int64(clamping: index.firstOffset))
        let firstIndex = firstSpan(atOrAfter: position)
        if firstIndex < spans.count, spans[firstIndex].start == position {
            let first = spans[firstIndex]
            let time = Int64(clamping: index.earliestPresentationTime)
            if time != scaled(first.decodeTime) && time != scaled(presented(first.decodeTime)) {
                found.append(ValidationFinding(.error, file: name, location: "\(location)", rule: "sidx earliest_presentation_time",
                                                  expected: "\(scaled(first.decodeTime)) (the next fragment's tfdt) or \(scaled(presented(first.decodeTime))) (after the edit)",
                                                  found: "\(index.earliestPresentationTime)"))
            }
        }
        for (number, reference) in index.references.enumerated() {
            let rangeEnd = position.saturatingAdding(Int64(reference.size))
            defer { position = rangeEnd }
            // A reference to another sidx (a hierarchical index) is checked by that sidx.
            guard !reference.isIndex else { continue }
            let from = firstSpan(atOrAfter: position)
            var next = from
            while next < spans.count, spans[next].end <= rangeEnd { next += 1 }
            let covered = spans[from..<next]
            let duration = covered.reduce(Int64(0)) { $0.saturatingAdding($1.duration) }
            if covered.first?.start != position || covered.last?.end != rangeEnd {
                found.append(ValidationFinding(.error, file: name, location: "\(location) reference \(number + 1)", rule: "sidx referenced_size",
                                                  expected: "a size that ends at a fragment's end", found: "\(reference.size) bytes from byte \(position)"))
            } else if let start = covered.first?.decodeTime {
                let afterEdit = presented(start.saturatingAdding(duration)) - presented(start)
                if Int64(reference.duration) != scaled(duration) && Int64(reference.duration) != scaled(afterEdit) {
                    found.append(ValidationFinding(.error, file: name, location: "\(location) reference \(number + 1)", rule: "sidx subsegment_duration",
                                                      expected: "\(scaled(duration)) (the fragments' samples) or \(scaled(afterEdit)) (after the edit)",
                                                      found: "\(reference.duration)"))
                }
            }
        }
    }
}
