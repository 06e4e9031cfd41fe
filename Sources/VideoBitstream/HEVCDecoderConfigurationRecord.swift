public import MediaCore

/// `HEVCDecoderConfigurationRecord` of ISO/IEC 14496-15, 8.3.3.1: the payload of an `hvcC` box,
/// what an HEVC decoder needs before the first sample of an `hvc1`/`hev1` track.
///
/// Every field of the 23-byte head is parsed; the reserved bits are kept as read, so
/// ``serialized()`` gives back the input bytes exactly.
public struct HEVCDecoderConfigurationRecord: Sendable, Hashable {
    /// One entry of the record's `numOfArrays` loop: the NAL units of one type.
    public struct NALUnitArray: Sendable, Hashable {
        /// `array_completeness`: all NAL units of this type are in the array (1 for `hvc1`),
        /// or more may come in the stream (0 for `hev1`).
        public var arrayCompleteness: Bool
        /// The reserved bit after `array_completeness` (0 in a conforming record), as read.
        public var reservedBit: Bool
        /// `NAL_unit_type` (6 bits): 32 VPS, 33 SPS, 34 PPS, 39 prefix SEI, 40 suffix SEI.
        public var nalUnitType: UInt8
        /// The `nalUnit`s, in order.
        public var nalUnits: [[UInt8]]

        /// An array with every field given.
        public init(arrayCompleteness: Bool, reservedBit: Bool = false, nalUnitType: UInt8, nalUnits: [[UInt8]]) {
            self.arrayCompleteness = arrayCompleteness
            self.reservedBit = reservedBit
            self.nalUnitType = nalUnitType
            self.nalUnits = nalUnits
        }
    }

    /// HEVC NAL unit type of a video parameter set.
    public static let videoParameterSetType: UInt8 = 32
    /// HEVC NAL unit type of a sequence parameter set.
    public static let sequenceParameterSetType: UInt8 = 33
    /// HEVC NAL unit type of a picture parameter set.
    public static let pictureParameterSetType: UInt8 = 34

    /// `configurationVersion` (1; some files written before the standard was final hold 0).
    public private(set) var configurationVersion: UInt8
    /// `general_profile_space` (2 bits).
    public private(set) var generalProfileSpace: UInt8
    /// `general_tier_flag`.
    public private(set) var generalTierFlag: Bool
    /// `general_profile_idc` (5 bits): 1 Main, 2 Main 10, 3 Main Still Picture, 4 range extensions.
    public private(set) var generalProfileIDC: UInt8
    /// `general_profile_compatibility_flags` (32 bits).
    public private(set) var generalProfileCompatibilityFlags: UInt32
    /// `general_constraint_indicator_flags` (48 bits).
    public private(set) var generalConstraintIndicatorFlags: UInt64
    /// `general_level_idc`: 30 times the level (93 for level 3.1).
    public private(set) var generalLevelIDC: UInt8
    /// `min_spatial_segmentation_idc` (12 bits).
    public private(set) var minSpatialSegmentationIDC: UInt16
    /// `parallelismType` (2 bits).
    public private(set) var parallelismType: UInt8
    /// `chroma_format_idc` (2 bits).
    public private(set) var chromaFormatIDC: UInt8
    /// `bit_depth_luma_minus8` (3 bits).
    public private(set) var bitDepthLumaMinus8: UInt8
    /// `bit_depth_chroma_minus8` (3 bits).
    public private(set) var bitDepthChromaMinus8: UInt8
    /// `avgFrameRate` in frames per 256 seconds (0: unspecified).
    public private(set) var averageFrameRate: UInt16
    /// `constantFrameRate` (2 bits).
    public private(set) var constantFrameRate: UInt8
    /// `numTemporalLayers` (3 bits).
    public private(set) var numTemporalLayers: UInt8
    /// `temporalIdNested`.
    public private(set) var temporalIDNested: Bool
    /// `lengthSizeMinusOne` (2 bits): the size of the NAL unit length fields of the samples, minus 1.
    public private(set) var lengthSizeMinusOne: UInt8
    /// The arrays of NAL units, in order.
    public private(set) var arrays: [NALUnitArray]
    /// The reserved bits of the head as read, in order: 4 above `min_spatial_segmentation_idc`,
    /// 6 above `parallelismType`, 6 above `chroma_format_idc`, 5 above each bit depth (26 bits,
    /// all ones, 0x3FFFFFF, in a conforming record).
    public private(set) var reservedBits: UInt32

    /// The size in bytes of the NAL unit length fields of the samples: 1, 2, 3 or 4 (3 is not
    /// allowed by 14496-15 but FFmpeg reads it).
    public var nalUnitLengthSize: Int { Int(lengthSizeMinusOne) + 1 }

    /// The parameter sets in decoding order: every VPS, then every SPS, then every PPS. Other
    /// arrays (SEI) are left out; ``allNALUnits`` has them.
    public var parameterSets: [[UInt8]] {
        [Self.videoParameterSetType, Self.sequenceParameterSetType, Self.pictureParameterSetType].flatMap { type in
            arrays.filter { $0.nalUnitType == type }.flatMap(\.nalUnits)
        }
    }

    /// Every NAL unit of every array, in the record's order (SEI included): what FFmpeg's
    /// `hevc_mp4toannexb` puts in front of IRAP pictures.
    public var allNALUnits: [[UInt8]] { arrays.flatMap(\.nalUnits) }

    /// Parses a record that fills the rest of `reader`'s window (the payload of an `hvcC` box), consuming all of it. Bytes after the last array are kept as ``trailingBytes``.
    ///
    /// - Throws: ``VideoBitstreamError/truncatedRecord(record:_:)`` when the head, a count or a length asks for more
    ///   bytes than remain. Nothing is allocated before its size is checked.
    public init(from reader: inout ByteReader) throws(VideoBitstreamError) {
        var r = reader
        let head = try VideoBitstreamError.reading("hvcC") { () throws(BinaryReadError) in try r.readBytes(23) }
        func value(_ range: Range<Int>) -> UInt64 { head[range].reduce(0) { $0 << 8 | UInt64($1) } }
        configurationVersion = head[0]
        generalProfileSpace = head[1] >> 6
        generalTierFlag = head[1] & 0x20 != 0
        generalProfileIDC = head[1] & 0x1F
        generalProfileCompatibilityFlags = UInt32(value(2..<6))
        generalConstraintIndicatorFlags = value(6..<12)
        generalLevelIDC = head[12]
        minSpatialSegmentationIDC = UInt16(value(13..<15) & 0x0FFF)
        parallelismType = head[15] & 0x03
        chromaFormatIDC = head[16] & 0x03
        bitDepthLumaMinus8 = head[17] & 0x07
        bitDepthChromaMinus8 = head[18] & 0x07
        averageFrameRate = UInt16(value(19..<21))
        constantFrameRate = head[21] >> 6
        numTemporalLayers = (head[21] >> 3) & 0x07
        temporalIDNested = head[21] & 0x04 != 0
        lengthSizeMinusOne = head[21] & 0x03
        reservedBits = UInt32(head[13] >> 4) << 22 | UInt32(head[15] >> 2) << 16 | UInt32(head[16] >> 2) << 10
            | UInt32(head[17] >> 3) << 5 | UInt32(head[18] >> 3)
        let arrayCount = UInt32(head[22])
        try r.checkRecordTable(count: arrayCount, entrySize: 3, record: "hvcC", field: "numOfArrays")
        var arrays: [NALUnitArray] = []
        arrays.reserveCapacity(Int(arrayCount))
        for _ in 0..<arrayCount {
            let (typeByte, unitCount) = try VideoBitstreamError.reading("hvcC") { () throws(BinaryReadError) in (try r.readUInt8(), try r.readUInt16()) }
            try r.checkRecordTable(count: UInt32(unitCount), entrySize: 2, record: "hvcC", field: "numNalus")
            let units = try AVCDecoderConfigurationRecord.readUnits(count: Int(unitCount), from: &r)
            arrays.append(NALUnitArray(arrayCompleteness: typeByte & 0x80 != 0, reservedBit: typeByte & 0x40 != 0,
                                       nalUnitType: typeByte & 0x3F, nalUnits: units))
        }
        self.arrays = arrays
        trailingBytes = Array(r.remainingBytes)
        try VideoBitstreamError.reading("hvcC") { () throws(BinaryReadError) in try r.skip(r.remaining) }
        reader = r
    }

    /// Bytes after the last array (none in a conforming record), kept for ``serialized()``.
    public private(set) var trailingBytes: [UInt8]

    /// The record's bytes (the `hvcC` payload): the input bytes when the record was parsed.
    public func serialized() -> [UInt8] {
        var writer = ByteWriter(capacity: 23 + arrays.reduce(0) { $0 + 3 + $1.nalUnits.reduce(0) { $0 + 2 + $1.count } } + trailingBytes.count)
        writer.write(configurationVersion)
        writer.write(generalProfileSpace << 6 | (generalTierFlag ? 0x20 : 0) | generalProfileIDC & 0x1F)
        writer.write(generalProfileCompatibilityFlags)
        writer.writeBigEndian(generalConstraintIndicatorFlags, byteCount: 6)
        writer.write(generalLevelIDC)
        writer.write(UInt16(truncatingIfNeeded: reservedBits >> 22) << 12 | minSpatialSegmentationIDC & 0x0FFF)
        writer.write(UInt8(truncatingIfNeeded: reservedBits >> 16) << 2 | parallelismType & 0x03)
        writer.write(UInt8(truncatingIfNeeded: reservedBits >> 10) << 2 | chromaFormatIDC & 0x03)
        writer.write(UInt8(truncatingIfNeeded: reservedBits >> 5) << 3 | bitDepthLumaMinus8 & 0x07)
        writer.write(UInt8(truncatingIfNeeded: reservedBits) << 3 | bitDepthChromaMinus8 & 0x07)
        writer.write(averageFrameRate)
        writer.write(constantFrameRate << 6 | (numTemporalLayers & 0x07) << 3 | (temporalIDNested ? 0x04 : 0) | lengthSizeMinusOne & 0x03)
        writer.write(UInt8(truncatingIfNeeded: arrays.count))
        for array in arrays {
            writer.write((array.arrayCompleteness ? 0x80 : 0) | (array.reservedBit ? 0x40 : 0) | array.nalUnitType & 0x3F)
            writer.write(UInt16(truncatingIfNeeded: array.nalUnits.count))
            for unit in array.nalUnits {
                writer.write(UInt16(truncatingIfNeeded: unit.count))
                writer.write(contentsOf: unit)
            }
        }
        writer.write(contentsOf: trailingBytes)
        return writer.bytes
    }
}
