public import MediaCore

/// `GASpecificConfig()` of ISO/IEC 14496-3, 4.4.1 (Table 4.1): the configuration of the
/// general-audio (AAC) object types.
public struct GASpecificConfig: Sendable, Hashable {
    /// `frameLengthFlag`: 960- (or 480-) sample frames instead of 1024 (512).
    public var frameLengthFlag: Bool
    /// `coreCoderDelay` when `dependsOnCoreCoder` is set (14 bits).
    public var coreCoderDelay: UInt16?
    /// `extensionFlag`.
    public var extensionFlag: Bool
    /// The PCE, present exactly when the channel configuration is 0.
    public var programConfigElement: ProgramConfigElement?
    /// `layerNr` (3 bits), for AAC Scalable and ER AAC Scalable.
    public var layerNumber: UInt8?
    /// `numOfSubFrame` (5 bits), for ER BSAC with the extension flag.
    public var bsacSubFrameCount: UInt8?
    /// `layer_length` (11 bits), for ER BSAC with the extension flag.
    public var bsacLayerLength: UInt16?
    /// `aacSectionDataResilienceFlag`, `aacScalefactorDataResilienceFlag`,
    /// `aacSpectralDataResilienceFlag` (3 bits, in that order), for ER AAC types with the extension flag.
    public var resilienceFlags: UInt8?
    /// `extensionFlag3`, when `extensionFlag` is set.
    public var extensionFlag3: Bool?

    /// The configuration FFmpeg and Apple write for AAC-LC: 1024-sample frames, no core coder, no extension.
    public init(frameLengthFlag: Bool = false, coreCoderDelay: UInt16? = nil, extensionFlag: Bool = false,
                programConfigElement: ProgramConfigElement? = nil) {
        self.frameLengthFlag = frameLengthFlag
        self.coreCoderDelay = coreCoderDelay
        self.extensionFlag = extensionFlag
        self.programConfigElement = programConfigElement
        self.extensionFlag3 = extensionFlag ? false : nil
    }

    /// Parses the fields for `objectType` and `channelConfiguration` at the reader's position.
    public init(from reader: inout BitReader, objectType: AudioObjectType, channelConfiguration: UInt8) throws(AACBitstreamError) {
        let structure = "GASpecificConfig"
        frameLengthFlag = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try reader.readFlag() }
        coreCoderDelay = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) -> UInt16? in
            try reader.readFlag() ? try reader.read(14) : nil
        }
        extensionFlag = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try reader.readFlag() }
        programConfigElement = channelConfiguration == 0 ? try ProgramConfigElement(from: &reader) : nil
        let type = objectType.rawValue
        let extensionFlag = self.extensionFlag
        let tail = try AACBitstreamError.reading(structure) {
            () throws(BinaryReadError) -> (UInt8?, UInt8?, UInt16?, UInt8?, Bool?) in
            let layer: UInt8? = (type == 6 || type == 20) ? try reader.read(3) : nil
            guard extensionFlag else { return (layer, nil, nil, nil, nil) }
            var subFrames: UInt8?
            var layerLength: UInt16?
            if type == 22 {
                subFrames = try reader.read(5)
                layerLength = try reader.read(11)
            }
            let resilience: UInt8? = [17, 19, 20, 23].contains(type) ? try reader.read(3) : nil
            return (layer, subFrames, layerLength, resilience, try reader.readFlag())
        }
        (layerNumber, bsacSubFrameCount, bsacLayerLength, resilienceFlags, extensionFlag3) = tail
    }

    /// Writes the fields for `objectType`.
    public func write(to writer: inout BitWriter, objectType: AudioObjectType) throws(AACBitstreamError) {
        writer.writeFlag(frameLengthFlag)
        writer.writeFlag(coreCoderDelay != nil)
        if let delay = coreCoderDelay { writer.write(delay & 0x3FFF, bits: 14) }
        writer.writeFlag(extensionFlag)
        if let pce = programConfigElement { try pce.write(to: &writer) }
        let type = objectType.rawValue
        if type == 6 || type == 20 { writer.write((layerNumber ?? 0) & 0x7, bits: 3) }
        if extensionFlag {
            if type == 22 {
                writer.write((bsacSubFrameCount ?? 0) & 0x1F, bits: 5)
                writer.write((bsacLayerLength ?? 0) & 0x7FF, bits: 11)
            }
            if [17, 19, 20, 23].contains(type) { writer.write((resilienceFlags ?? 0) & 0x7, bits: 3) }
            writer.writeFlag(extensionFlag3 ?? false)
        }
    }
}
