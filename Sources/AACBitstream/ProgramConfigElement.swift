public import MediaCore

/// `program_config_element()` of ISO/IEC 14496-3, 4.4.1.1 (Table 4.2): the channel layout of a
/// stream whose channel configuration is 0, carried in the GASpecificConfig or in the first raw
/// data block of an ADTS frame.
public struct ProgramConfigElement: Sendable, Hashable {
    /// A front, side or back channel element: a single channel or a channel pair, by tag.
    public struct ChannelElement: Sendable, Hashable {
        /// `*_element_is_cpe`.
        public var isChannelPair: Bool
        /// `*_element_tag_select`.
        public var tag: UInt8

        /// An element.
        public init(isChannelPair: Bool, tag: UInt8) {
            self.isChannelPair = isChannelPair
            self.tag = tag
        }
    }

    /// A coupling channel element.
    public struct CouplingElement: Sendable, Hashable {
        /// `cc_element_is_ind_sw`.
        public var isIndependentlySwitched: Bool
        /// `valid_cc_element_tag_select`.
        public var tag: UInt8

        /// An element.
        public init(isIndependentlySwitched: Bool, tag: UInt8) {
            self.isIndependentlySwitched = isIndependentlySwitched
            self.tag = tag
        }
    }

    /// The matrix mixdown fields.
    public struct MatrixMixdown: Sendable, Hashable {
        /// `matrix_mixdown_idx` (2 bits).
        public var index: UInt8
        /// `pseudo_surround_enable`.
        public var pseudoSurround: Bool

        /// A matrix mixdown.
        public init(index: UInt8, pseudoSurround: Bool) {
            self.index = index
            self.pseudoSurround = pseudoSurround
        }
    }

    /// `element_instance_tag` (4 bits).
    public var elementInstanceTag: UInt8
    /// `object_type` (2 bits: object type minus one).
    public var objectType: UInt8
    /// `sampling_frequency_index`.
    public var samplingFrequencyIndex: SamplingFrequencyIndex
    /// Front channel elements (at most 15).
    public var front: [ChannelElement]
    /// Side channel elements (at most 15).
    public var side: [ChannelElement]
    /// Back channel elements (at most 15).
    public var back: [ChannelElement]
    /// LFE element tags (at most 3).
    public var lowFrequencyEffects: [UInt8]
    /// Associated data element tags (at most 7).
    public var associatedData: [UInt8]
    /// Coupling channel elements (at most 15).
    public var coupling: [CouplingElement]
    /// `mono_mixdown_element_number`, when present.
    public var monoMixdownElementNumber: UInt8?
    /// `stereo_mixdown_element_number`, when present.
    public var stereoMixdownElementNumber: UInt8?
    /// The matrix mixdown, when present.
    public var matrixMixdown: MatrixMixdown?
    /// The `byte_alignment()` bits, kept so writing gives the same bits.
    public var alignmentBits: BitString
    /// `comment_field_data`.
    public var comment: [UInt8]

    /// Output channels: 2 per channel pair, 1 per single channel and per LFE.
    public var channelCount: Int {
        (front + side + back).reduce(0) { $0 + ($1.isChannelPair ? 2 : 1) } + lowFrequencyEffects.count
    }

    /// Parses a PCE at the reader's position (after any `id_syn_ele`). Byte alignment is
    /// relative to the start of the reader's window, as in an AudioSpecificConfig.
    public init(from reader: inout BitReader) throws(AACBitstreamError) {
        let structure = "program_config_element"
        let parsed = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) -> ProgramConfigElement in
            let tag: UInt8 = try reader.read(4)
            let objectType: UInt8 = try reader.read(2)
            let index = SamplingFrequencyIndex(rawValue: try reader.read(4))
            let frontCount = Int(try reader.readBits(4))
            let sideCount = Int(try reader.readBits(4))
            let backCount = Int(try reader.readBits(4))
            let lfeCount = Int(try reader.readBits(2))
            let assocCount = Int(try reader.readBits(3))
            let ccCount = Int(try reader.readBits(4))
            let mono: UInt8? = try reader.readFlag() ? try reader.read(4) : nil
            let stereo: UInt8? = try reader.readFlag() ? try reader.read(4) : nil
            let matrix: MatrixMixdown? = try reader.readFlag()
                ? MatrixMixdown(index: try reader.read(2), pseudoSurround: try reader.readFlag()) : nil
            func elements(_ count: Int) throws(BinaryReadError) -> [ChannelElement] {
                var list: [ChannelElement] = []
                for _ in 0..<count { list.append(ChannelElement(isChannelPair: try reader.readFlag(), tag: try reader.read(4))) }
                return list
            }
            let front = try elements(frontCount)
            let side = try elements(sideCount)
            let back = try elements(backCount)
            var lfe: [UInt8] = []
            for _ in 0..<lfeCount { lfe.append(try reader.read(4)) }
            var assoc: [UInt8] = []
            for _ in 0..<assocCount { assoc.append(try reader.read(4)) }
            var coupling: [CouplingElement] = []
            for _ in 0..<ccCount {
                coupling.append(CouplingElement(isIndependentlySwitched: try reader.readFlag(), tag: try reader.read(4)))
            }
            let alignment = reader.alignToByte()
            let commentLength = Int(try reader.readBits(8))
            var comment: [UInt8] = []
            for _ in 0..<commentLength { comment.append(try reader.read(8)) }
            return ProgramConfigElement(
                elementInstanceTag: tag, objectType: objectType, samplingFrequencyIndex: index,
                front: front, side: side, back: back, lowFrequencyEffects: lfe, associatedData: assoc,
                coupling: coupling, monoMixdownElementNumber: mono, stereoMixdownElementNumber: stereo,
                matrixMixdown: matrix, alignmentBits: alignment, comment: comment)
        }
        self = parsed
    }

    /// A PCE with every field given.
    public init(
        elementInstanceTag: UInt8 = 0, objectType: UInt8 = 1, samplingFrequencyIndex: SamplingFrequencyIndex,
        front: [ChannelElement], side: [ChannelElement] = [], back: [ChannelElement] = [],
        lowFrequencyEffects: [UInt8] = [], associatedData: [UInt8] = [], coupling: [CouplingElement] = [],
        monoMixdownElementNumber: UInt8? = nil, stereoMixdownElementNumber: UInt8? = nil,
        matrixMixdown: MatrixMixdown? = nil, alignmentBits: BitString = BitString(), comment: [UInt8] = []
    ) {
        self.elementInstanceTag = elementInstanceTag
        self.objectType = objectType
        self.samplingFrequencyIndex = samplingFrequencyIndex
        self.front = front
        self.side = side
        self.back = back
        self.lowFrequencyEffects = lowFrequencyEffects
        self.associatedData = associatedData
        self.coupling = coupling
        self.monoMixdownElementNumber = monoMixdownElementNumber
        self.stereoMixdownElementNumber = stereoMixdownElementNumber
        self.matrixMixdown = matrixMixdown
        self.alignmentBits = alignmentBits
        self.comment = comment
    }

    /// Writes the PCE. Alignment pads to the writer's byte boundary with the kept bits when
    /// they fit, zeros otherwise.
    public func write(to writer: inout BitWriter) throws(AACBitstreamError) {
        func limit(_ name: String, _ count: Int, _ maximum: Int) throws(AACBitstreamError) {
            guard count <= maximum else {
                throw .unrepresentable(structure: "program_config_element", field: name, value: Int64(count), allowed: "0...\(maximum)")
            }
        }
        try limit("num_front_channel_elements", front.count, 15)
        try limit("num_side_channel_elements", side.count, 15)
        try limit("num_back_channel_elements", back.count, 15)
        try limit("num_lfe_channel_elements", lowFrequencyEffects.count, 3)
        try limit("num_assoc_data_elements", associatedData.count, 7)
        try limit("num_valid_cc_elements", coupling.count, 15)
        try limit("comment_field_bytes", comment.count, 255)
        writer.write(elementInstanceTag & 0xF, bits: 4)
        writer.write(objectType & 0x3, bits: 2)
        writer.write(samplingFrequencyIndex.rawValue, bits: 4)
        writer.write(front.count, bits: 4)
        writer.write(side.count, bits: 4)
        writer.write(back.count, bits: 4)
        writer.write(lowFrequencyEffects.count, bits: 2)
        writer.write(associatedData.count, bits: 3)
        writer.write(coupling.count, bits: 4)
        for optional in [monoMixdownElementNumber, stereoMixdownElementNumber] {
            writer.writeFlag(optional != nil)
            if let value = optional { writer.write(value & 0xF, bits: 4) }
        }
        writer.writeFlag(matrixMixdown != nil)
        if let matrix = matrixMixdown {
            writer.write(matrix.index & 0x3, bits: 2)
            writer.writeFlag(matrix.pseudoSurround)
        }
        for element in front + side + back {
            writer.writeFlag(element.isChannelPair)
            writer.write(element.tag & 0xF, bits: 4)
        }
        for tag in lowFrequencyEffects + associatedData { writer.write(tag & 0xF, bits: 4) }
        for element in coupling {
            writer.writeFlag(element.isIndependentlySwitched)
            writer.write(element.tag & 0xF, bits: 4)
        }
        let padding = (8 - writer.bitCount % 8) % 8
        if alignmentBits.count == padding { writer.write(alignmentBits) } else { writer.alignToByte() }
        writer.write(comment.count, bits: 8)
        for byte in comment { writer.write(byte, bits: 8) }
    }
}
