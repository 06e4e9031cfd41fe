internal import SystemPackage

/// The files of an HLS rendition in its directory: the init segment (the CMAF header), the
/// segments and parts (CMAF segments and chunks, ISO/IEC 23000-19 7.3.3), the DASH header and
/// the playlist, each written atomically (under a temporary name, renamed when complete: a
/// reader sees whole files only).
///
/// A live rendition's files are also copied into its remote replicas (``ObjectStoreReplica``)
/// as they are written, and removed from them when they leave the window.
///
/// It remembers what it wrote, so that ``removeAll()`` (a cancel or an error) takes it away and
/// ``keepAll()`` keeps it; removes the files of segments that left a live window; and, for a
/// packaged (VOD) rendition, holds the first segment back until its iTunSMPB's numbers are known
/// (``writeHeldFirstSegment(userData:)``).
struct HLSSegmentStore {
    /// The init segment's file name, `init.mp4` (`EXT-X-MAP`, RFC 8216 4.3.2.5).
    static let initSegmentName = "init.mp4"

    /// A part written (low-latency HLS) whose segment is still being recorded.
    struct OpenPart: Sendable, Hashable {
        /// The file name in the directory.
        var name: String
        /// The chunk (`moof` + `mdat`), kept for the segment the parts make.
        var bytes: [UInt8]
        /// Media units.
        var duration: Int64
        /// The media timescale.
        var timescale: Int32

        /// The playlist's `EXT-X-PART` for it (draft-pantos-hls-rfc8216bis 4.4.4.9).
        var playlistPart: HLSMediaPlaylist.Part {
            HLSMediaPlaylist.Part(uri: name, duration: Double(duration) / Double(max(timescale, 1)))
        }
    }

    /// The directory written.
    let directory: FilePath
    /// Whether a DASH header is written.
    let writesDASHHeader: Bool
    /// Whether the first segment carries iTunSMPB, and so is held back until the end (VOD).
    let tagsFirstSegment: Bool
    /// Whether each segment is synced as it is written (live: the playlist names it at once).
    let syncsSegments: Bool
    /// Remote stores each file written is copied into, and each file removed is removed from.
    var replicas: [ObjectStoreReplica] = []
    /// What a file's name in ``replicas`` starts with (`64k/`).
    var replicaPrefix = ""

    /// The segments written so far (a held first segment among them), in order.
    private(set) var segments: [HLSSegmentOutput.WrittenSegment] = []
    /// Low-latency HLS: the parts of the segment being recorded.
    private(set) var openParts: [OpenPart] = []
    /// The segments' durations added up, in media units.
    private(set) var mediaDuration: Int64 = 0
    /// The files written and not yet kept, for ``removeAll()``.
    private var written: [FilePath] = []
    /// Whether the directory was made here (``removeAll()`` removes it when empty).
    private let createdDirectory: Bool
    /// Segments whose files were removed (they left a live window), from the first.
    private var removedSegments = 0
    /// VOD: the first segment, kept until its iTunSMPB's numbers are known.
    private var heldFirstSegment: [UInt8]?

    /// The files in `directory` (made if missing).
    ///
    /// - Throws: ``/MediaCore/PipelineError`` when `directory` already holds a package (its playlist
    ///   `playlistName`, an init segment, a first segment or a master playlist: that playlist
    ///   would name files this one overwrites), or when it cannot be made.
    init(directory: FilePath, playlistName: String, writesDASHHeader: Bool, tagsFirstSegment: Bool, syncsSegments: Bool,
         segmentExtension: String = "m4s") throws(PipelineError) {
        let names = [playlistName, Self.initSegmentName, HLSSegmentOutput.dashHeaderName, Self.segmentName(1), Self.segmentName(1, extension: "aac"),
                     "master.m3u8"]
        for name in names where FileSystemCalls.exists(directory.appending(name)) {
            throw .unsupported("\(directory) already holds a package (\(name)); choose another directory or remove it")
        }
        createdDirectory = !FileSystemCalls.exists(directory)
        do { try FileSystemCalls.makeDirectories(directory) } catch {
            throw .stream(.system(operation: "make the directory", path: directory, errno: error))
        }
        self.directory = directory
        self.writesDASHHeader = writesDASHHeader
        self.tagsFirstSegment = tagsFirstSegment
        self.syncsSegments = syncsSegments
        self.segmentExtension = segmentExtension
    }

    /// The segments' extension: `m4s` (CMAF) or `aac` (packed audio).
    let segmentExtension: String

    /// `segment-00001.m4s` (or another extension).
    static func segmentName(_ number: UInt32, extension ext: String = "m4s") -> String {
        let digits = String(number)
        return "segment-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits + "." + ext
    }

    /// `segment-00001.2.m4s`: part 2 of segment 1.
    static func partName(segment: Int, part: Int) -> String {
        String(segmentName(UInt32(segment)).dropLast(4)) + ".\(part).m4s"
    }

    /// The name the next part will have (the playlist's preload hint, draft-pantos-hls-rfc8216bis
    /// 4.4.5.3).
    var nextPartName: String { Self.partName(segment: segments.count + 1, part: openParts.count + 1) }

    /// The `udta` the next segment's `moof` ends with: a packaged rendition's first segment
    /// carries iTunSMPB (the header's numbers, for readers that take the first `moof`'s, and for
    /// DASH, whose header has none), a placeholder of the same size until the numbers are known;
    /// else none. The segment is the same with or without a DASH header.
    var nextSegmentUserData: [UInt8] {
        holdsNextSegment ? CMAFSegmenter.gaplessUserData(priming: 0, padding: 0, validFrameCount: 0) : []
    }

    private var holdsNextSegment: Bool { tagsFirstSegment && segments.isEmpty }

    /// Writes the init segment (`init.mp4`; live, again at the end, over the first).
    mutating func writeInitSegment(_ bytes: [UInt8]) throws(PipelineError) {
        try writeFile(Self.initSegmentName, bytes)
    }

    /// Writes the DASH header (``HLSSegmentOutput/dashHeaderName``).
    mutating func writeDASHHeader(_ bytes: [UInt8]) throws(PipelineError) {
        try writeFile(HLSSegmentOutput.dashHeaderName, bytes)
    }

    /// The chapters beside the playlist, as WebVTT (the player page lists them).
    static let chaptersName = "chapters.vtt"

    /// Writes the chapters file (``chaptersName``).
    mutating func writeChapters(_ text: String) throws(PipelineError) {
        try writeFile(Self.chaptersName, Array(text.utf8))
    }

    /// Writes `playlist` as `name`; the first time, a rendition of its own (not a ladder's)
    /// also puts the player page playing it beside it in its replicas.
    mutating func writePlaylist(_ playlist: HLSMediaPlaylist, name: String) throws(PipelineError) {
        try writeFile(name, Array(playlist.text.utf8))
        if !pagePut, !replicas.isEmpty, replicaPrefix.isEmpty {
            pagePut = true
            let page = Array(HLSOrigin.playerPage(playing: name).utf8)
            let attributes = HLSOrigin.objectAttributes(ofName: "index.html", contents: page)
            for replica in replicas { replica.put("index.html", page, attributes: attributes) }
        }
    }

    /// Whether the player page went to the replicas.
    private var pagePut = false

    /// Writes `segment` as the next segment (held back instead when it carries the gapless
    /// placeholder).
    mutating func write(_ segment: CMAFSegment) throws(PipelineError) {
        let name = Self.segmentName(UInt32(segments.count + 1), extension: segmentExtension)
        if holdsNextSegment { heldFirstSegment = segment.bytes } else { try writeFile(name, segment.bytes, syncing: syncsSegments) }
        segments.append(HLSSegmentOutput.WrittenSegment(name: name, byteCount: segment.bytes.count, duration: segment.duration,
                                                        timescale: segment.timescale))
        mediaDuration += segment.duration
    }

    /// Writes `chunk` as the next part of the segment being recorded.
    mutating func writePart(_ chunk: CMAFSegment) throws(PipelineError) {
        let name = nextPartName
        try writeFile(name, chunk.bytes)
        openParts.append(OpenPart(name: name, bytes: chunk.bytes, duration: chunk.duration, timescale: chunk.timescale))
    }

    /// Writes the parts recorded as a segment: a `styp` (ISO/IEC 23000-19 7.3.3), then each
    /// part's chunk. Nothing without parts.
    mutating func closeSegment() throws(PipelineError) {
        guard !openParts.isEmpty else { return }
        let bytes = CMAFSegmenter.segmentType + openParts.flatMap(\.bytes)
        let name = Self.segmentName(UInt32(segments.count + 1))
        try writeFile(name, bytes)
        let duration = openParts.reduce(Int64(0)) { $0 + $1.duration }
        var segment = HLSSegmentOutput.WrittenSegment(name: name, byteCount: bytes.count, duration: duration, timescale: openParts[0].timescale)
        segment.parts = openParts.map(\.playlistPart)
        segments.append(segment)
        mediaDuration += duration
        openParts.removeAll()
    }

    /// Writes the held first segment with its iTunSMPB (`userData`, from
    /// ``/MP4/CMAFSegmenter/gaplessUserData(validFrameCount:mediaDuration:)``), over the
    /// placeholder, the `moof`'s last box; nothing when none is held.
    mutating func writeHeldFirstSegment(userData tag: [UInt8]) throws(PipelineError) {
        guard var first = heldFirstSegment, let name = segments.first?.name else { return }
        // The moof follows the styp and the segment's event messages.
        var moofStart = CMAFSegmenter.segmentType.count
        while moofStart + 8 <= first.count, Array(first[(moofStart + 4)..<(moofStart + 8)]) == Array("emsg".utf8) {
            let size = first[moofStart..<(moofStart + 4)].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8 else { break }
            moofStart += size
        }
        guard moofStart + 8 <= first.count else { throw .unsupported("the first segment has no moof after its styp") }
        let moofEnd = moofStart + first[moofStart..<(moofStart + 4)].reduce(0) { $0 << 8 | Int($1) }
        let start = moofEnd - tag.count
        // The placeholder is the moof's last box, and the tag has its size.
        guard start > moofStart, moofEnd <= first.count, Array(first[(start + 4)..<(start + 8)]) == Array("udta".utf8) else {
            throw .unsupported("the first segment's gapless tag is not where it was written")
        }
        first.replaceSubrange(start..<moofEnd, with: tag)
        try writeFile(name, first, syncing: false)
        heldFirstSegment = nil
    }

    /// Syncs the file system: VOD segments, written without syncing, reach the disk before the
    /// init segment and the playlist name them.
    func syncFileSystem() throws(PipelineError) {
        do { try FileSystemCalls.syncFileSystem(containing: directory) } catch {
            throw .stream(.system(operation: "sync", path: directory, errno: error))
        }
    }

    /// Removes the files of the segments before the first `count` (and their parts) not yet
    /// removed: those that left a live window long enough ago (RFC 8216 6.2.2).
    mutating func removeSegments(before count: Int) {
        while removedSegments < count {
            let gone = segments[removedSegments]
            for name in [gone.name] + gone.parts.map(\.uri) {
                let path = directory.appending(name)
                try? FileSystemCalls.unlink(path)
                written.removeAll { $0 == path }
                for replica in replicas { replica.remove(replicaPrefix + name) }
            }
            removedSegments += 1
        }
    }

    /// Keeps every file written: ``removeAll()`` no longer removes them.
    mutating func keepAll() {
        written.removeAll()
    }

    /// Removes every file written and not kept, and the directory if it was made here (and is
    /// empty).
    mutating func removeAll() {
        for path in written {
            try? FileSystemCalls.unlink(path)
            if let name = path.lastComponent?.string { for replica in replicas { replica.remove(replicaPrefix + name) } }
        }
        written.removeAll()
        if createdDirectory { try? FileSystemCalls.removeDirectory(directory) }
    }

    /// Writes a file atomically. VOD segments are not synced one by one (``syncFileSystem()``
    /// syncs them all before anything names them); live ones are, since the playlist names each
    /// at once.
    private mutating func writeFile(_ name: String, _ bytes: [UInt8], syncing: Bool = true) throws(PipelineError) {
        let path = directory.appending(name)
        try FileByteSink.write(bytes, to: path, syncing: syncing)
        if !written.contains(path) { written.append(path) }
        if !replicas.isEmpty {
            let attributes = HLSOrigin.objectAttributes(ofName: name, contents: bytes, live: true)
            for replica in replicas { replica.put(replicaPrefix + name, bytes, attributes: attributes) }
        }
    }
}
