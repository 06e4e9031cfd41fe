/// The body of an RTMP audio message (RTMP 1.0 7.1.4) carrying AAC: an FLV `AUDIODATA` with an
/// `AACAUDIODATA` inside (FLV spec v10.1, E.4.2.1 and E.4.2.2).
///
/// The first byte is `0xAF`: SoundFormat 10 (AAC), SoundRate 3 (44 kHz), SoundSize 1 (16-bit),
/// SoundType 1 (stereo). For AAC these flags are fixed whatever the stream is (E.4.2.1: "If the
/// SoundFormat indicates AAC, the SoundType should be set to 1 (stereo) and the SoundRate should
/// be set to 3 (44 kHz)"); the decoder takes rate and channels from the AudioSpecificConfig.
/// The second byte is the AACPacketType: 0 for the sequence header (the AudioSpecificConfig of
/// ISO/IEC 14496-3 1.6.2.1), 1 for a raw AAC frame.
public struct FLVAudioTag: Sendable, Hashable {
    /// `AACPacketType` (E.4.2.2).
    public enum PacketType: UInt8, Sendable, Hashable {
        /// The AudioSpecificConfig: sent once, before the first frame.
        case sequenceHeader = 0
        /// One raw AAC frame (no ADTS header).
        case raw = 1
    }

    /// `SoundFormat` 10 (AAC) `SoundRate` 3, `SoundSize` 1, `SoundType` 1.
    public static let aacFlags: UInt8 = 0xAF

    /// What the data is.
    public var packetType: PacketType
    /// The AudioSpecificConfig or the raw frame.
    public var data: [UInt8]

    /// A tag of `packetType` with `data`.
    public init(packetType: PacketType, data: [UInt8]) {
        self.packetType = packetType
        self.data = data
    }

    /// The AAC sequence header for the serialized AudioSpecificConfig `audioSpecificConfig`.
    public static func sequenceHeader(_ audioSpecificConfig: [UInt8]) -> FLVAudioTag {
        FLVAudioTag(packetType: .sequenceHeader, data: audioSpecificConfig)
    }

    /// The tag's bytes: flags, packet type, data.
    public var bytes: [UInt8] { Self.bytes(packetType, data[...]) }

    /// The bytes of a tag for the raw AAC frame `frame`, without building a tag.
    public static func rawFrameBytes(_ frame: ArraySlice<UInt8>) -> [UInt8] { bytes(.raw, frame) }

    /// The tag that `bytes` hold, or `nil` when they are not an AAC tag of a known packet type.
    public init?(bytes: [UInt8]) {
        guard bytes.count >= 2, bytes[0] >> 4 == 10, let type = PacketType(rawValue: bytes[1]) else { return nil }
        self.init(packetType: type, data: Array(bytes.dropFirst(2)))
    }

    private static func bytes(_ type: PacketType, _ data: ArraySlice<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count + 2)
        bytes += [aacFlags, type.rawValue]
        bytes += data
        return bytes
    }
}
