public import MediaCore

/// `AVCDecoderConfigurationRecord` of ISO/IEC 14496-15, 5.3.3.1: the payload of an `avcC` box,
/// what an H.264 decoder needs before the first sample of an `avc1`/`avc3` track (the
/// `extradata` of libavcodec).
///
/// Parsing keeps every byte: the reserved bits as read, and everything after the picture
/// parameter sets (the high-profile extension of 5.3.3.1.2, or padding some writers leave) as
/// raw ``extensionBytes``, so ``serialized()`` gives back the input bytes exactly.
public struct AVCDecoderConfigurationRecord: Sendable, Hashable {
    /// The fields of the high-profile extension (14496-15, 5.3.3.1.2), present for
    /// `AVCProfileIndication` 100, 110, 122 and 144 (and written by FFmpeg for other high
    /// profiles too).
    public struct HighProfileExtension: Sendable, Hashable {
        /// `chroma_format` (2 bits): 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
        public var chromaFormat: UInt8
        /// `bit_depth_luma_minus8` (3 bits).
        public var bitDepthLumaMinus8: UInt8
        /// `bit_depth_chroma_minus8` (3 bits).
        public var bitDepthChromaMinus8: UInt8
        /// The `sequenceParameterSetExtNALUnit`s, in order.
        public var sequenceParameterSetExtensions: [[UInt8]]

        /// An extension with every field given.
        public init(chromaFormat: UInt8, bitDepthLumaMinus8: UInt8, bitDepthChromaMinus8: UInt8, sequenceParameterSetExtensions: [[UInt8]]) {
            self.chromaFormat = chromaFormat
            self.bitDepthLumaMinus8 = bitDepthLumaMinus8
            self.bitDepthChromaMinus8 = bitDepthChromaMinus8
            self.sequenceParameterSetExtensions = sequenceParameterSetExtensions
        }
    }

    /// `configurationVersion` (always 1).
    public private(set) var configurationVersion: UInt8
    /// `AVCProfileIndication`: `profile_idc` of the SPS (66 baseline, 77 main, 100 high, …).
    public var profileIndication: UInt8
    /// `profile_compatibility`: the constraint flags byte of the SPS.
    public var profileCompatibility: UInt8
    /// `AVCLevelIndication`: `level_idc` of the SPS (31 for level 3.1).
    public var levelIndication: UInt8
    /// `lengthSizeMinusOne` (2 bits): the size of the NAL unit length fields of the samples, minus 1.
    public private(set) var lengthSizeMinusOne: UInt8
    /// The `sequenceParameterSetNALUnit`s, in order (at most 31).
    public private(set) var sequenceParameterSets: [[UInt8]]
    /// The `pictureParameterSetNALUnit`s, in order (at most 255).
    public private(set) var pictureParameterSets: [[UInt8]]
    /// Every byte after the picture parameter sets: the high-profile extension when present
    /// (see ``highProfileExtension``), kept raw so writing gives back the input.
    public private(set) var extensionBytes: [UInt8]
    /// The reserved bits as read: the 6 above `lengthSizeMinusOne` then the 3 above
    /// `numOfSequenceParameterSets` (all ones, 0x1FF, in a conforming record).
    public private(set) var reservedBits: UInt16

    /// The size in bytes of the NAL unit length fields of the samples: 1, 2, 3 or 4 (3 is not
    /// allowed by 14496-15 but FFmpeg reads it).
    public var nalUnitLengthSize: Int { Int(lengthSizeMinusOne) + 1 }

    /// The parameter sets in decoding order: the SPSs, then the PPSs (without the extension's
    /// SPS-ext units, as FFmpeg's `h264_mp4toannexb` does).
    public var parameterSets: [[UInt8]] { sequenceParameterSets + pictureParameterSets }

    /// The high-profile extension parsed from ``extensionBytes``; `nil` when there are none, or
    /// when they do not parse as one (padding, a truncated extension).
    public var highProfileExtension: HighProfileExtension? {
        guard extensionBytes.count >= 4 else { return nil }
        var reader = ByteReader(extensionBytes)
        return try? Self.readExtension(&reader)
    }

    /// A record from its parts; profile, compatibility and level come from the caller (usually
    /// bytes 1 to 3 of the first SPS).
    ///
    /// - Throws: ``VideoBitstreamError/invalidRecordField(record:field:value:offset:allowed:)`` when a count or a
    ///   length does not fit its field (more than 31 SPSs, 255 PPSs, a unit longer than 65535
    ///   bytes), or the length size is not 1, 2 or 4.
    public init(profileIndication: UInt8, profileCompatibility: UInt8, levelIndication: UInt8, nalUnitLengthSize: Int = 4,
                sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]], extensionBytes: [UInt8] = []) throws(VideoBitstreamError) {
                guard [1, 2, 4].contains(nalUnitLengthSize) else {
            throw .invalidRecordField(record: "avcC", field: "lengthSizeMinusOne + 1", value: Int64(nalUnitLengthSize), offset: 0, allowed: "1, 2 or 4")
        }
        guard sequenceParameterSets.count <= 31 else {
            throw .invalidRecordField(record: "avcC", field: "numOfSequenceParameterSets", value: Int64(sequenceParameterSets.count), offset: 0, allowed: "0...31")
        }
        guard pictureParameterSets.count <= 255 else {
            throw .invalidRecordField(record: "avcC", field: "numOfPictureParameterSets", value: Int64(pictureParameterSets.count), offset: 0, allowed: "0...255")
        }
        for unit in sequenceParameterSets + pictureParameterSets where unit.count > 0xFFFF {
            throw .invalidRecordField(record: "avcC", field: "parameter set length", value: Int64(unit.count), offset: 0, allowed: "0...65535")
        }
        self.configurationVersion = 1
        self.profileIndication = profileIndication
        self.profileCompatibility = profileCompatibility
        self.levelIndication = levelIndication
        self.lengthSizeMinusOne = UInt8(nalUnitLengthSize - 1)
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
        self.extensionBytes = extensionBytes
        self.reservedBits = 0x1FF
    }

    /// Parses a record that fills the rest of `reader`'s window (the payload of an `avcC` box), consuming all of it.
    ///
    /// - Throws: ``VideoBitstreamError/truncatedRecord(record:_:)`` when a count or a length asks for more bytes
    ///   than remain, ``VideoBitstreamError/invalidRecordField(record:field:value:offset:allowed:)`` when
    ///   `configurationVersion` is not 1. Nothing is allocated before its size is checked.
    public init(from reader: inout ByteReader) throws(VideoBitstreamError) {
        var r = reader
        let start = r.offset
        let head = try VideoBitstreamError.reading("avcC") { () throws(BinaryReadError) in try r.readBytes(6) }
        guard head[0] == 1 else {
            throw .invalidRecordField(record: "avcC", field: "configurationVersion", value: Int64(head[0]), offset: start, allowed: "1")
        }
        configurationVersion = head[0]
        profileIndication = head[1]
        profileCompatibility = head[2]
        levelIndication = head[3]
        lengthSizeMinusOne = head[4] & 0x03
        reservedBits = UInt16(head[4] >> 2) << 3 | UInt16(head[5] >> 5)
        let spsCount = UInt32(head[5] & 0x1F)
        try r.checkRecordTable(count: spsCount, entrySize: 2, record: "avcC", field: "numOfSequenceParameterSets")
        sequenceParameterSets = try Self.readUnits(count: Int(spsCount), from: &r)
        let ppsCount = UInt32(try VideoBitstreamError.reading("avcC") { () throws(BinaryReadError) in try r.readUInt8() })
        try r.checkRecordTable(count: ppsCount, entrySize: 2, record: "avcC", field: "numOfPictureParameterSets")
        pictureParameterSets = try Self.readUnits(count: Int(ppsCount), from: &r)
        extensionBytes = Array(r.remainingBytes)
        try VideoBitstreamError.reading("avcC") { () throws(BinaryReadError) in try r.skip(r.remaining) }
        reader = r
    }

    /// The record's bytes (the `avcC` payload): the input bytes when the record was parsed.
    public func serialized() -> [UInt8] {
        var writer = ByteWriter(capacity: 7 + parameterSets.reduce(0) { $0 + 2 + $1.count } + extensionBytes.count)
        writer.write(configurationVersion)
        writer.write(profileIndication)
        writer.write(profileCompatibility)
        writer.write(levelIndication)
        writer.write(UInt8(truncatingIfNeeded: reservedBits >> 3) << 2 | lengthSizeMinusOne & 0x03)
        writer.write(UInt8(truncatingIfNeeded: reservedBits & 0x07) << 5 | UInt8(sequenceParameterSets.count & 0x1F))
        for unit in sequenceParameterSets {
            writer.write(UInt16(truncatingIfNeeded: unit.count))
            writer.write(contentsOf: unit)
        }
        writer.write(UInt8(truncatingIfNeeded: pictureParameterSets.count))
        for unit in pictureParameterSets {
            writer.write(UInt16(truncatingIfNeeded: unit.count))
            writer.write(contentsOf: unit)
        }
        writer.write(contentsOf: extensionBytes)
        return writer.bytes
    }

    /// Reads `count` units, each a 16-bit length and that many bytes, checking each length
    /// against what remains before copying.
    static func readUnits(count: Int, from reader: inout ByteReader) throws(VideoBitstreamError) -> [[UInt8]] {
        var units: [[UInt8]] = []
        units.reserveCapacity(count)
        for _ in 0..<count {
            units.append(try VideoBitstreamError.reading("avcC") { () throws(BinaryReadError) -> [UInt8] in
                let length = Int(try reader.readUInt16())
                return try reader.readBytes(length)
            })
        }
        return units
    }

    private static func readExtension(_ reader: inout ByteReader) throws(BinaryReadError) -> HighProfileExtension {
        let chroma = try reader.readUInt8() & 0x03
        let luma = try reader.readUInt8() & 0x07
        let chromaDepth = try reader.readUInt8() & 0x07
        let count = Int(try reader.readUInt8())
        var units: [[UInt8]] = []
        for _ in 0..<count {
            let length = Int(try reader.readUInt16())
            units.append(try reader.readBytes(length))
        }
        return HighProfileExtension(chromaFormat: chroma, bitDepthLumaMinus8: luma, bitDepthChromaMinus8: chromaDepth,
                                    sequenceParameterSetExtensions: units)
    }
}
