internal import SystemPackage
internal import AudioBitstreams

extension MetadataEditor {
    /// An MP3's ID3v2 tag at the start of the file, rewritten as ID3v2.4: in place when it fits
    /// the old tag with its padding, else ahead of the audio copied into a new file.
    public static let mp3 = MetadataEditor(read: { path throws(PipelineError) in
        StreamMetadata(id3: try MP3Tag(path: path).tag)
    }, write: { edit, path throws(PipelineError) in
        try MP3Tag(path: path).write(edit, path: path)
    })

    /// A FLAC file's metadata blocks: the VORBIS_COMMENT and PICTURE blocks replaced, every other
    /// block kept; in place when they fit the old blocks with their padding.
    public static let flac = MetadataEditor(read: { path throws(PipelineError) in
        let file = try FLACMetadata(path: path)
        return StreamMetadata(vorbisComment: file.comment, pictures: file.pictures)
    }, write: { edit, path throws(PipelineError) in
        try FLACMetadata(path: path).write(edit, path: path)
    })

    /// An Ogg Opus file's `OpusTags`: the header pages rewritten and every later page of the
    /// stream renumbered (its CRC computed again), always by a rewrite.
    public static let oggOpus = MetadataEditor(read: { path throws(PipelineError) in
        StreamMetadata(vorbisComment: try OggOpusHeaders(path: path).comment)
    }, write: { edit, path throws(PipelineError) in
        try OggOpusHeaders(path: path).write(edit, path: path)
    })
}

/// The structures a tag is, edited: the fields a Vorbis comment holds for an edit.
extension VorbisComment {
    /// Fields that are tags: not a chapter's, not the cover.
    var tagCount: Int {
        fields.filter { !StreamMetadata.isChapterField($0.name) && $0.name.uppercased() != "METADATA_BLOCK_PICTURE" }.count
    }

    /// The comment with `edit` applied: set tags replace the fields of their Vorbis name, removed
    /// ones go, chapters replace every `CHAPTERxxx` field, and, with `pictureField`, the cover
    /// replaces the `METADATA_BLOCK_PICTURE` fields.
    func applying(_ edit: MetadataEdit, pictureField: Bool) -> VorbisComment {
        var result = self
        let replaced = Set((edit.sets.map(\.key) + edit.removals).map { Self.fieldName(ofTag: $0.lowercased()).uppercased() })
        result.fields.removeAll { replaced.contains($0.name.uppercased()) }
        result.fields += edit.sets.map { Field(Self.fieldName(ofTag: $0.key.lowercased()), $0.value) }
        if let chapters = edit.chapters {
            result.fields.removeAll { StreamMetadata.isChapterField($0.name) }
            result.fields += VorbisComment(StreamMetadata(chapters: chapters), vendor: vendor).fields
        }
        if pictureField, let cover = edit.cover {
            result.fields.removeAll { $0.name.uppercased() == "METADATA_BLOCK_PICTURE" }
            if case .set(let image) = cover { result.fields.append(Field("METADATA_BLOCK_PICTURE", Base64.encode(FLACPicture(image: image).bytes))) }
        }
        return result
    }
}

/// Opens `path` for reading, naming it in an error: not claimed as an input, since the edit
/// replaces the file it reads, by a rename once the new one is complete.
private func openFile(_ path: FilePath) throws(PipelineError) -> FileByteSource {
    do { return try FileByteSource(regularFileAt: path, claimingInput: false) } catch { throw .stream(error) }
}

/// Writes `head` then `source`'s bytes from `offset` into a new file committed over `path`.
private func rewrite(_ path: FilePath, head: [UInt8], source: FileByteSource, from offset: Int64) throws(PipelineError) -> Int64 {
    let sink: FileByteSink
    do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
    do {
        try sink.write(head)
        try sink.copy(from: source, range: offset..<source.byteCount)
        let written = sink.byteCount
        try sink.commit()
        return written
    } catch {
        sink.cancel()
        throw .stream(error)
    }
}

/// An MP3's ID3v2 tag and where its audio starts.
struct MP3Tag {
    let source: FileByteSource
    /// The tag (an empty 2.4 one when the file has none).
    let tag: ID3v2Tag
    /// The tag's length with its padding (0 when there is none).
    let length: Int64

    init(path: FilePath) throws(PipelineError) {
        source = try openFile(path)
        let head: [UInt8]
        do { head = try source.read(at: 0, count: ID3v2Tag.headerLength) } catch { throw .stream(error) }
        guard let length = ID3v2Tag.length(ofTagStarting: head) else {
            guard MPEGAudioFrameHeader(head, at: 0) != nil else { throw .unsupported("\(path): neither an ID3v2 tag nor an MPEG audio frame at its start", path: path) }
            tag = ID3v2Tag()
            self.length = 0
            return
        }
        guard Int64(length) <= source.byteCount else {
            throw .unsupported("\(path): its ID3v2 tag says \(length) bytes; the file has \(source.byteCount)", path: path)
        }
        do { tag = try ID3v2Tag(bytes: try source.read(at: 0, count: length)) } catch let error as AudioBitstreamError {
            throw .unsupported("\(path): \(error)", path: path)
        } catch { throw .stream(error as! ByteStreamError) }
        self.length = Int64(length)
    }

    /// Whether `frame` holds the tag named `key` (a generic name, or a frame ID).
    static func frame(_ frame: ID3v2Tag.Frame, holds key: String) -> Bool {
        let name = key.lowercased()
        let id = ID3v2Tag.textFrameIDs.first { $0.key == name }?.value ?? key.uppercased()
        switch frame {
        case .comment(_, let description, _): return name == "comment" && description.isEmpty
        case .userText(let description, _): return description.lowercased() == name
        case .text(let frameID, _), .url(let frameID, _), .other(let frameID, _, _): return frameID == id
        default: return false
        }
    }

    /// The frames of a tag set to `value` under `key`.
    static func frame(key: String, value: String) -> ID3v2Tag.Frame {
        let name = key.lowercased()
        if name == "comment" { return .comment(language: "eng", description: "", text: value) }
        if let id = ID3v2Tag.textFrameIDs.first(where: { $0.key == name })?.value { return .text(id: id, values: [value]) }
        if key.count == 4, key.hasPrefix("T"), key != "TXXX", key.allSatisfy({ ($0.isUppercase || $0.isNumber) && $0.isASCII }) { return .text(id: key, values: [value]) }
        return .userText(description: key, value: value)
    }

    /// ID3v2.3's date frames as ID3v2.4's (ID3v2.4 4.2.5, and its changes from 2.3: `TYER`,
    /// `TDAT`, `TIME`, `TORY` and `TRDA` are gone): `TYER` with `TDAT` (DDMM) and `TIME` (HHMM)
    /// become `TDRC` (yyyy-MM-ddTHH:mm), `TORY` becomes `TDOR`, `TRDA` is dropped. A `TYER` or
    /// `TORY` whose value is no date stays as it is, rather than be lost.
    static func upgradingDates(_ frames: [ID3v2Tag.Frame]) -> [ID3v2Tag.Frame] {
        func text(_ wanted: String) -> String? {
            for case .text(let id, let values) in frames where id == wanted { return values.first }
            return nil
        }
        func digits(_ value: String?, _ count: Int) -> String? {
            guard let value, value.count == count, value.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return value
        }
        // A value kept as it is when it is not what 2.3 says (a year of four digits): a date
        // already in 2.4's form (yyyy-MM-dd…) moves to TDRC, anything else stays in TYER.
        func isTimestamp(_ value: String) -> Bool { value.wholeMatch(of: #/[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}(:[0-9]{2}(:[0-9]{2})?)?)?)?)?/#) != nil }
        let year = text("TYER")?.trimmingSpaces
        var gone: Set<String> = ["TRDA"]
        if text("TDRC") == nil, let year, isTimestamp(year) {
            var date = year
            if year.count == 4, let dayMonth = digits(text("TDAT"), 4) {
                date += "-\(dayMonth.suffix(2))-\(dayMonth.prefix(2))"
                if let time = digits(text("TIME"), 4) { date += "T\(time.prefix(2)):\(time.suffix(2))" }
            }
            gone.formUnion(["TYER", "TDAT", "TIME"])
            var upgraded = frames.filter { if case .text(let id, _) = $0 { !gone.contains(id) } else { true } }
            upgraded.append(.text(id: "TDRC", values: [date]))
            return Self.upgradingOriginalYear(upgraded)
        }
        return Self.upgradingOriginalYear(frames.filter { if case .text(let id, _) = $0 { !gone.contains(id) } else { true } })
    }

    /// 2.3's `TORY` (a year) as 2.4's `TDOR`; one that is not a year stays.
    static func upgradingOriginalYear(_ frames: [ID3v2Tag.Frame]) -> [ID3v2Tag.Frame] {
        var original: String?
        var hasTDOR = false
        for case .text(let id, let values) in frames {
            if id == "TORY" { original = values.first?.trimmingSpaces }
            if id == "TDOR" { hasTDOR = true }
        }
        guard let original, original.count == 4, original.allSatisfy({ $0.isASCII && $0.isNumber }) else { return frames }
        var upgraded = frames.filter { if case .text("TORY", _) = $0 { false } else { true } }
        if !hasTDOR { upgraded.append(.text(id: "TDOR", values: [original])) }
        return upgraded
    }

    /// The stream's length from its Info frame, for the last chapter's end.
    func duration() -> MediaTime? {
        guard let after = try? source.read(at: length, count: 8192), let first = after.firstIndex(where: { $0 != 0 }),
              let header = MPEGAudioFrameHeader(after, at: first), let info = MP3InfoTag(frame: Array(after[first...])) else { return nil }
        return MediaTime(value: info.validSamples, timescale: Int32(header.sampleRate))
    }

    func write(_ edit: MetadataEdit, path: FilePath) throws(PipelineError) -> MetadataEditor.Result {
        // A compressed or encrypted 2.3 frame has no faithful 2.4 form here: refused, not dropped.
        if tag.majorVersion == 3, tag.frames.contains(where: { if case .other(_, let flags, _) = $0 { flags & 0x0C != 0 } else { false } }) {
            throw .unsupported("\(path): its ID3v2.3 tag has compressed or encrypted frames, which are not rewritten as 2.4", path: path)
        }
        var frames = tag.majorVersion == 3 ? Self.upgradingDates(tag.frames) : tag.frames
        for key in edit.sets.map(\.key) + edit.removals { frames.removeAll { Self.frame($0, holds: key) } }
        frames += edit.sets.map { Self.frame(key: $0.key, value: $0.value) }
        if let cover = edit.cover {
            frames.removeAll { if case .picture = $0 { true } else { false } }
            if case .set(let image) = cover { frames += ID3v2Tag(StreamMetadata(coverArt: image), duration: nil).frames }
        }
        if let chapters = edit.chapters {
            frames.removeAll { if case .chapter = $0 { true } else if case .tableOfContents = $0 { true } else { false } }
            frames += ID3v2Tag(StreamMetadata(chapters: chapters), duration: duration()).frames
        }
        let edited = ID3v2Tag(frames: frames)
        // Tags, not the cover or the chapters.
        let count = edited.frames.filter {
            switch $0 { case .picture, .chapter, .tableOfContents: false; default: true }
        }.count
        let bare = edited.bytes()
        if length > 0, bare.count <= length {
            let bytes = edited.bytes(padding: Int(length) - bare.count)
            do { try FilePatch.apply(bytes, at: 0, to: path) } catch { throw .stream(error) }
            return .init(inPlace: true, bytesWritten: Int64(bytes.count), tagCount: count)
        }
        let written = try rewrite(path, head: edited.bytes(padding: MP3FileOutput.tagPadding), source: source, from: length)
        return .init(inPlace: false, bytesWritten: written, tagCount: count)
    }
}

/// A FLAC file's metadata blocks and where its frames start.
struct FLACMetadata {
    let source: FileByteSource
    /// The blocks, in order.
    let blocks: [FLACMetadataBlock]
    /// Where the first frame starts.
    let audioStart: Int64

    init(path: FilePath) throws(PipelineError) {
        source = try openFile(path)
        let size = source.byteCount
        var blocks: [FLACMetadataBlock] = []
        var offset: Int64 = 4
        do {
            guard try source.read(at: 0, count: 4) == Array("fLaC".utf8) else { throw PipelineError.unsupported("\(path): not a FLAC file (no fLaC)", path: path) }
            while true {
                let header = try source.read(at: offset, count: 4)
                guard header.count == 4 else { throw PipelineError.unsupported("\(path): the metadata blocks end at byte \(offset), before any frame", path: path) }
                let length = Int64(header[1]) << 16 | Int64(header[2]) << 8 | Int64(header[3])
                guard offset + 4 + length <= size else {
                    throw PipelineError.unsupported("\(path): the metadata block at byte \(offset) says \(length) bytes; the file ends first", path: path)
                }
                blocks.append(FLACMetadataBlock(type: .init(rawValue: header[0] & 0x7F), body: try source.read(at: offset + 4, count: Int(length))))
                offset += 4 + length
                if header[0] & 0x80 != 0 { break }
                guard blocks.count < 4096 else { throw PipelineError.unsupported("\(path): more than 4096 metadata blocks, none flagged the last", path: path) }
            }
        } catch let error as PipelineError { throw error } catch { throw .stream(error as! ByteStreamError) }
        guard blocks.first?.type == .streamInfo else { throw .unsupported("\(path): the first metadata block is not STREAMINFO", path: path) }
        self.blocks = blocks
        audioStart = offset
    }

    /// The VORBIS_COMMENT block's comment (an empty one when there is none or it does not read).
    var comment: VorbisComment {
        blocks.first { $0.type == .vorbisComment }.flatMap { try? VorbisComment(bytes: $0.body) } ?? VorbisComment(vendor: "KeyFrameKit")
    }

    /// The PICTURE blocks that read.
    var pictures: [FLACPicture] { blocks.filter { $0.type == .picture }.compactMap { try? FLACPicture(bytes: $0.body) } }

    func write(_ edit: MetadataEdit, path: FilePath) throws(PipelineError) -> MetadataEditor.Result {
        // A comment block that does not read is not replaced by an empty one: its tags would be lost.
        if let block = blocks.first(where: { $0.type == .vorbisComment }) {
            do { _ = try VorbisComment(bytes: block.body) } catch { throw .unsupported("\(path): its VORBIS_COMMENT block: \(error)", path: path) }
        }
        let edited = comment.applying(edit, pictureField: false)
        var kept = blocks.filter { $0.type != .padding && $0.type != .vorbisComment && !(edit.cover != nil && $0.type == .picture) }
        // The comment after STREAMINFO and any SEEKTABLE, as `flac` places it.
        let at = (kept.lastIndex { $0.type == .streamInfo || $0.type == .seekTable } ?? 0) + 1
        kept.insert(FLACMetadataBlock(type: .vorbisComment, body: edited.bytes), at: at)
        if case .set(let image)? = edit.cover { kept.append(FLACMetadataBlock(type: .picture, body: FLACPicture(image: image).bytes)) }
        if let large = kept.first(where: { $0.body.count >= 1 << 24 }) {
            throw .unsupported("\(path): a \(large.body.count)-byte metadata block is more than FLAC's 24-bit length holds", path: path)
        }
        let length = kept.reduce(0) { $0 + 4 + $1.body.count }
        let room = Int(audioStart) - 4
        func serialized(_ blocks: [FLACMetadataBlock]) -> [UInt8] {
            var bytes: [UInt8] = []
            for (index, block) in blocks.enumerated() { bytes += block.bytes(isLast: index == blocks.count - 1) }
            return bytes
        }
        let count = edited.tagCount
        // In place when the blocks fit, with a padding block FLAC's 24-bit length can say.
        if length == room || (length + 4 <= room && room - length - 4 < 1 << 24) {
            let padded = length == room ? kept : kept + [FLACMetadataBlock(type: .padding, body: [UInt8](repeating: 0, count: room - length - 4))]
            let bytes = serialized(padded)
            do { try FilePatch.apply(bytes, at: 4, to: path) } catch { throw .stream(error) }
            return .init(inPlace: true, bytesWritten: Int64(bytes.count), tagCount: count)
        }
        let head = Array("fLaC".utf8) + serialized(kept + [FLACMetadataBlock(type: .padding, body: [UInt8](repeating: 0, count: FLACFileOutput.paddingBytes))])
        return .init(inPlace: false, bytesWritten: try rewrite(path, head: head, source: source, from: audioStart), tagCount: count)
    }
}

/// An Ogg Opus file's header packets, and where its audio pages start.
struct OggOpusHeaders {
    let source: FileByteSource
    /// The stream's serial number.
    let serialNumber: UInt32
    /// The `OpusTags` comment.
    let comment: VorbisComment
    /// The identification header.
    let head: OpusHeader
    /// The end of the first page (OpusHead's).
    let headEnd: Int64
    /// Where the first page after `OpusTags` starts.
    let audioStart: Int64
    /// The pages `OpusTags` took.
    let tagPages: UInt32
    /// The first page's sequence number.
    let firstSequence: UInt32

    /// The most bytes the comment header may take (its cover included).
    static let maximumTagBytes = 64 << 20

    init(path: FilePath) throws(PipelineError) {
        source = try openFile(path)
        var offset: Int64 = 0
        var packets: [[UInt8]] = []
        var partial: [UInt8] = []
        var serial: UInt32?
        var pages: UInt32 = 0
        var headEnd: Int64 = 0
        var firstSequence: UInt32 = 0
        while packets.count < 2 {
            let page = try Self.page(source, at: &offset, path: path)
            guard serial == nil || page.serialNumber == serial else {
                throw .unsupported("\(path): another logical stream's page at byte \(offset) before OpusTags ends; not an Ogg Opus file KeyFrameKit edits", path: path)
            }
            if serial == nil { firstSequence = page.sequenceNumber }
            serial = page.serialNumber
            if packets.isEmpty { headEnd = offset } else { pages += 1 }
            // RFC 7845 3: OpusHead alone on the first page; OpusTags ends its last page. A file
            // laid out otherwise is not rewritten (its audio would be lost with the headers).
            let parts = page.parts
            let ending = parts.filter(\.endsPacket).count
            guard packets.count + ending <= 2, packets.isEmpty ? (parts.count == 1 && ending == 1) : (packets.count + ending < 2 || parts.last?.endsPacket == true) else {
                throw .unsupported("\(path): page \(page.sequenceNumber) holds more than the Opus header it should (RFC 7845 3); not rewritten", path: path)
            }
            for part in parts {
                partial += part.bytes
                guard partial.count <= Self.maximumTagBytes else { throw .unsupported("\(path): OpusTags longer than 64 MiB", path: path) }
                if part.endsPacket {
                    packets.append(partial)
                    partial = []
                }
            }
        }
        guard let head = try? OpusHeader(bytes: packets[0]) else { throw .unsupported("\(path): the first packet is not OpusHead; not Ogg Opus", path: path) }
        self.head = head
        do { comment = try VorbisComment(opusTagsPacket: packets[1]) } catch { throw .unsupported("\(path): \(error)", path: path) }
        serialNumber = serial ?? 0
        self.headEnd = headEnd
        self.firstSequence = firstSequence
        audioStart = offset
        tagPages = pages
    }

    /// Reads the page at `offset` (its CRC checked) and moves `offset` past it.
    static func page(_ source: FileByteSource, at offset: inout Int64, path: FilePath) throws(PipelineError) -> OggPage {
        do {
            let header = try source.read(at: offset, count: OggPage.headerLength)
            guard header.count == OggPage.headerLength else { throw PipelineError.unsupported("\(path): the Ogg stream ends at byte \(offset) inside its headers", path: path) }
            let table = try source.read(at: offset + Int64(OggPage.headerLength), count: Int(header[26]))
            let length = OggPage.headerLength + table.count + table.reduce(0) { $0 + Int($1) }
            var reader = ByteReader(try source.read(at: offset, count: length), baseOffset: offset)
            let page = try OggPage.read(&reader)
            offset += Int64(length)
            return page
        } catch let error as PipelineError { throw error } catch let error as AudioBitstreamError {
            throw .unsupported("\(path): \(error)", path: path)
        } catch { throw .stream(error as! ByteStreamError) }
    }

    func write(_ edit: MetadataEdit, path: FilePath) throws(PipelineError) -> MetadataEditor.Result {
        let edited = comment.applying(edit, pictureField: true)
        var writer = OggStreamWriter(serialNumber: serialNumber, pageDuration: 48000, sequenceNumber: firstSequence &+ 1)
        let tagPages = writer.append(edited.opusTagsPacket, granulePosition: 0) + writer.flush()
        let shift = Int64(tagPages.count) - Int64(self.tagPages)
        let sink: FileByteSink
        do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
        do {
            try sink.copy(from: source, range: 0..<headEnd)
            for page in tagPages { try sink.write(page.bytes) }
            // Every later page of the stream renumbered (a page of another stream, chained after
            // it, kept as it is); a page that does not read is refused rather than copied blind.
            var offset = audioStart
            let size = source.byteCount
            while offset < size {
                var page = try Self.page(source, at: &offset, path: path)
                if page.serialNumber == serialNumber { page.sequenceNumber = UInt32(truncatingIfNeeded: Int64(page.sequenceNumber) + shift) }
                try sink.write(page.bytes)
            }
            let written = sink.byteCount
            try sink.commit()
            return .init(inPlace: false, bytesWritten: written, tagCount: edited.tagCount)
        } catch let error as PipelineError {
            sink.cancel()
            throw error
        } catch {
            sink.cancel()
            throw .stream(error as! ByteStreamError)
        }
    }
}
