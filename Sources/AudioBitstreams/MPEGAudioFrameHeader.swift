/// The 32-bit header of an MPEG-1, MPEG-2 or MPEG-2.5 audio frame of layer I, II or III
/// (ISO/IEC 11172-3 2.4.1.3 and 2.4.2.3; ISO/IEC 13818-3 2.4.2.3 for the lower sampling
/// frequencies; MPEG-2.5 is the widely implemented extension to 8–12 kHz): an 11-bit sync word,
/// then the version, layer, bitrate, sampling frequency, padding and channel mode.
public struct MPEGAudioFrameHeader: Sendable, Hashable {
    /// The MPEG version.
    public enum Version: UInt8, Sendable, Hashable {
        /// MPEG-2.5 (8, 11.025, 12 kHz).
        case mpeg25 = 0
        /// MPEG-2 (16, 22.05, 24 kHz; ISO/IEC 13818-3).
        case mpeg2 = 2
        /// MPEG-1 (32, 44.1, 48 kHz; ISO/IEC 11172-3).
        case mpeg1 = 3
    }

    /// The version.
    public var version: Version
    /// The layer: 1, 2 or 3.
    public var layer: Int
    /// Whether a 16-bit CRC follows the header (`protection_bit` 0).
    public var hasCRC: Bool
    /// `bitrate_index`, 1–14 (0, free format, and 15 are not read).
    public var bitrateIndex: Int
    /// `sampling_frequency`, 0–2.
    public var sampleRateIndex: Int
    /// Whether the frame has one byte (a slot of four in layer I) more.
    public var isPadded: Bool
    /// `private_bit`.
    public var privateBit: Bool
    /// `mode`: 0 stereo, 1 joint stereo, 2 dual channel, 3 single channel.
    public var channelMode: Int
    /// `mode_extension`.
    public var modeExtension: Int
    /// `copyright`.
    public var copyright: Bool
    /// `original/home`.
    public var original: Bool
    /// `emphasis`.
    public var emphasis: Int

    /// The header in the four bytes at `index` of `bytes`; `nil` when they are not one (no sync
    /// word, a reserved version or layer, a free-format or reserved bitrate, a reserved rate).
    public init?(_ bytes: some RandomAccessCollection<UInt8>, at index: Int) {
        guard index >= 0, index + 4 <= bytes.count else { return nil }
        let start = bytes.index(bytes.startIndex, offsetBy: index)
        let b = (bytes[start], bytes[bytes.index(start, offsetBy: 1)], bytes[bytes.index(start, offsetBy: 2)],
                 bytes[bytes.index(start, offsetBy: 3)])
        guard b.0 == 0xFF, b.1 & 0xE0 == 0xE0, let version = Version(rawValue: (b.1 >> 3) & 0x03) else { return nil }
        let layerBits = Int((b.1 >> 1) & 0x03)
        let bitrateIndex = Int(b.2 >> 4)
        let rateIndex = Int((b.2 >> 2) & 0x03)
        guard layerBits != 0, (1...14).contains(bitrateIndex), rateIndex < 3 else { return nil }
        self.version = version
        layer = 4 - layerBits
        hasCRC = b.1 & 0x01 == 0
        self.bitrateIndex = bitrateIndex
        sampleRateIndex = rateIndex
        isPadded = (b.2 >> 1) & 0x01 != 0
        privateBit = b.2 & 0x01 != 0
        channelMode = Int(b.3 >> 6)
        modeExtension = Int((b.3 >> 4) & 0x03)
        copyright = (b.3 >> 3) & 0x01 != 0
        original = (b.3 >> 2) & 0x01 != 0
        emphasis = Int(b.3 & 0x03)
    }

    /// The four header bytes.
    public var bytes: [UInt8] {
        [0xFF, 0xE0 | version.rawValue << 3 | UInt8(4 - layer) << 1 | (hasCRC ? 0 : 1),
         UInt8(bitrateIndex) << 4 | UInt8(sampleRateIndex) << 2 | (isPadded ? 2 : 0) | (privateBit ? 1 : 0),
         UInt8(channelMode) << 6 | UInt8(modeExtension) << 4 | (copyright ? 8 : 0) | (original ? 4 : 0) | UInt8(emphasis)]
    }

    /// Channels: 1 in single-channel mode, else 2.
    public var channelCount: Int { channelMode == 3 ? 1 : 2 }

    /// The sampling frequency in hertz.
    public var sampleRate: Int {
        [44100, 48000, 32000][sampleRateIndex] / (version == .mpeg1 ? 1 : version == .mpeg2 ? 2 : 4)
    }

    /// The bitrate in bits per second (ISO/IEC 11172-3 table 2.4.2.3; 13818-3 table 2.4.2.3).
    public var bitrate: Int { Self.kilobits(version: version, layer: layer)[bitrateIndex - 1] * 1000 }

    /// The kilobit rates of `bitrate_index` 1–14 for a version and layer.
    static func kilobits(version: Version, layer: Int) -> [Int] {
        switch (version == .mpeg1, layer) {
        case (true, 1): [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
        case (true, 2): [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
        case (true, _): [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        case (false, 1): [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
        case (false, _): [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        }
    }

    /// Samples a frame codes per channel: 384 in layer I, 1152 in layer II and MPEG-1 layer
    /// III, 576 in MPEG-2/2.5 layer III.
    public var samplesPerFrame: Int { layer == 1 ? 384 : layer == 2 || version == .mpeg1 ? 1152 : 576 }

    /// The frame's length in bytes, header included.
    public var frameLength: Int { frameLength(bitrateIndex: bitrateIndex, padded: isPadded) }

    /// The length of a frame like this one at another bitrate index and padding.
    public func frameLength(bitrateIndex: Int, padded: Bool) -> Int {
        let rate = Self.kilobits(version: version, layer: layer)[bitrateIndex - 1] * 1000
        if layer == 1 { return (12 * rate / sampleRate + (padded ? 1 : 0)) * 4 }
        let perFrame = layer == 3 && version != .mpeg1 ? 72 : 144
        return perFrame * rate / sampleRate + (padded ? 1 : 0)
    }

    /// Bytes of layer III side information after the header (and its CRC): 32 or 17 in MPEG-1
    /// (two channels or one), 17 or 9 in MPEG-2/2.5 (ISO/IEC 11172-3 2.4.1.7).
    public var sideInformationLength: Int {
        version == .mpeg1 ? (channelCount == 2 ? 32 : 17) : (channelCount == 2 ? 17 : 9)
    }

    /// Layer III's `main_data_begin` of the frame at `index` of `bytes`: how many bytes before
    /// this frame's header its main data starts, in the bit reservoir (ISO/IEC 11172-3
    /// 2.4.1.7: 9 bits in MPEG-1, 8 in MPEG-2/2.5). `nil` when the side information is cut off or
    /// the layer is not III.
    public func mainDataBegin(_ bytes: some RandomAccessCollection<UInt8>, frameAt index: Int) -> Int? {
        let side = index + 4 + (hasCRC ? 2 : 0)
        guard layer == 3, side + 2 <= bytes.count else { return nil }
        let first = Int(bytes[bytes.index(bytes.startIndex, offsetBy: side)])
        let second = Int(bytes[bytes.index(bytes.startIndex, offsetBy: side + 1)])
        return version == .mpeg1 ? first << 1 | second >> 7 : first
    }
}
