public import MediaCore

/// The header of one ADTS frame: `adts_fixed_header`, `adts_variable_header` and the error-check
/// fields that follow them (ISO/IEC 13818-7, 6.2; ISO/IEC 14496-3, 1.A.3.2), every field kept so
/// that parsing and writing are bit-exact inverses.
public struct ADTSHeader: Sendable, Hashable {
    /// The `ID` bit: which standard's syntax the stream follows.
    public enum MPEGVersion: UInt8, Sendable, Hashable {
        /// `ID` = 0: MPEG-4 (ISO/IEC 14496-3). FFmpeg writes this.
        case mpeg4 = 0
        /// `ID` = 1: MPEG-2 (ISO/IEC 13818-7). ``adtsData(channels:sampleRate:rawDataLength:)``
        /// writes this.
        case mpeg2 = 1
    }

    // adts_fixed_header
    /// `ID`.
    public var mpegVersion: MPEGVersion
    /// `layer`: always 0 in a valid stream (other values are MPEG-1/2 audio layers).
    public var layer: UInt8
    /// `protection_absent`: when false, a 16-bit CRC (and block positions) follow the header.
    public var protectionAbsent: Bool
    /// `profile_ObjectType`: the audio object type minus one (1 = LC).
    public var profile: UInt8
    /// `sampling_frequency_index`.
    public var samplingFrequencyIndex: SamplingFrequencyIndex
    /// `private_bit`.
    public var privateBit: Bool
    /// `channel_configuration`: 1–7; 0 means a program_config_element in the raw data says.
    public var channelConfiguration: UInt8
    /// `original_copy`.
    public var originalCopy: Bool
    /// `home`.
    public var home: Bool

    // adts_variable_header
    /// `copyright_identification_bit`.
    public var copyrightIdentificationBit: Bool
    /// `copyright_identification_start`.
    public var copyrightIdentificationStart: Bool
    /// `aac_frame_length`: the whole frame, header included, in bytes (13 bits, at most 8191).
    public var frameLength: Int
    /// `adts_buffer_fullness`: 11 bits; 0x7FF signals a variable-rate stream.
    public var bufferFullness: UInt16
    /// `number_of_raw_data_blocks_in_frame`: the frame holds this many blocks plus one.
    public var rawDataBlockCountMinusOne: UInt8

    // adts_error_check / adts_header_error_check
    /// `raw_data_block_position[i]` for blocks 1…n (protected frames with several blocks only).
    public var rawDataBlockPositions: [UInt16]
    /// `crc_check` as read, when `protectionAbsent` is false.
    public var crc: UInt16?

    /// The value of `adts_buffer_fullness` that marks a variable-rate stream.
    public static let variableRateFullness: UInt16 = 0x7FF
    /// The longest frame `aac_frame_length` can describe.
    public static let maximumFrameLength = 8191

    /// A header with every field given; the lengths are checked by ``serialized()``.
    public init(
        mpegVersion: MPEGVersion = .mpeg4,
        layer: UInt8 = 0,
        protectionAbsent: Bool = true,
        profile: UInt8,
        samplingFrequencyIndex: SamplingFrequencyIndex,
        privateBit: Bool = false,
        channelConfiguration: UInt8,
        originalCopy: Bool = false,
        home: Bool = false,
        copyrightIdentificationBit: Bool = false,
        copyrightIdentificationStart: Bool = false,
        frameLength: Int,
        bufferFullness: UInt16 = ADTSHeader.variableRateFullness,
        rawDataBlockCountMinusOne: UInt8 = 0,
        rawDataBlockPositions: [UInt16] = [],
        crc: UInt16? = nil
    ) {
        self.mpegVersion = mpegVersion
        self.layer = layer
        self.protectionAbsent = protectionAbsent
        self.profile = profile
        self.samplingFrequencyIndex = samplingFrequencyIndex
        self.privateBit = privateBit
        self.channelConfiguration = channelConfiguration
        self.originalCopy = originalCopy
        self.home = home
        self.copyrightIdentificationBit = copyrightIdentificationBit
        self.copyrightIdentificationStart = copyrightIdentificationStart
        self.frameLength = frameLength
        self.bufferFullness = bufferFullness
        self.rawDataBlockCountMinusOne = rawDataBlockCountMinusOne
        self.rawDataBlockPositions = rawDataBlockPositions
        self.crc = crc
    }

    /// Bytes of header before the first raw data block: 7, plus 2 for the CRC and 2 per extra
    /// block position when protected.
    public var headerLength: Int {
        protectionAbsent ? 7 : 7 + 2 * Int(rawDataBlockCountMinusOne) + 2
    }

    /// Raw data blocks in the frame.
    public var rawDataBlockCount: Int { Int(rawDataBlockCountMinusOne) + 1 }

    /// The audio object type the profile field names (profile + 1).
    public var audioObjectType: AudioObjectType { AudioObjectType(rawValue: profile + 1) }

    /// PCM frames the frame decodes to: 1024 per raw data block.
    public var sampleCount: Int { 1024 * rawDataBlockCount }

    /// Bytes of raw data (and per-block CRCs) after the header.
    public var payloadLength: Int { frameLength - headerLength }

    /// The sampling frequency in Hz, `nil` for a reserved index.
    public var sampleRate: Int? { samplingFrequencyIndex.frequency }
}

extension ADTSHeader {
    /// Quick test of the 12-bit syncword and the layer field at `bytes[index...]`, the first thing
    /// a resynchronising reader looks for.
    @inlinable
    public static func hasSyncword(_ first: UInt8, _ second: UInt8) -> Bool {
        first == 0xFF && (second & 0xF6) == 0xF0
    }

    /// Parses a header at the reader's position and validates it: syncword, layer 0, a sampling
    /// frequency index with a frequency, and a frame length that holds its own header.
    ///
    /// - Throws: ``AACBitstreamError/invalidField(structure:field:value:offset:allowed:)`` naming
    ///   the field, or ``AACBitstreamError/truncated(structure:_:)``.
    public init(from reader: inout ByteReader) throws(AACBitstreamError) {
        let start = reader.offset
        let structure = "ADTS header"
        // The 56 bits of adts_fixed_header and adts_variable_header sit at fixed positions: read
        // them as one integer and take the fields out with shifts.
        let word = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) -> UInt64 in
            var peek = reader
            return try peek.readBigEndian(byteCount: 7)
        }
        func bits(_ from: Int, _ count: Int) -> UInt64 { (word >> UInt64(56 - from - count)) & ((1 << UInt64(count)) - 1) }
        let syncword = bits(0, 12)
        guard syncword == 0xFFF else {
            throw .invalidField(structure: structure, field: "syncword", value: Int64(syncword), offset: start, allowed: "0xFFF")
        }
        mpegVersion = bits(12, 1) == 0 ? .mpeg4 : .mpeg2
        layer = UInt8(bits(13, 2))
        guard layer == 0 else {
            throw .invalidField(structure: structure, field: "layer", value: Int64(layer), offset: start + 1, allowed: "0")
        }
        protectionAbsent = bits(15, 1) == 1
        profile = UInt8(bits(16, 2))
        samplingFrequencyIndex = SamplingFrequencyIndex(rawValue: UInt8(bits(18, 4)))
        guard samplingFrequencyIndex.frequency != nil else {
            throw .invalidField(structure: structure, field: "sampling_frequency_index",
                                value: Int64(samplingFrequencyIndex.rawValue), offset: start + 2, allowed: "0...12")
        }
        privateBit = bits(22, 1) == 1
        channelConfiguration = UInt8(bits(23, 3))
        originalCopy = bits(26, 1) == 1
        home = bits(27, 1) == 1
        copyrightIdentificationBit = bits(28, 1) == 1
        copyrightIdentificationStart = bits(29, 1) == 1
        frameLength = Int(bits(30, 13))
        bufferFullness = UInt16(bits(43, 11))
        rawDataBlockCountMinusOne = UInt8(bits(54, 2))
        rawDataBlockPositions = []
        crc = nil
        let needed = headerLength
        guard frameLength >= needed else {
            throw .invalidField(structure: structure, field: "aac_frame_length", value: Int64(frameLength),
                                offset: start + 3, allowed: "\(needed)...8191 (at least the header)")
        }
        let protectionAbsent = self.protectionAbsent
        let blockCount = Int(rawDataBlockCountMinusOne)
        let (positions, crcValue) = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) -> ([UInt16], UInt16?) in
            try reader.skip(7)
            guard !protectionAbsent else { return ([], nil) }
            var positions: [UInt16] = []
            for _ in 0..<blockCount { positions.append(try reader.readUInt16()) }
            return (positions, try reader.readUInt16())
        }
        rawDataBlockPositions = positions
        crc = crcValue
    }

    /// Parses and validates the header at the start of `bytes`.
    public init(bytes: [UInt8], baseOffset: Int64 = 0) throws(AACBitstreamError) {
        var reader = ByteReader(bytes, baseOffset: baseOffset)
        try self.init(from: &reader)
    }

    /// The header's bytes: exactly ``headerLength`` of them.
    ///
    /// - Throws: ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)`` when a field
    ///   does not fit its width (a frame over 8191 bytes, a profile over 3) or the error-check
    ///   fields do not match `protectionAbsent` and the block count.
    public func serialized() throws(AACBitstreamError) -> [UInt8] {
        let structure = "ADTS header"
        func check(_ name: String, _ value: Int, _ range: ClosedRange<Int>) throws(AACBitstreamError) {
            guard range.contains(value) else {
                throw .unrepresentable(structure: structure, field: name, value: Int64(value),
                                       allowed: "\(range.lowerBound)...\(range.upperBound)")
            }
        }
        try check("layer", Int(layer), 0...3)
        try check("profile", Int(profile), 0...3)
        try check("channel_configuration", Int(channelConfiguration), 0...7)
        try check("aac_frame_length", frameLength, headerLength...Self.maximumFrameLength)
        try check("adts_buffer_fullness", Int(bufferFullness), 0...0x7FF)
        try check("number_of_raw_data_blocks_in_frame", Int(rawDataBlockCountMinusOne), 0...3)
        if protectionAbsent {
            guard crc == nil, rawDataBlockPositions.isEmpty else {
                throw .unrepresentable(structure: structure, field: "crc_check", value: 1, allowed: "none when protection_absent is 1")
            }
        } else {
            try check("raw_data_block_position count", rawDataBlockPositions.count, Int(rawDataBlockCountMinusOne)...Int(rawDataBlockCountMinusOne))
        }
        var writer = BitWriter()
        writer.write(0xFFF, bits: 12)
        writer.write(mpegVersion.rawValue, bits: 1)
        writer.write(layer, bits: 2)
        writer.writeFlag(protectionAbsent)
        writer.write(profile, bits: 2)
        writer.write(samplingFrequencyIndex.rawValue, bits: 4)
        writer.writeFlag(privateBit)
        writer.write(channelConfiguration, bits: 3)
        writer.writeFlag(originalCopy)
        writer.writeFlag(home)
        writer.writeFlag(copyrightIdentificationBit)
        writer.writeFlag(copyrightIdentificationStart)
        writer.write(frameLength, bits: 13)
        writer.write(bufferFullness, bits: 11)
        writer.write(rawDataBlockCountMinusOne, bits: 2)
        if !protectionAbsent {
            for position in rawDataBlockPositions { writer.write(position, bits: 16) }
            writer.write(crc ?? 0, bits: 16)
        }
        return writer.bytes
    }
}
