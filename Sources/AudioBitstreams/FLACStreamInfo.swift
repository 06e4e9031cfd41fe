public import MediaCore

/// FLAC's STREAMINFO metadata block (RFC 9639 8.2): the block sizes and frame sizes the stream
/// keeps within, its rate, channels and bit depth, its length in samples and the MD5 of its
/// samples. libavcodec's FLAC encoder and decoder take its 34 bytes as their extradata; a native
/// FLAC file starts with it after `fLaC`; ISO BMFF carries it in a `dfLa` box (xiph's
/// "Encapsulation of FLAC in ISO Base Media File Format" 3.3.2): ``init(dfLaPayload:)`` and
/// ``dfLaPayload`` convert.
public struct FLACStreamInfo: Sendable, Hashable {
    /// The bytes of the block's body.
    public static let byteCount = 34

    /// The least and most samples per block (16…65535; the last block may be shorter).
    public var minimumBlockSize: Int
    /// The most samples per block.
    public var maximumBlockSize: Int
    /// The least and most bytes per frame; 0 when unknown.
    public var minimumFrameSize: Int
    /// The most bytes per frame; 0 when unknown.
    public var maximumFrameSize: Int
    /// Samples per second (1…1,048,575).
    public var sampleRate: Int
    /// Channels (1…8).
    public var channelCount: Int
    /// Bits per sample (4…32).
    public var bitsPerSample: Int
    /// Samples per channel in the stream; 0 when unknown.
    public var totalSamples: Int64
    /// The MD5 of the decoded samples (interleaved, little-endian, each in the fewest whole
    /// bytes that hold it); all zero when unknown.
    public var md5: [UInt8]

    /// A STREAMINFO of these fields.
    public init(minimumBlockSize: Int, maximumBlockSize: Int, minimumFrameSize: Int = 0, maximumFrameSize: Int = 0, sampleRate: Int,
                channelCount: Int, bitsPerSample: Int, totalSamples: Int64 = 0, md5: [UInt8] = Array(repeating: 0, count: 16)) {
        self.minimumBlockSize = minimumBlockSize
        self.maximumBlockSize = maximumBlockSize
        self.minimumFrameSize = minimumFrameSize
        self.maximumFrameSize = maximumFrameSize
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitsPerSample = bitsPerSample
        self.totalSamples = totalSamples
        self.md5 = md5
    }

    /// Parses the 34-byte body.
    ///
    /// - Throws: ``AudioBitstreamError`` for fewer bytes, or a sample rate of 0.
    public init(bytes: some Collection<UInt8>) throws(AudioBitstreamError) {
        var reader = ByteReader(Array(bytes))
        let (blocks, frames, packed, md5) = try reading("STREAMINFO") { () throws(BinaryReadError) in
            (try reader.readUInt32(), try reader.readBigEndian(byteCount: 6), try reader.readUInt64(), try reader.readBytes(16))
        }
        minimumBlockSize = Int(blocks >> 16)
        maximumBlockSize = Int(blocks & 0xFFFF)
        minimumFrameSize = Int(frames >> 24)
        maximumFrameSize = Int(frames & 0xFF_FFFF)
        sampleRate = Int(packed >> 44)
        channelCount = Int((packed >> 41) & 0x7) + 1
        bitsPerSample = Int((packed >> 36) & 0x1F) + 1
        totalSamples = Int64(packed & 0xF_FFFF_FFFF)
        self.md5 = md5
        // Only a rate of 0 is refused: libFLAC decodes streams whose block sizes break the
        // rules (a one-block file shorter than 16 samples), and so does KeyFrameKit.
        guard sampleRate > 0 else { throw AudioBitstreamError("STREAMINFO", "a sample rate of 0") }
    }

    /// The 34-byte body.
    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: Self.byteCount)
        writer.write(UInt32(UInt16(clamping: minimumBlockSize)) << 16 | UInt32(UInt16(clamping: maximumBlockSize)))
        writer.writeBigEndian(UInt64(minimumFrameSize & 0xFF_FFFF) << 24 | UInt64(maximumFrameSize & 0xFF_FFFF), byteCount: 6)
        let packed = UInt64(sampleRate & 0xF_FFFF) << 44 | UInt64((channelCount - 1) & 0x7) << 41
            | UInt64((bitsPerSample - 1) & 0x1F) << 36 | UInt64(totalSamples & 0xF_FFFF_FFFF)
        writer.write(packed)
        writer.write(contentsOf: md5.count == 16 ? md5 : Array(repeating: 0, count: 16))
        return writer.bytes
    }

    /// The payload of a `dfLa` box: a full box of version 0 holding the STREAMINFO block, the
    /// last metadata block (RFC 9639 8.1 headers).
    public var dfLaPayload: [UInt8] {
        [0, 0, 0, 0] + FLACMetadataBlock(type: .streamInfo, body: bytes).bytes(isLast: true)
    }

    /// The STREAMINFO of a `dfLa` box's payload: version 0, then metadata blocks, the first of
    /// which must be STREAMINFO.
    ///
    /// - Throws: ``AudioBitstreamError`` for another version, a block cut short, or no
    ///   STREAMINFO first.
    public init(dfLaPayload bytes: [UInt8]) throws(AudioBitstreamError) {
        var reader = ByteReader(bytes)
        let version = try reading("dfLa") { () throws(BinaryReadError) in try reader.readUInt32() }
        guard version >> 24 == 0 else { throw AudioBitstreamError("dfLa", "version \(version >> 24) (only 0 is defined)") }
        let first = try FLACMetadataBlock.read(&reader, structure: "dfLa")
        guard first.block.type == .streamInfo else { throw AudioBitstreamError("dfLa", "its first metadata block is not STREAMINFO") }
        try self.init(bytes: first.block.body)
    }
}

/// A FLAC metadata block (RFC 9639 8.1): a type and a body, behind a header that says whether it
/// is the last.
public struct FLACMetadataBlock: Sendable, Hashable {
    /// A metadata block's type (RFC 9639 Table 4).
    public struct BlockType: RawRepresentable, Sendable, Hashable {
        /// The 7-bit type.
        public var rawValue: UInt8
        /// A type of this number.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// STREAMINFO.
        public static let streamInfo = BlockType(rawValue: 0)
        /// PADDING.
        public static let padding = BlockType(rawValue: 1)
        /// APPLICATION.
        public static let application = BlockType(rawValue: 2)
        /// SEEKTABLE.
        public static let seekTable = BlockType(rawValue: 3)
        /// VORBIS_COMMENT.
        public static let vorbisComment = BlockType(rawValue: 4)
        /// CUESHEET.
        public static let cueSheet = BlockType(rawValue: 5)
        /// PICTURE.
        public static let picture = BlockType(rawValue: 6)
    }

    /// The type.
    public var type: BlockType
    /// The body (at most 2²⁴ − 1 bytes).
    public var body: [UInt8]

    /// A block of `type` holding `body`.
    public init(type: BlockType, body: [UInt8]) {
        self.type = type
        self.body = body
    }

    /// The header and body, the header's last-block flag set when `isLast`.
    public func bytes(isLast: Bool) -> [UInt8] {
        let length = min(body.count, 0xFF_FFFF)
        return [(isLast ? 0x80 : 0) | type.rawValue & 0x7F, UInt8(length >> 16), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
            + body.prefix(length)
    }

    /// Reads one block at `reader`: the block and whether it is the last. Its length is checked
    /// against the bytes that remain before anything is allocated.
    ///
    /// - Throws: ``AudioBitstreamError`` naming `structure` for a block cut short or type 127.
    public static func read(_ reader: inout ByteReader, structure: String) throws(AudioBitstreamError) -> (block: FLACMetadataBlock, isLast: Bool) {
        let header = try reading(structure) { () throws(BinaryReadError) in try reader.readUInt32() }
        let type = UInt8((header >> 24) & 0x7F)
        guard type != 127 else { throw AudioBitstreamError(structure, "metadata block type 127 (forbidden)") }
        let length = Int(header & 0xFF_FFFF)
        guard length <= reader.remaining else {
            throw AudioBitstreamError(structure, "a metadata block of \(length) bytes where \(reader.remaining) remain")
        }
        let body = try reading(structure) { () throws(BinaryReadError) in try reader.readBytes(length) }
        return (FLACMetadataBlock(type: BlockType(rawValue: type), body: body), header & 0x8000_0000 != 0)
    }
}
