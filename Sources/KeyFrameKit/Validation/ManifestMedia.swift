internal import SystemPackage

/// A byte range of a file read as a source of its own (an HLS `EXT-X-BYTERANGE` sub-range,
/// RFC 8216 4.3.2.2).
struct FileRangeSource: RandomAccessByteSource {
    let file: FileByteSource
    let start: Int64
    let byteCount: Int64

    func read(at offset: Int64, count: Int) throws(ByteStreamError) -> [UInt8] {
        guard offset >= 0, count >= 0, offset < byteCount else { return [] }
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
        func open(_ reference: Reference) -> FileRangeSource? {
            guard let file = try? FileByteSource(path: reference.path.string) else {
                findings.append(ValidationFinding(.error, file: manifest, location: reference.location, rule: "the files it names exist",
                                                  expected: reference.path.string, found: "no such file (or not readable)"))
                return nil
            }
            guard let range = reference.range else { return FileRangeSource(file: file, start: 0, byteCount: file.byteCount) }
            guard range.start >= 0, range.length >= 0, range.start.addingReportingOverflow(range.length).partialValue <= file.byteCount,
                  !range.start.addingReportingOverflow(range.length).overflow else {
                findings.append(ValidationFinding(.error, file: manifest, location: reference.location, rule: "byte range inside its file",
                                                  expected: "at most \(file.byteCount) bytes", found: "\(range.length)@\(range.start)"))
                return nil
            }
            return FileRangeSource(file: file, start: range.start, byteCount: range.length)
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
        do {
            sequence = try SegmentSequenceValidation(source: ConcatenatedByteSource(sources), parts: parts)
        } catch {
            findings.append(ValidationFinding(.error, file: name(initSegment), location: initSegment.location, rule: "init segment",
                                              expected: "an ISO BMFF header (ftyp, moov)", found: "\(error)"))
        }
    }

    /// The timing of segment reference `index`, when it was read.
    func timing(_ index: Int) -> SegmentSequenceValidation.SegmentTiming? {
        guard let sequence, index < timingIndex.count, let position = timingIndex[index], position < sequence.segments.count else { return nil }
        return sequence.segments[position]
    }
}
