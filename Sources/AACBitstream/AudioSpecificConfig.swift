public import MediaCore

/// `AudioSpecificConfig()` of ISO/IEC 14496-3, 1.6.2.1 (Table 1.15): what an AAC decoder needs
/// to know before the first packet. It is the DecoderSpecificInfo of an esds box, the
/// `extradata` of libavcodec and the payload of an AudioQueue's AAC magic cookie.
///
/// Parsing keeps every bit, including padding and configurations of object types KeyFrameKit
/// does not interpret (for example xHE-AAC, 42), so ``serialized()`` gives back the input bytes.
public struct AudioSpecificConfig: Sendable, Hashable {
    /// Explicit hierarchical SBR/PS signalling: the config starts with object type 5 (SBR) or
    /// 29 (PS) and then names the core object type (14496-3, 1.6.5.2).
    public struct ExplicitExtension: Sendable, Hashable {
        /// 5 (SBR) or 29 (SBR + PS).
        public var signalledObjectType: AudioObjectType
        /// `extensionSamplingFrequencyIndex`: the output rate of SBR.
        public var samplingFrequencyIndex: SamplingFrequencyIndex
        /// `extensionSamplingFrequency` when the index is the escape.
        public var explicitSamplingFrequency: Int?

        /// An explicit extension.
        public init(signalledObjectType: AudioObjectType, samplingFrequencyIndex: SamplingFrequencyIndex, explicitSamplingFrequency: Int? = nil) {
            self.signalledObjectType = signalledObjectType
            self.samplingFrequencyIndex = samplingFrequencyIndex
            self.explicitSamplingFrequency = explicitSamplingFrequency
        }
    }

    /// The backward-compatible extension after the core config, introduced by the sync word
    /// 0x2B7 (and 0x548 for PS) (14496-3, 1.6.2.1 and 1.6.6.1).
    public struct SyncExtension: Sendable, Hashable {
        /// `extensionAudioObjectType` (5 for SBR, 22 for BSAC).
        public var objectType: AudioObjectType
        /// `sbrPresentFlag`, for object types 5 and 22.
        public var sbrPresent: Bool?
        /// `extensionSamplingFrequencyIndex`, when SBR is present.
        public var samplingFrequencyIndex: SamplingFrequencyIndex?
        /// `extensionSamplingFrequency` when that index is the escape.
        public var explicitSamplingFrequency: Int?
        /// `psPresentFlag` after the 0x548 sync word, when it is there.
        public var psPresent: Bool?
        /// `extensionChannelConfiguration`, for object type 22.
        public var channelConfiguration: UInt8?

        /// A sync extension.
        public init(objectType: AudioObjectType, sbrPresent: Bool? = nil, samplingFrequencyIndex: SamplingFrequencyIndex? = nil,
                    explicitSamplingFrequency: Int? = nil, psPresent: Bool? = nil, channelConfiguration: UInt8? = nil) {
            self.objectType = objectType
            self.sbrPresent = sbrPresent
            self.samplingFrequencyIndex = samplingFrequencyIndex
            self.explicitSamplingFrequency = explicitSamplingFrequency
            self.psPresent = psPresent
            self.channelConfiguration = channelConfiguration
        }
    }

    /// The object-type specific configuration: the `switch (audioObjectType)` of
    /// AudioSpecificConfig (ISO/IEC 14496-3, Table 1.15).
    public enum SpecificConfig: Sendable, Hashable {
        /// GASpecificConfig, for the AAC object types.
        case generalAudio(GASpecificConfig)
        /// Any other object type's configuration and everything after it, kept as bits.
        case opaque(BitString)
    }

    /// The core object type (after an explicit SBR/PS signal, the one it names).
    public var audioObjectType: AudioObjectType
    /// `samplingFrequencyIndex` of the core.
    public var samplingFrequencyIndex: SamplingFrequencyIndex
    /// `samplingFrequency` when the index is the escape (24 bits).
    public var explicitSamplingFrequency: Int?
    /// `channelConfiguration` (4 bits): 0 means the PCE of the GASpecificConfig says.
    public var channelConfiguration: UInt8
    /// Explicit SBR/PS signalling, when the config starts with object type 5 or 29.
    public var explicitExtension: ExplicitExtension?
    /// `extensionChannelConfiguration`, when explicit signalling names ER BSAC (22) as the core.
    public var extensionChannelConfiguration: UInt8?
    /// The object-type specific configuration: the `switch (audioObjectType)` of
    /// AudioSpecificConfig (ISO/IEC 14496-3, Table 1.15).
    public var specificConfig: SpecificConfig
    /// `epConfig` (2 bits) of the error-resilient object types.
    public var errorProtectionConfig: UInt8?
    /// The backward-compatible SBR/PS extension, when present.
    public var syncExtension: SyncExtension?
    /// Bits after the last field parsed: padding to a byte boundary, or fields not interpreted
    /// (an ErrorProtectionSpecificConfig). Kept so that writing gives the same bytes.
    public var trailingBits: BitString

    /// An AAC configuration: AAC-LC by default, with a default GASpecificConfig and no extension.
    ///
    /// - Throws: when the rate has no index and does not fit 24 bits, or the channel count has
    ///   no channel configuration (use a PCE through ``specificConfig``).
    public init(objectType: AudioObjectType = .aacLC, sampleRate: Int, channelCount: Int) throws(AACBitstreamError) {
        let channelConfiguration: UInt8
        switch channelCount {
        case 1...6: channelConfiguration = UInt8(channelCount)
        case 8: channelConfiguration = 7
        default:
            throw .unrepresentable(structure: "AudioSpecificConfig", field: "channel count", value: Int64(channelCount), allowed: "1...6 or 8")
        }
        guard sampleRate > 0, sampleRate < 1 << 24 else {
            throw .unrepresentable(structure: "AudioSpecificConfig", field: "sampling frequency", value: Int64(sampleRate), allowed: "1...16777215")
        }
        let index = SamplingFrequencyIndex(frequency: sampleRate)
        self.audioObjectType = objectType
        self.samplingFrequencyIndex = index ?? .escape
        self.explicitSamplingFrequency = index == nil ? sampleRate : nil
        self.channelConfiguration = channelConfiguration
        self.specificConfig = .generalAudio(GASpecificConfig())
        self.trailingBits = BitString()
    }

    /// Parses `bytes` as one AudioSpecificConfig whose first byte is at absolute `baseOffset`.
    public init(bytes: [UInt8], baseOffset: Int64 = 0) throws(AACBitstreamError) {
        var reader = BitReader(bytes, baseOffset: baseOffset)
        try self.init(from: &reader)
    }

    /// Parses an AudioSpecificConfig that fills the rest of `reader`'s window.
    public init(from reader: inout BitReader) throws(AACBitstreamError) {
        let structure = "AudioSpecificConfig"
        let start = reader.byteOffset
        func read<T: FixedWidthInteger>(_ count: Int) throws(AACBitstreamError) -> T {
            try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try reader.read(count) }
        }
        func objectType() throws(AACBitstreamError) -> AudioObjectType {
            let first: UInt8 = try read(5)
            return first == 31 ? AudioObjectType(rawValue: 32 + (try read(6) as UInt8)) : AudioObjectType(rawValue: first)
        }
        func frequency() throws(AACBitstreamError) -> (SamplingFrequencyIndex, Int?) {
            let index = SamplingFrequencyIndex(rawValue: try read(4))
            if index == .escape { return (index, Int(try read(24) as UInt32)) }
            guard index.frequency != nil else {
                throw .invalidField(structure: structure, field: "samplingFrequencyIndex", value: Int64(index.rawValue),
                                    offset: reader.byteOffset, allowed: "0...12 or 15")
            }
            return (index, nil)
        }

        var type = try objectType()
        guard type.rawValue != 0 else {
            throw .invalidField(structure: structure, field: "audioObjectType", value: 0, offset: start, allowed: "1...95")
        }
        (samplingFrequencyIndex, explicitSamplingFrequency) = try frequency()
        channelConfiguration = try read(4)
        explicitExtension = nil
        extensionChannelConfiguration = nil
        if type == .sbr || type == .ps {
            let (index, explicit) = try frequency()
            explicitExtension = ExplicitExtension(signalledObjectType: type, samplingFrequencyIndex: index, explicitSamplingFrequency: explicit)
            type = try objectType()
            if type == .erBSAC { extensionChannelConfiguration = try read(4) }
        }
        audioObjectType = type
        errorProtectionConfig = nil
        syncExtension = nil
        trailingBits = BitString()

        guard type.usesGASpecificConfig else {
            // CELP, HVXC, SLS, USAC, …: kept whole as bits.
            specificConfig = .opaque(reader.readRemainingBits())
            return
        }
        specificConfig = .generalAudio(try GASpecificConfig(from: &reader, objectType: type, channelConfiguration: channelConfiguration))
        if type.hasErrorProtectionConfig {
            let epConfig: UInt8 = try read(2)
            errorProtectionConfig = epConfig
            if epConfig >= 2 {
                // ErrorProtectionSpecificConfig (14496-3, 1.8.4.1): not interpreted, kept as bits.
                trailingBits = reader.readRemainingBits()
                return
            }
        }
        if explicitExtension == nil, reader.bitsRemaining >= 16, reader.peekBits(11) == 0x2B7 {
            try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try reader.skipBits(11) }
            var sync = SyncExtension(objectType: try objectType())
            if sync.objectType == .sbr || sync.objectType == .erBSAC {
                let present: UInt8 = try read(1)
                sync.sbrPresent = present == 1
                if present == 1 {
                    (sync.samplingFrequencyIndex, sync.explicitSamplingFrequency) = try frequency()
                }
                if sync.objectType == .sbr, present == 1, reader.bitsRemaining >= 12, reader.peekBits(11) == 0x548 {
                    try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try reader.skipBits(11) }
                    sync.psPresent = (try read(1) as UInt8) == 1
                }
                if sync.objectType == .erBSAC { sync.channelConfiguration = try read(4) }
            }
            syncExtension = sync
        }
        trailingBits = reader.readRemainingBits()
    }

    /// The configuration's bytes: for a parsed value, exactly the bytes it was parsed from.
    public func serialized() throws(AACBitstreamError) -> [UInt8] {
        var writer = BitWriter()
        func objectType(_ type: AudioObjectType) {
            if type.rawValue > 31 {
                writer.write(31, bits: 5)
                writer.write(type.rawValue - 32, bits: 6)
            } else {
                writer.write(type.rawValue, bits: 5)
            }
        }
        func frequency(_ index: SamplingFrequencyIndex, _ explicit: Int?) {
            writer.write(index.rawValue, bits: 4)
            if index == .escape { writer.write(explicit ?? 0, bits: 24) }
        }
        for rate in [explicitSamplingFrequency, explicitExtension?.explicitSamplingFrequency, syncExtension?.explicitSamplingFrequency] {
            if let rate, !(0..<(1 << 24)).contains(rate) {
                throw .unrepresentable(structure: "AudioSpecificConfig", field: "samplingFrequency", value: Int64(rate), allowed: "0...16777215")
            }
        }
        for type in [audioObjectType, explicitExtension?.signalledObjectType, syncExtension?.objectType].compactMap({ $0 }) where type == .escape {
            throw .unrepresentable(structure: "AudioSpecificConfig", field: "audioObjectType", value: 31, allowed: "1...30 or 32...95 (31 is the escape)")
        }
        guard audioObjectType.rawValue <= 95 else {
            throw .unrepresentable(structure: "AudioSpecificConfig", field: "audioObjectType", value: Int64(audioObjectType.rawValue), allowed: "1...95")
        }
        if let explicit = explicitExtension {
            objectType(explicit.signalledObjectType)
        } else {
            objectType(audioObjectType)
        }
        frequency(samplingFrequencyIndex, explicitSamplingFrequency)
        writer.write(channelConfiguration & 0xF, bits: 4)
        if let explicit = explicitExtension {
            frequency(explicit.samplingFrequencyIndex, explicit.explicitSamplingFrequency)
            objectType(audioObjectType)
            if audioObjectType == .erBSAC { writer.write((extensionChannelConfiguration ?? 0) & 0xF, bits: 4) }
        }
        switch specificConfig {
        case .opaque(let bits):
            writer.write(bits)
        case .generalAudio(let config):
            try config.write(to: &writer, objectType: audioObjectType)
            if let epConfig = errorProtectionConfig { writer.write(epConfig & 0x3, bits: 2) }
            if let sync = syncExtension {
                writer.write(0x2B7, bits: 11)
                objectType(sync.objectType)
                if let present = sync.sbrPresent {
                    writer.writeFlag(present)
                    if present, let index = sync.samplingFrequencyIndex { frequency(index, sync.explicitSamplingFrequency) }
                    if let ps = sync.psPresent {
                        writer.write(0x548, bits: 11)
                        writer.writeFlag(ps)
                    }
                    if sync.objectType == .erBSAC { writer.write((sync.channelConfiguration ?? 0) & 0xF, bits: 4) }
                }
            }
        }
        writer.write(trailingBits)
        writer.alignToByte()
        return writer.bytes
    }
}

extension AudioSpecificConfig {
    /// The core sampling frequency in Hz.
    public var samplingFrequency: Int {
        explicitSamplingFrequency ?? samplingFrequencyIndex.frequency ?? 0
    }

    /// Whether SBR is signalled, explicitly or by the backward-compatible extension. (Implicit
    /// SBR, found only by decoding, is not visible here.)
    public var sbrPresent: Bool {
        explicitExtension != nil || syncExtension?.sbrPresent == true
    }

    /// Whether parametric stereo is signalled.
    public var psPresent: Bool {
        explicitExtension?.signalledObjectType == .ps || syncExtension?.psPresent == true
    }

    /// The rate the decoder outputs: the SBR rate when SBR is signalled, else the core rate.
    public var outputSampleRate: Int {
        if let explicit = explicitExtension {
            return explicit.explicitSamplingFrequency ?? explicit.samplingFrequencyIndex.frequency ?? samplingFrequency
        }
        if let sync = syncExtension, sync.sbrPresent == true, let index = sync.samplingFrequencyIndex {
            return sync.explicitSamplingFrequency ?? index.frequency ?? samplingFrequency
        }
        return samplingFrequency
    }

    /// The channel count of channel configurations 1–14 (14496-3, Table 1.19, with the
    /// configurations 11–14 of its amendments), or of the PCE for configuration 0; `nil` for
    /// reserved values. Parametric stereo turns one channel into two.
    public var channelCount: Int? {
        let counts: [Int?] = [nil, 1, 2, 3, 4, 5, 6, 8, nil, nil, nil, 7, 8, 24, 8, nil]
        var count: Int?
        if channelConfiguration == 0 {
            if case .generalAudio(let config) = specificConfig { count = config.programConfigElement?.channelCount }
        } else {
            count = counts[Int(channelConfiguration & 0xF)]
        }
        if psPresent, count == 1 { return 2 }
        return count
    }

    /// PCM frames per packet at the output rate: 1024 (960 with `frameLengthFlag`) for AAC,
    /// 512 (480) for the low-delay types, doubled by SBR.
    public var framesPerPacket: Int {
        guard case .generalAudio(let config) = specificConfig else { return 0 }
        let lowDelay = audioObjectType == .erAACLD
        var frames = lowDelay ? (config.frameLengthFlag ? 480 : 512) : (config.frameLengthFlag ? 960 : 1024)
        if sbrPresent && outputSampleRate != samplingFrequency { frames *= 2 }
        return frames
    }

    /// The profile the stream is, as RFC 6381 (3.3) names it in `mp4a.40.N` and the codec
    /// registry files decoders: PS (HE-AAC v2, 29) or SBR (HE-AAC, 5) when signalled
    /// (explicitly, or by a sync extension), else the config's audio object type.
    public var profile: AudioObjectType {
        psPresent ? .ps : sbrPresent ? .sbr : audioObjectType
    }

    /// The profile name `probe` prints: HE-AACv2, HE-AAC, or the core object type's name.
    public var profileName: String {
        psPresent ? "HE-AACv2" : sbrPresent ? "HE-AAC" : audioObjectType.description
    }

    /// The format description of a track or stream this config configures.
    public func formatDescription() throws(AACBitstreamError) -> FormatDescription {
        .audio(EncodedAudioFormat(codec: .aac, sampleRate: outputSampleRate, channelCount: channelCount ?? 0,
                                  framesPerPacket: framesPerPacket, decoderConfiguration: try serialized()))
    }
}
