public import MediaCore
internal import AACBitstream

/// One box of a file's box tree, with the fields worth showing: what `probe --boxes` prints, like
/// Bento4's `mp4dump`.
public struct BoxTreeNode: Sendable {
    /// The box header.
    public var header: BoxHeader
    /// Nesting depth (0 at the top level).
    public var depth: Int
    /// Key fields, as `name=value` pairs.
    public var fields: [(String, String)]
}

/// Walks every box of a file, descending into the containers ISO/IEC 14496-12 defines (and the
/// sample entries, `meta`, QuickTime `wave`), never into `mdat`.
public enum BoxTree {
    static let shown: Set<FourCharacterCode> = ["moov", "moof", "mfra", "meta", "ftyp", "styp", "sidx"]
    static let containers: Set<FourCharacterCode> = ["moov", "trak", "mdia", "minf", "stbl", "edts", "dinf", "udta", "mvex",
                                                     "moof", "traf", "mfra", "ilst", "sinf", "schi", "wave", "tref", "meco", "gmhd"]
    /// The deepest level walked.
    static let maximumDepth = BoxIterator.maximumDepth

    /// The nodes of `source`'s box tree in file order; a broken box ends the walk with a node
    /// that names the error.
    public static func nodes(of source: some RandomAccessByteSource) throws(MP4Error) -> (nodes: [BoxTreeNode], error: MP4Error?) {
        var nodes: [BoxTreeNode] = []
        let size = source.byteCount
        var offset: Int64 = 0
        do throws(MP4Error) {
            while offset + 8 <= size {
                let head = try MP4File.read(source, at: offset, count: Int(min(32, size - offset)))
                var reader = ByteReader(head, baseOffset: offset)
                let header = try BoxHeader.parse(from: &reader, containerRemaining: size - offset, path: .root, allowOverrun: { $0 == "mdat" })
                let path = BoxPath.root.appending(header.type)
                // Read a payload only for the boxes walked or shown; `free`, `skip`, `uuid`, … are listed.
                if header.type == "mdat" || header.payloadSize > MP4File.maximumHeaderBoxSize || !shown.contains(header.type) {
                    nodes.append(BoxTreeNode(header: header, depth: 0, fields: []))
                } else {
                    let payload = try MP4File.payload(source, header, path: path)
                    try walk(header: header, payload: payload, path: path, depth: 0, parent: nil, into: &nodes)
                }
                if header.end > size { break }
                offset = header.end
            }
            return (nodes, nil)
        } catch {
            return (nodes, error)
        }
    }

    private static func walk(header: BoxHeader, payload: ByteReader, path: BoxPath, depth: Int, parent: FourCharacterCode?,
                             into nodes: inout [BoxTreeNode]) throws(MP4Error) {
        var fields: [(String, String)] = []
        var children: ByteReader?
        var reader = payload
        switch header.type {
        case let type where containers.contains(type):
            children = payload
        case "meta":
            // A FullBox in ISO files, a plain box in QuickTime: look at what follows.
            if payload.remaining >= 8, let fourth = payload.peekUInt8(ahead: 3), payload.peekUInt8() == 0, fourth == 0 {
                var skipped = payload
                _ = try MP4Error.reading(path) { () throws(BinaryReadError) in try skipped.skip(4) }
                children = skipped
            } else {
                children = payload
            }
        case "stsd":
            _ = try FullBoxHeader.parse(from: &reader, path: path)
            let count = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
            fields.append(("entry_count", "\(count)"))
            children = reader
        case "ftyp", "styp":
            let box = try FileTypeBox(from: &reader, path: path)
            fields = [("major_brand", box.majorBrand.description), ("minor_version", "\(box.minorVersion)"),
                      ("compatible_brands", box.compatibleBrands.map(\.description).joined(separator: ","))]
        case "mvhd":
            let box = try MovieHeaderBox(from: &reader, path: path)
            fields = [("timescale", "\(box.timescale)"), ("duration", "\(box.duration)"), ("next_track_ID", "\(box.nextTrackID)")]
        case "tkhd":
            let box = try TrackHeaderBox(from: &reader, path: path)
            fields = [("track_ID", "\(box.trackID)"), ("flags", "\(box.flags)"), ("duration", "\(box.duration)"),
                      ("width", "\(Double(box.width) / 65536)"), ("height", "\(Double(box.height) / 65536)")]
        case "mdhd":
            let box = try MediaHeaderBox(from: &reader, path: path)
            fields = [("timescale", "\(box.timescale)"), ("duration", "\(box.duration)"), ("language", box.language)]
        case "hdlr":
            let box = try HandlerBox(from: &reader, path: path)
            fields = [("handler_type", box.handlerType.description), ("name", box.name)]
        case "elst":
            let entries = try EditListEntry.parseList(from: &reader, path: path)
            fields = [("entries", entries.map { "(\($0.segmentDuration), \($0.mediaTime), \($0.mediaRate))" }.joined(separator: " "))]
        case "stts", "ctts", "stsc", "stco", "co64", "stss":
            _ = try FullBoxHeader.parse(from: &reader, path: path)
            fields = [("entry_count", "\(try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() })")]
        case "stsz":
            _ = try FullBoxHeader.parse(from: &reader, path: path)
            let (size, count) = try MP4Error.reading(path) { () throws(BinaryReadError) in (try reader.readUInt32(), try reader.readUInt32()) }
            fields = [("sample_size", "\(size)"), ("sample_count", "\(count)")]
        case "esds":
            if let descriptor = try? ESDescriptorView.describe(payload) { fields = descriptor }
        case "trex":
            let box = try TrackExtendsBox(from: &reader, path: path)
            fields = [("track_ID", "\(box.trackID)"), ("default_sample_duration", "\(box.duration)"),
                      ("default_sample_size", "\(box.size)"), ("default_sample_flags", String(box.flags, radix: 16))]
        case "mfhd", "tfdt", "tfhd", "trun":
            let full = try FullBoxHeader.parse(from: &reader, path: path)
            fields = [("version", "\(full.version)"), ("flags", String(full.flags, radix: 16))]
            if header.type == "trun" || header.type == "mfhd" || header.type == "tfhd" {
                let value = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
                fields.append((header.type == "trun" ? "sample_count" : header.type == "mfhd" ? "sequence_number" : "track_ID", "\(value)"))
            } else {
                let time = try MP4Error.reading(path) { () throws(BinaryReadError) -> UInt64 in
                    full.version == 1 ? try reader.readUInt64() : UInt64(try reader.readUInt32())
                }
                fields.append(("base_media_decode_time", "\(time)"))
            }
        default:
            // Sample entries live in stsd; an `mp4a` inside QuickTime's `wave` is a 12-byte leaf.
            if parent == "stsd", SampleEntry.audioTypes.contains(header.type) || SampleEntry.videoTypes.contains(header.type) {
                let handler: FourCharacterCode = SampleEntry.audioTypes.contains(header.type) ? "soun" : "vide"
                let entry = try SampleEntry(header: header, payload: payload, path: path, handler: handler)
                if let audio = entry.audio {
                    fields = [("channels", "\(audio.channelCount)"), ("sample_rate", "\(audio.sampleRate)"), ("sample_size", "\(audio.sampleSize)")]
                    children = try skipping(payload, bytes: 28 + (audio.quickTimeVersion == 1 ? 16 : audio.quickTimeVersion == 2 ? 36 : 0), path: path)
                } else if let video = entry.video {
                    fields = [("width", "\(video.width)"), ("height", "\(video.height)"), ("compressor", video.compressorName)]
                    children = try skipping(payload, bytes: 78, path: path)
                }
            }
        }
        nodes.append(BoxTreeNode(header: header, depth: depth, fields: fields))
        guard let inner = children else { return }
        guard depth < maximumDepth else { throw .nestingTooDeep(path: path, offset: header.offset) }
        var iterator = try BoxIterator(inner, path: path)
        while let child = try iterator.next() {
            try walk(header: child.header, payload: child.payload, path: child.path, depth: depth + 1, parent: header.type, into: &nodes)
        }
    }

    private static func skipping(_ payload: ByteReader, bytes: Int, path: BoxPath) throws(MP4Error) -> ByteReader {
        var reader = payload
        try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.skip(min(bytes, reader.remaining)) }
        return reader
    }
}

/// The esds fields `--boxes` shows.
enum ESDescriptorView {
    static func describe(_ payload: ByteReader) throws -> [(String, String)] {
        let descriptor = try ESDescriptor(esdsBoxPayload: Array(payload.remainingBytes), baseOffset: payload.offset)
        let config = descriptor.decoderConfig
        var fields = [("object_type", "0x" + String(config.objectTypeIndication, radix: 16)),
                      ("max_bitrate", "\(config.maxBitrate)"), ("avg_bitrate", "\(config.averageBitrate)")]
        if let info = config.decoderSpecificInfo {
            fields.append(("decoder_specific_info", info.map { String(format2: $0) }.joined()))
        }
        return fields
    }
}

extension String {
    init(format2 byte: UInt8) {
        let digits = Array("0123456789abcdef")
        self = String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
