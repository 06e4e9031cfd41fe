internal import SystemPackage

/// A byte range of a file read as a source of its own (an HLS `EXT-X-BYTERANGE` sub-range,
/// RFC 8216 4.3.2.2, or a whole segment file), opened for each read: a playlist of thousands of
/// segments holds no descriptor per segment (the process's limit, often 1024, would make the
/// later ones look missing).
struct FileRangeSource: RandomAccessByteSource {
    let path: FilePath
    let start: Int64
    let byteCount: Int64

    func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        guard offset >= 0, count >= 0, offset < byteCount else { return [] }
        let file = try FileByteSource(regularFileAt: path)
        return try file.read(at: start + offset, count: Int(min(Int64(count), byteCount - offset)))
    }
}

/// The media files a manifest (an HLS playlist, a DASH MPD) names for one track: its init
/// segment and media segments, checked as one ``/MP4/SegmentSequenceValidation``.
struct ManifestMedia {
    /// One file (or byte range of one) the manifest names.
    struct Reference {
        /// The file.
        var path: FilePath
        /// The sub-range, when the manifest gives one.
        var range: (start: Int64, length: Int64)?
        /// Where the manifest names it (`line 12`, `Representation 0 segment 3`).
        var location: String
    }

    /// Findings about the files themselves (missing, a range past the end).
    var findings: [ValidationFinding] = []
    /// The sequence checked, when the init segment could be read.
    var sequence: SegmentSequenceValidation?
    /// For each segment reference, its index in `sequence.segments` (`nil` when it was not read).
    var timingIndex: [Int?] = []
    /// Each segment's length in bytes (0 when it was not read).
    var sizes: [Int64] = []

    /// Reads the files `manifest` names and checks them.
    init(manifest: String, initSegment: Reference, segments: [Reference]) {
        var sources: [FileRangeSource] = []
        var parts: [SegmentSequenceValidation.Part] = []
        // After this many files missing in a row, the rest are not looked for (an MPD's template
        // can name a million).
        let missingInARow = 16
        var missing = 0
        var notLookedFor = 0
        func open(_ reference: Reference) -> FileRangeSource? {
            guard missing < missingInARow else {
                notLookedFor += 1
                return nil
            }
            let size: Int64
            do { size = try FileByteSource(regularFileAt: reference.path).byteCount } catch {
                missing += 1
                findings.append(ValidationFinding(.error, file: manifest, location: reference.location, rule: "the files it names exist",
                                                  expected: reference.path.string, found: "cannot be read: \(error)"))
                return nil
            }
            missing = 0
            guard let range = reference.range else { return FileRangeSource(path: reference.path, start: 0, byteCount: size) }
            guard range.start >= 0, range.length >= 0, range.start.addingReportingOverflow(range.length).partialValue <= size,
                  !range.start.addingReportingOverflow(range.length).overflow else {
                findings.append(ValidationFinding(.error, file: manifest, location: reference.location, rule: "byte range inside its file",
                                                  expected: "at most \(size) bytes", found: "\(range.length)@\(range.start)"))
                return nil
            }
            return FileRangeSource(path: reference.path, start: range.start, byteCount: range.length)
        }
        func name(_ reference: Reference) -> String {
            reference.range.map { "\(reference.path.string)@\($0.start)" } ?? reference.path.string
        }
        guard let head = open(initSegment) else {
            timingIndex = segments.map { _ in nil }
            sizes = segments.map { _ in 0 }
            return
        }
        sources.append(head)
        parts.append(.init(name: name(initSegment), byteCount: head.byteCount))
        for segment in segments {
            if let source = open(segment) {
                timingIndex.append(sources.count - 1)
                sizes.append(source.byteCount)
                sources.append(source)
                parts.append(.init(name: name(segment), byteCount: source.byteCount))
            } else {
                timingIndex.append(nil)
                sizes.append(0)
            }
        }
        if notLookedFor > 0 {
            findings.append(ValidationFinding(.error, file: manifest, location: segments.last?.location ?? initSegment.location, rule: "the files it names exist",
                                              expected: "the files named", found: "\(missingInARow) missing in a row; the \(notLookedFor) after them not looked for"))
        }
        do {
            sequence = try SegmentSequenceValidation(source: ConcatenatedByteSource(sources), parts: parts)
        } catch {
            findings.append(ValidationFinding(.error, file: name(initSegment), location: initSegment.location, rule: "init segment",
                                              expected: "an ISO BMFF header (ftyp, moov)", found: "\(error)"))
        }
    }

    /// A URI of the playlist as a file beside it, or `nil` for a URL.
    static func resolve(_ uri: String, against playlist: FilePath) -> FilePath? {
        guard !uri.contains("://") else { return nil }
        let withoutQuery = String(uri.prefix { $0 != "?" && $0 != "#" })
        // A plain name (the usual segment URI): beside the playlist, without normalizing.
        if !withoutQuery.isEmpty, !withoutQuery.contains("/"), withoutQuery != ".", withoutQuery != ".." {
            return playlist.removingLastComponent().appending(withoutQuery)
        }
        let file = FilePath(withoutQuery)
        return file.isAbsolute ? file : playlist.removingLastComponent().appending(file.components).lexicallyNormalized()
    }

    /// The renditions of a ladder (an HLS master's variants, a DASH Adaptation Set's
    /// Representations) of one codec against each other: the same object type, rate and
    /// channels, so that a player switches without a glitch (a warning: CMAF's switching-set
    /// table, 23000-19 7.3.4, was not at hand to say which may differ).
    static func audioConfigurationFinding(_ a: SegmentSequenceValidation.TrackSummary, _ aName: String,
                                          _ b: SegmentSequenceValidation.TrackSummary, _ bName: String,
                                          file: String, location: String) -> ValidationFinding? {
        // Renditions of different codecs (AAC beside FLAC or Opus) are variants a player chooses
        // among by CODECS, switching decoders as it would between any two streams: no glitch
        // to warn of within one codec's configuration.
        guard a.sampleEntryType == b.sampleEntryType else { return nil }
        guard a.sampleRate != b.sampleRate || a.channelCount != b.channelCount || a.audioObjectType != b.audioObjectType else { return nil }
        func describe(_ track: SegmentSequenceValidation.TrackSummary) -> String {
            let objectType = track.sampleEntryType == "mp4a" ? " object type \(track.audioObjectType ?? 0)," : ""
            return "\(track.sampleEntryType)\(objectType) \(track.sampleRate ?? 0) Hz, \(track.channelCount ?? 0) channels"
        }
        return ValidationFinding(.warning, file: file, location: location, rule: "the renditions' audio configuration (a switch without a glitch)",
                                 expected: "\(describe(a)) (\(aName))", found: "\(describe(b)) (\(bName))")
    }

    /// The timing of segment reference `index`, when it was read.
    func timing(_ index: Int) -> SegmentSequenceValidation.SegmentTiming? {
        guard let sequence, index < timingIndex.count, let position = timingIndex[index], position < sequence.segments.count else { return nil }
        return sequence.segments[position]
    }
}
