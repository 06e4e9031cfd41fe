public import MediaCore

/// `single_channel_element()` or `lfe_channel_element()` (ISO/IEC 14496-3, 4.4.2.1 Tables
/// 4.4 and 4.9): an element instance tag and one channel stream.
public struct SingleChannelElement: Sendable, Hashable {
    /// `element_instance_tag`.
    public var tag: UInt8
    /// `individual_channel_stream(0, 0)`.
    public var stream: IndividualChannelStream

    /// An element with the given tag and stream.
    public init(tag: UInt8, stream: IndividualChannelStream) {
        self.tag = tag
        self.stream = stream
    }
}

/// `channel_pair_element()` (ISO/IEC 14496-3, 4.4.2.1 Table 4.5; 4.5.2.3.1): two channel
/// streams, with a common `ics_info` and M/S flags when `common_window` is set.
public struct ChannelPairElement: Sendable, Hashable {
    /// `element_instance_tag`.
    public var tag: UInt8
    /// `common_window`: both streams share ``first``'s `ics_info`, written once.
    public var commonWindow: Bool
    /// `ms_mask_present` (common window only): 0 none, 1 per band (``msUsed``), 2 all bands.
    public var msMaskPresent: UInt8
    /// `ms_used[g][sfb]`, `group · max_sfb + sfb`, when ``msMaskPresent`` is 1.
    public var msUsed: [Bool]
    /// The first channel's `individual_channel_stream`.
    public var first: IndividualChannelStream
    /// The second channel's; with a common window its `info` equals ``first``'s.
    public var second: IndividualChannelStream

    /// A pair with every field given.
    public init(tag: UInt8, commonWindow: Bool, msMaskPresent: UInt8 = 0, msUsed: [Bool] = [],
                first: IndividualChannelStream, second: IndividualChannelStream) {
        self.tag = tag
        self.commonWindow = commonWindow
        self.msMaskPresent = msMaskPresent
        self.msUsed = msUsed
        self.first = first
        self.second = second
    }
}

/// `data_stream_element()` (ISO/IEC 14496-3, 4.4.2.1 Table 4.10; 4.5.2.3.3): ancillary bytes.
public struct DataStreamElement: Sendable, Hashable {
    /// `element_instance_tag`.
    public var tag: UInt8
    /// `data_byte_align_flag`: the bytes start on a byte boundary of the raw data block.
    public var byteAligned: Bool
    /// The bits skipped by that alignment, kept as read (zeros when written anew).
    public var alignmentBits: BitString
    /// `data_stream_byte[]` (up to 510 bytes: `count` and `esc_count`).
    public var data: [UInt8]

    /// A data stream element.
    public init(tag: UInt8, byteAligned: Bool, alignmentBits: BitString = BitString(), data: [UInt8]) {
        self.tag = tag
        self.byteAligned = byteAligned
        self.alignmentBits = alignmentBits
        self.data = data
    }
}

/// `fill_element()` (ISO/IEC 14496-3, 4.4.2.1 Table 4.11; 4.5.2.9): `cnt` bytes of
/// `extension_payload()` (Table 4.51), kept opaque; the first four bits are its
/// `extension_type` (Table 4.121).
public struct FillElement: Sendable, Hashable {
    /// `extension_type` values (ISO/IEC 14496-3, Table 4.121).
    public enum ExtensionType {
        /// EXT_FILL: fill bits.
        public static let fill: UInt8 = 0
        /// EXT_FILL_DATA.
        public static let fillData: UInt8 = 1
        /// EXT_DATA_ELEMENT.
        public static let dataElement: UInt8 = 2
        /// EXT_DYNAMIC_RANGE.
        public static let dynamicRange: UInt8 = 11
        /// EXT_SAC_DATA.
        public static let sacData: UInt8 = 12
        /// EXT_SBR_DATA: `sbr_extension_data()` of the channel element before (4.4.2.8).
        public static let sbrData: UInt8 = 13
        /// EXT_SBR_DATA_CRC: the same, after a 10-bit `bs_sbr_crc_bits`.
        public static let sbrDataCRC: UInt8 = 14
    }

    /// The largest payload: `count` 15 plus `esc_count` 255, minus 1 (4.5.2.9).
    public static let maximumPayloadBytes = 269

    /// Whether `count` was 15, the escape to an 8-bit `esc_count`: payloads of 14 bytes have
    /// two codings, and the one read is kept.
    public var escapedCount: Bool
    /// The `cnt` bytes of `extension_payload()`.
    public var payload: [UInt8]

    /// A fill element of `payload`, escaped when it needs to be.
    public init(payload: [UInt8]) throws(AACBitstreamError) {
        guard payload.count <= Self.maximumPayloadBytes else {
            throw .unrepresentable(structure: "fill_element", field: "cnt", value: Int64(payload.count), allowed: "0...\(Self.maximumPayloadBytes)")
        }
        self.escapedCount = payload.count >= 15
        self.payload = payload
    }

    /// An `extension_payload()` of `extensionType` (4 bits) followed by `bits`, zero-filled to
    /// whole bytes: an SBR payload is `sbr_extension_data()` with its fill bits (4.4.2.8).
    public init(extensionType: UInt8, bits: BitString = BitString()) throws(AACBitstreamError) {
        guard extensionType < 16 else {
            throw .unrepresentable(structure: "extension_payload", field: "extension_type", value: Int64(extensionType), allowed: "0...15")
        }
        var writer = BitWriter()
        writer.write(extensionType, bits: 4)
        writer.write(bits)
        writer.alignToByte()
        try self.init(payload: writer.bytes)
    }

    /// `escapedCount` and `payload` as read.
    init(escapedCount: Bool, payload: [UInt8]) {
        self.escapedCount = escapedCount
        self.payload = payload
    }

    /// The payload's `extension_type`, `nil` for an empty element.
    public var extensionType: UInt8? { payload.first.map { $0 >> 4 } }
}

/// One `raw_data_block()` of AAC-LC (ISO/IEC 14496-3, 4.4.2.1 Table 4.3; 4.5.2.1): its
/// syntactic elements in order, parsed to the last bit, and written back bit-exactly.
///
/// An ADTS frame's payload (after the header and CRC) and an MP4 sample are one such block,
/// padded with `byte_alignment()` after `ID_END`. Coupling channel elements (`ID_CCE`), AAC
/// Main prediction and SSR gain control are refused with typed errors.
public struct RawDataBlock: Sendable, Hashable {
    /// What a raw data block's syntax depends on (ISO/IEC 14496-3, 1.6.2.1 and 4.5.1.1): the
    /// object type (AAC-LC only), the sampling frequency index (the scalefactor bands) and the
    /// channel configuration.
    public struct Configuration: Sendable, Hashable {
        /// The audio object type; only AAC-LC (2) is read.
        public var objectType: AudioObjectType
        /// `samplingFrequencyIndex` (0–12).
        public var samplingFrequencyIndex: SamplingFrequencyIndex
        /// `channelConfiguration` (0 when a PCE says the layout).
        public var channelConfiguration: UInt8

        /// A configuration; AAC-LC unless said otherwise.
        public init(objectType: AudioObjectType = .aacLC, samplingFrequencyIndex: SamplingFrequencyIndex, channelConfiguration: UInt8) {
            self.objectType = objectType
            self.samplingFrequencyIndex = samplingFrequencyIndex
            self.channelConfiguration = channelConfiguration
        }

        /// The configuration an ADTS header gives (its `profile` is the object type minus 1).
        public init(_ header: ADTSHeader) {
            self.init(objectType: header.audioObjectType, samplingFrequencyIndex: header.samplingFrequencyIndex,
                      channelConfiguration: header.channelConfiguration)
        }
    }

    /// A syntactic element (`id_syn_ele`, Table 4.85), in the order of the block.
    public enum Element: Sendable, Hashable {
        /// ID_SCE (0).
        case singleChannel(SingleChannelElement)
        /// ID_CPE (1).
        case channelPair(ChannelPairElement)
        /// ID_LFE (3).
        case lowFrequencyEffects(SingleChannelElement)
        /// ID_DSE (4).
        case dataStream(DataStreamElement)
        /// ID_PCE (5).
        case programConfig(ProgramConfigElement)
        /// ID_FIL (6).
        case fill(FillElement)

        /// `id_syn_ele`.
        public var identifier: UInt8 {
            switch self {
            case .singleChannel: 0
            case .channelPair: 1
            case .lowFrequencyEffects: 3
            case .dataStream: 4
            case .programConfig: 5
            case .fill: 6
            }
        }

        /// Whether the element is an SCE or a CPE, which an SBR fill element follows (4.5.2.9).
        public var isAudioChannelElement: Bool {
            switch self {
            case .singleChannel, .channelPair: true
            default: false
            }
        }
    }

    /// `ID_END`.
    public static let endIdentifier: UInt8 = 7

    /// The configuration the block was read with and is written with.
    public var configuration: Configuration
    /// The elements before `ID_END`, in order.
    public var elements: [Element]
    /// The `byte_alignment()` bits after `ID_END`, kept as read (zeros when the length changed).
    public var alignmentBits: BitString
    /// Bytes after the aligned end of the block (none in a well-formed frame), kept as read.
    public var trailingBytes: [UInt8]
    /// The bit range of each element as read, relative to the block's first bit (with its
    /// `id_syn_ele`); ``insert(_:after:)`` does not update it — ``elementBitRanges()`` is the
    /// range of each element as written.
    public private(set) var parsedBitRanges: [Range<Int>]

    /// A block of the given elements.
    public init(configuration: Configuration, elements: [Element], alignmentBits: BitString = BitString(), trailingBytes: [UInt8] = []) {
        self.configuration = configuration
        self.elements = elements
        self.alignmentBits = alignmentBits
        self.trailingBytes = trailingBytes
        self.parsedBitRanges = []
    }

    /// Parses a whole raw data block: `bytes` from its first bit (the byte after an ADTS header
    /// and its CRC, or an MP4 sample); `baseOffset` is that byte's absolute offset, for errors.
    public init(parsing bytes: [UInt8], configuration: Configuration, baseOffset: Int64 = 0) throws(AACBitstreamError) {
        let structure = "raw_data_block"
        guard configuration.objectType == .aacLC else {
            throw .invalidField(structure: structure, field: "audioObjectType", value: Int64(configuration.objectType.rawValue),
                                offset: baseOffset, allowed: "2 (AAC-LC)")
        }
        guard let layout = BandLayout(samplingFrequencyIndex: Int(configuration.samplingFrequencyIndex.rawValue)) else {
            throw .invalidField(structure: structure, field: "samplingFrequencyIndex", value: Int64(configuration.samplingFrequencyIndex.rawValue),
                                offset: baseOffset, allowed: "0...12")
        }
        var reader = BitReader(bytes, baseOffset: baseOffset)
        var elements: [Element] = []
        var ranges: [Range<Int>] = []
        while true {
            let start = reader.bitsConsumed
            let offset = reader.byteOffset
            let identifier = try reader.field(3, structure)
            let element: Element
            switch identifier {
            case 0, 3:
                let tag = UInt8(try reader.field(4, "single_channel_element"))
                let stream = try IndividualChannelStream(from: &reader, commonInfo: nil, layout: layout)
                let single = SingleChannelElement(tag: tag, stream: stream)
                element = identifier == 0 ? .singleChannel(single) : .lowFrequencyEffects(single)
            case 1:
                element = .channelPair(try ChannelPairElement(from: &reader, layout: layout))
            case 4:
                element = .dataStream(try DataStreamElement(from: &reader))
            case 5:
                element = .programConfig(try ProgramConfigElement(from: &reader))
            case 6:
                var count = try reader.field(4, "fill_element")
                let escaped = count == 15
                if escaped { count += try reader.field(8, "fill_element") - 1 }
                var payload: [UInt8] = []
                guard count * 8 <= reader.bitsRemaining else {
                    throw .truncated(structure: "fill_element",
                                     BinaryReadError(offset: reader.byteOffset, needed: count * 8, available: reader.bitsRemaining, unit: .bits))
                }
                payload.reserveCapacity(count)
                for _ in 0..<count { payload.append(UInt8(try reader.field(8, "fill_element"))) }
                element = .fill(FillElement(escapedCount: escaped, payload: payload))
            case 7:
                self.configuration = configuration
                self.elements = elements
                self.parsedBitRanges = ranges
                self.alignmentBits = reader.alignToByte()
                var trailing: [UInt8] = []
                trailing.reserveCapacity(reader.bitsRemaining / 8)
                while reader.bitsRemaining >= 8 { trailing.append(UInt8(try reader.field(8, structure))) }
                self.trailingBytes = trailing
                return
            default:
                throw .invalidField(structure: structure, field: "id_syn_ele", value: Int64(identifier), offset: offset,
                                    allowed: "0, 1, 3–7 (coupling channel elements are not supported)")
            }
            elements.append(element)
            ranges.append(start ..< reader.bitsConsumed)
        }
    }

    /// The block written back: the elements, `ID_END`, `byte_alignment()` (the kept bits when
    /// they still fit, else zeros) and any trailing bytes. A parsed block gives back its bytes.
    public func serialized() throws(AACBitstreamError) -> [UInt8] {
        var writer = BitWriter()
        try write(to: &writer)
        return writer.bytes
    }

    /// Writes the block at the writer's position, which must be the block's first bit (its
    /// alignments are relative to the writer's start).
    public func write(to writer: inout BitWriter) throws(AACBitstreamError) {
        let layout = try layout()
        for element in elements { try element.write(to: &writer, layout: layout) }
        writer.write(Self.endIdentifier, bits: 3)
        if alignmentBits.count == (8 - writer.bitCount % 8) % 8 { writer.write(alignmentBits) } else { writer.alignToByte() }
        for byte in trailingBytes { writer.write(byte, bits: 8) }
    }

    /// The bit range of each element as written by ``serialized()``: for a parsed block, the
    /// same as ``parsedBitRanges``.
    public func elementBitRanges() throws(AACBitstreamError) -> [Range<Int>] {
        let layout = try layout()
        var writer = BitWriter()
        var ranges: [Range<Int>] = []
        for element in elements {
            let start = writer.bitCount
            try element.write(to: &writer, layout: layout)
            ranges.append(start ..< writer.bitCount)
        }
        return ranges
    }

    /// Inserts `element` right after the element at `index` (4.5.2.9: an `EXT_SBR_DATA` fill
    /// element follows the SCE or CPE it belongs to); `index` −1 inserts at the start.
    public mutating func insert(_ element: Element, after index: Int) throws(AACBitstreamError) {
        guard (-1..<elements.count).contains(index) else {
            throw .unrepresentable(structure: "raw_data_block", field: "element index", value: Int64(index), allowed: "-1..<\(elements.count)")
        }
        elements.insert(element, at: index + 1)
    }

    private func layout() throws(AACBitstreamError) -> BandLayout {
        guard configuration.objectType == .aacLC,
              let layout = BandLayout(samplingFrequencyIndex: Int(configuration.samplingFrequencyIndex.rawValue)) else {
            throw .unrepresentable(structure: "raw_data_block", field: "configuration", value: Int64(configuration.samplingFrequencyIndex.rawValue),
                                   allowed: "AAC-LC at sampling index 0...12")
        }
        return layout
    }
}

extension RawDataBlock.Element {
    func write(to writer: inout BitWriter, layout: BandLayout) throws(AACBitstreamError) {
        writer.write(identifier, bits: 3)
        switch self {
        case .singleChannel(let element), .lowFrequencyEffects(let element):
            writer.write(element.tag & 0xF, bits: 4)
            try element.stream.write(to: &writer, commonWindow: false, layout: layout)
        case .channelPair(let pair):
            try pair.write(to: &writer, layout: layout)
        case .dataStream(let element):
            try element.write(to: &writer)
        case .programConfig(let element):
            try element.write(to: &writer)
        case .fill(let element):
            let count = element.payload.count
            if element.escapedCount {
                guard (14...FillElement.maximumPayloadBytes).contains(count) else {
                    throw .unrepresentable(structure: "fill_element", field: "cnt", value: Int64(count), allowed: "14...269 escaped")
                }
                writer.write(15, bits: 4)
                writer.write(count - 14, bits: 8)
            } else {
                guard count < 15 else {
                    throw .unrepresentable(structure: "fill_element", field: "cnt", value: Int64(count), allowed: "0...14 unescaped")
                }
                writer.write(count, bits: 4)
            }
            for byte in element.payload { writer.write(byte, bits: 8) }
        }
    }
}

extension ChannelPairElement {
    init(from reader: inout BitReader, layout: BandLayout) throws(AACBitstreamError) {
        let structure = "channel_pair_element"
        tag = UInt8(try reader.field(4, structure))
        commonWindow = try reader.flag(structure)
        var common: ChannelStreamInfo?
        msMaskPresent = 0
        msUsed = []
        if commonWindow {
            let info = try ChannelStreamInfo(from: &reader, layout: layout)
            common = info
            let offset = reader.byteOffset
            msMaskPresent = UInt8(try reader.field(2, structure))
            if msMaskPresent == 3 {
                throw .invalidField(structure: structure, field: "ms_mask_present", value: 3, offset: offset, allowed: "0...2")
            }
            if msMaskPresent == 1 {
                let count = info.windowGroupLengths.count * info.maxSFB
                for _ in 0..<count { msUsed.append(try reader.flag(structure)) }
            }
        }
        first = try IndividualChannelStream(from: &reader, commonInfo: common, layout: layout)
        second = try IndividualChannelStream(from: &reader, commonInfo: common, layout: layout)
    }

    func write(to writer: inout BitWriter, layout: BandLayout) throws(AACBitstreamError) {
        let structure = "channel_pair_element"
        writer.write(tag & 0xF, bits: 4)
        writer.writeFlag(commonWindow)
        if commonWindow {
            guard first.info == second.info else {
                throw .unrepresentable(structure: structure, field: "common_window", value: 1, allowed: "the same ics_info in both channels")
            }
            try first.info.write(to: &writer)
            guard msMaskPresent < 3 else {
                throw .unrepresentable(structure: structure, field: "ms_mask_present", value: Int64(msMaskPresent), allowed: "0...2")
            }
            writer.write(msMaskPresent, bits: 2)
            if msMaskPresent == 1 {
                guard msUsed.count == first.info.windowGroupLengths.count * first.info.maxSFB else {
                    throw .unrepresentable(structure: structure, field: "ms_used", value: Int64(msUsed.count), allowed: "one per group and band")
                }
                for used in msUsed { writer.writeFlag(used) }
            }
        }
        try first.write(to: &writer, commonWindow: commonWindow, layout: layout)
        try second.write(to: &writer, commonWindow: commonWindow, layout: layout)
    }
}

extension DataStreamElement {
    init(from reader: inout BitReader) throws(AACBitstreamError) {
        let structure = "data_stream_element"
        tag = UInt8(try reader.field(4, structure))
        byteAligned = try reader.flag(structure)
        var count = try reader.field(8, structure)
        if count == 255 { count += try reader.field(8, structure) }
        alignmentBits = byteAligned ? reader.alignToByte() : BitString()
        guard count * 8 <= reader.bitsRemaining else {
            throw .truncated(structure: structure, BinaryReadError(offset: reader.byteOffset, needed: count * 8, available: reader.bitsRemaining, unit: .bits))
        }
        var data: [UInt8] = []
        data.reserveCapacity(count)
        for _ in 0..<count { data.append(UInt8(try reader.field(8, structure))) }
        self.data = data
    }

    func write(to writer: inout BitWriter) throws(AACBitstreamError) {
        guard data.count <= 510 else {
            throw .unrepresentable(structure: "data_stream_element", field: "cnt", value: Int64(data.count), allowed: "0...510")
        }
        writer.write(tag & 0xF, bits: 4)
        writer.writeFlag(byteAligned)
        if data.count >= 255 {
            writer.write(255, bits: 8)
            writer.write(data.count - 255, bits: 8)
        } else {
            writer.write(data.count, bits: 8)
        }
        if byteAligned {
            if alignmentBits.count == (8 - writer.bitCount % 8) % 8 { writer.write(alignmentBits) } else { writer.alignToByte() }
        }
        for byte in data { writer.write(byte, bits: 8) }
    }
}

extension RawDataBlock {
    /// Whether the block carries SBR data: a fill element of `EXT_SBR_DATA` or
    /// `EXT_SBR_DATA_CRC` (ISO/IEC 14496-3, 4.4.2.8). In a stream whose configuration says
    /// AAC-LC, that is HE-AAC signalled implicitly (1.6.6.2): the decoder doubles the rate.
    public var carriesSBR: Bool {
        elements.contains { element in
            guard case .fill(let fill) = element else { return false }
            return fill.extensionType == FillElement.ExtensionType.sbrData || fill.extensionType == FillElement.ExtensionType.sbrDataCRC
        }
    }
}
