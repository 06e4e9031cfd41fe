public import SystemPackage

/// Reading and writing the iTunes tags of an MP4/M4A/M4B without re-encoding: `keyframe tag`.
///
/// An edit is written **in place** when the new `moov` fits where the old one and the `free`
/// padding after it were (only those bytes change), and otherwise by a **streamed rewrite**: the
/// bytes before the `moov`, the new `moov` with its chunk offsets shifted, 2 KiB of fresh
/// padding, then the rest of the file copied, committed under the file's name with one
/// `rename(2)` so that the original survives any failure. Every box the edit does not touch is
/// kept byte for byte, the gapless edit list and iTunSMPB included. A file is known for an MP4 by
/// its bytes, through the ``/MediaFormats/MediaFormatRegistry`` given (`formats:`, `standard` by
/// default).
public enum Tagging {
    /// What a ``write(_:to:formats:)`` did.
    public struct WriteSummary: JobSummary, Sendable, Hashable {
        /// Whether the file was edited in place (else rewritten).
        public var inPlace: Bool
        /// Bytes written.
        public var bytesWritten: Int64
        /// The items now in the file.
        public var itemCount: Int
        /// What the job did: no pump runs (boxes are patched, or the file copied around the new
        /// movie), so no stages, only the ``/MediaCore/JobReport/elapsed`` time.
        public var report = JobReport()
    }

    /// The item list of the MP4 at `path`.
    public static func read(_ path: FilePath, formats: MediaFormatRegistry = .standard) throws(PipelineError) -> ITunesItemList {
        let source = try open(path, formats: formats)
        let file: MP4File
        do { file = try MP4File(source: source) } catch { throw .container(error) }
        do { return try MovieEditor.itemList(of: file, source: source) } catch { throw .container(error) }
    }

    /// Replaces the tags of the MP4 at `path` by what `edit` makes of them.
    public static func write(_ edit: (inout ITunesItemList) throws(PipelineError) -> Void, to path: FilePath,
                             formats: MediaFormatRegistry = .standard) throws(PipelineError) -> WriteSummary {
        let started = ContinuousClock.now
        return timed(try writeTags(edit, to: path, formats: formats), since: started)
    }

    /// ``write(_:to:formats:)``, untimed.
    private static func writeTags(_ edit: (inout ITunesItemList) throws(PipelineError) -> Void, to path: FilePath,
                                  formats: MediaFormatRegistry) throws(PipelineError) -> WriteSummary {
        let source = try open(path, formats: formats)
        // Only the top-level boxes and the movie's bytes are read: not the sample tables.
        let boxes: [BoxHeader]
        var items: ITunesItemList
        do {
            boxes = try MovieEditor.topLevelBoxes(of: source)
            items = try MovieEditor.itemList(boxes: boxes, source: source)
        } catch { throw .container(error) }
        try edit(&items)
        // In place when the tags fit the padding: planned from the moov's child headers and its
        // udta, written as the moov size and the new udta.
        let fast: MovieUserDataEdit?
        do { fast = try MovieEditor.editTags(boxes: boxes, source: source, items: items) } catch { throw .container(error) }
        if let fast {
            let patches = fast.patches
            do { try FilePatch.apply(patches, to: path) } catch { throw .stream(error) }
            return WriteSummary(inPlace: true, bytesWritten: Int64(patches.reduce(0) { $0 + $1.bytes.count }), itemCount: items.items.count)
        }
        let plan: MovieEdit
        do { plan = try MovieEditor.edit(boxes: boxes, source: source, items: items) } catch { throw .container(error) }
        return try commit(plan, boxes: boxes, source: source, path: path, itemCount: items.items.count)
    }

    /// Writes `plan` into the file at `path`: in place when it fits, else by a streamed rewrite
    /// committed with one `rename(2)`.
    static func commit(_ plan: MovieEdit, boxes: [BoxHeader], source: FileByteSource, path: FilePath,
                       itemCount: Int) throws(PipelineError) -> WriteSummary {
        if plan.fitsInPlace {
            let patches = plan.inPlacePatches
            do { try FilePatch.apply(patches, to: path) } catch { throw .stream(error) }
            return WriteSummary(inPlace: true, bytesWritten: Int64(patches.reduce(0) { $0 + $1.bytes.count }), itemCount: itemCount)
        }
        // A streamed rewrite: the head, the new movie, padding and chapter samples, the rest copied.
        // The movie's chunk offsets are already shifted; a fragmented file's fragments move by
        // the same amount, so their absolute offsets (a tfhd's base_data_offset, an mfra's
        // moof_offset) are shifted as they are copied.
        let size = source.byteCount
        let delta = plan.movieRange.lowerBound + Int64(plan.rewrittenBytes.count) - plan.paddingRange.upperBound
        let moved = boxes.filter { $0.offset >= plan.paddingRange.upperBound && ($0.type == "moof" || $0.type == "mfra") }
        let sink: FileByteSink
        // The file's own rewrite: the new file replaces it with one rename, the old one read whole.
        do { sink = try FileByteSink(path: path, replacingInput: true) } catch { throw .stream(error) }
        do throws(PipelineError) {
            do throws(ByteStreamError) {
                try sink.copy(from: source, range: 0..<plan.movieRange.lowerBound)
                try sink.write(plan.rewrittenBytes)
            } catch { throw .stream(error) }
            var position = plan.paddingRange.upperBound
            for box in moved where delta != 0 {
                do throws(ByteStreamError) {
                    try sink.copy(from: source, range: position..<box.offset)
                } catch { throw .stream(error) }
                guard box.size <= 64 << 20, box.end <= size else {
                    throw .container(.invalidBoxSize(path: BoxPath(components: [box.type == "moof" ? "moof" : "mfra"]), offset: box.offset,
                                                     size: box.size, reason: "larger than a fragment's header can be (64 MiB), or past the end"))
                }
                let bytes: [UInt8]
                do { bytes = try source.read(at: box.offset, count: Int(box.size)) } catch { throw .stream(error) }
                let shifted: [UInt8]
                do { shifted = try MovieEditor.shiftingFragmentOffsets(in: bytes, type: box.type, by: delta,
                                                                              after: plan.paddingRange.upperBound) } catch { throw .container(error) }
                do { try sink.write(shifted) } catch { throw .stream(error) }
                position = box.end
            }
            do throws(ByteStreamError) {
                try sink.copy(from: source, range: position..<size)
                let written = sink.byteCount
                try sink.commit()
                return WriteSummary(inPlace: false, bytesWritten: written, itemCount: itemCount)
            } catch { throw .stream(error) }
        } catch {
            sink.cancel()
            throw error
        }
    }

    /// The editor of the file at `path`'s tags when its format's entry has one (an MP3, FLAC
    /// or Ogg Opus file: ``/MediaFormats/MetadataEditor``); `nil` for an MP4, whose tags are
    /// edited as iTunes items here, and for a format no entry edits.
    public static func metadataEditor(for path: FilePath, formats: MediaFormatRegistry = .standard) -> MetadataEditor? {
        formats.entry(for: formats.detect(path))?.metadataEditor
    }

    /// The tags, cover and chapters of a file its format's ``/MediaFormats/MetadataEditor``
    /// reads (MP3, FLAC, Ogg Opus).
    ///
    /// - Throws: `PipelineError.unsupported` for a file no entry's editor reads.
    public static func readMetadata(_ path: FilePath, formats: MediaFormatRegistry = .standard) throws(PipelineError) -> StreamMetadata {
        guard let editor = metadataEditor(for: path, formats: formats) else { throw unedited(path, formats: formats) }
        return try editor.read(path)
    }

    /// Applies `edit` to a file its format's ``/MediaFormats/MetadataEditor`` rewrites (MP3's
    /// ID3v2 tag, FLAC's metadata blocks, Ogg Opus's `OpusTags`), without re-encoding: in place
    /// when the new tags fit the old ones and their padding, else by a rewrite committed with
    /// one rename.
    public static func write(metadata edit: MetadataEdit, to path: FilePath, formats: MediaFormatRegistry = .standard) throws(PipelineError) -> WriteSummary {
        guard let editor = metadataEditor(for: path, formats: formats) else { throw unedited(path, formats: formats) }
        return try write(edit, with: editor, to: path)
    }

    /// `edit` written by `editor`, timed.
    private static func write(_ edit: MetadataEdit, with editor: MetadataEditor, to path: FilePath) throws(PipelineError) -> WriteSummary {
        let started = ContinuousClock.now
        let result = try editor.write(edit, path)
        return timed(WriteSummary(inPlace: result.inPlace, bytesWritten: result.bytesWritten, itemCount: result.tagCount), since: started)
    }

    /// The refusal of a file whose tags no entry edits.
    private static func unedited(_ path: FilePath, formats: MediaFormatRegistry) -> PipelineError {
        let editable = formats.entries.filter { $0.metadataEditor != nil || $0.format == .mp4 }.flatMap { $0.format.fileExtensions.prefix(1) }
        return .unsupported("\(path): \(formats.detect(path).map { "\($0)" } ?? "an unknown file"); tags are edited in "
                            + editable.map { "." + $0 }.joined(separator: ", ") + " files", path: path)
    }

    /// The chapters of the MP4 at `path` (its QuickTime chapter track's, else its Nero
    /// `chpl`'s), or of a file its format's editor reads (ID3 `CHAP`, Vorbis `CHAPTERxxx`).
    public static func readChapters(_ path: FilePath, formats: MediaFormatRegistry = .standard) throws(PipelineError) -> [MovieChapter] {
        if let editor = metadataEditor(for: path, formats: formats) {
            return try editor.read(path).chapters.map { MovieChapter(startTime: $0.start, title: $0.title) }
        }
        let source = try open(path, formats: formats)
        do { return try MP4File(source: source).chapters(source: source) } catch { throw .container(error) }
    }

    /// Replaces the chapters of the MP4 at `path` by `chapters` (none removes them): a Nero
    /// `chpl` and a QuickTime chapter track, as FFmpeg writes both, sorted, the first starting at
    /// 0, none past the end. In place when they fit in the padding, else by a streamed rewrite.
    public static func writeChapters(_ chapters: [MovieChapter], to path: FilePath,
                                     formats: MediaFormatRegistry = .standard) throws(PipelineError) -> WriteSummary {
        if let editor = metadataEditor(for: path, formats: formats) {
            // As for an MP4: sorted, none at or past the end, the first from 0.
            let duration = (try? ProbeReport(libavformatSummaryOf: path))?.duration
            var kept = chapters.sorted { $0.startTime < $1.startTime }.filter { chapter in duration.map { chapter.startTime.seconds < $0 } ?? true }
            if !kept.isEmpty { kept[0].startTime = MediaTime(value: 0, timescale: kept[0].startTime.timescale) }
            return try write(MetadataEdit(chapters: kept.map { StreamMetadata.Chapter(start: $0.startTime, title: $0.title) }), with: editor, to: path)
        }
        let started = ContinuousClock.now
        return timed(try writeChapterBoxes(chapters, to: path, formats: formats), since: started)
    }

    /// ``writeChapters(_:to:formats:)``, untimed.
    private static func writeChapterBoxes(_ chapters: [MovieChapter], to path: FilePath, formats: MediaFormatRegistry) throws(PipelineError) -> WriteSummary {
        let source = try open(path, formats: formats)
        let boxes: [BoxHeader]
        do { boxes = try MovieEditor.topLevelBoxes(of: source) } catch { throw .container(error) }
        let plan: MovieEdit
        do {
            var seconds: Double?
            if boxes.contains(where: { $0.type == "moof" }) {
                let file = try MP4File(source: source)
                seconds = file.tracks.filter { $0.handlerType == "soun" && $0.timescale > 0 }
                    .map { Double($0.mediaDuration) / Double($0.timescale) }.max()
            }
            plan = try MovieEditor.edit(boxes: boxes, source: source, items: nil, chapters: chapters, fragmentedDuration: seconds)
            // The new movie must read as one before anything is written.
            _ = try MP4File(source: ArrayRandomAccessSource(plan.movie))
        } catch { throw .container(error) }
        return try commit(plan, boxes: boxes, source: source, path: path, itemCount: chapters.count)
    }

    /// `summary` with the time since `started` as its report's.
    private static func timed(_ summary: WriteSummary, since started: ContinuousClock.Instant) -> WriteSummary {
        var summary = summary
        summary.report.elapsed = ContinuousClock.now - started
        return summary
    }

    /// The MP4 at `path`, as its bytes say through `formats`: tags are boxes of ISO BMFF.
    private static func open(_ path: FilePath, formats: MediaFormatRegistry) throws(PipelineError) -> FileByteSource {
        guard formats.detect(path) == .mp4 else { throw unedited(path, formats: formats) }
        do { return try FileByteSource(regularFileAt: path) } catch { throw .stream(error) }
    }
}
