/// What a container or a playlist must know of a compressed audio codec to carry it: its ISO BMFF
/// sample entry and the decoder configuration inside it, its RFC 6381 `CODECS` name, its roll
/// (the packets a decoder needs before it decodes right), and whether its packets all decode to
/// the same number of frames.
///
/// A codec's registry entry gives one (`AudioCodecRegistry.register(_:)` in AudioCodec), and the
/// MP4 muxer, the CMAF segmenter and the manifests take the descriptions they are given
/// (`matching(_:)` on the list), so that a codec of another package goes into an MP4
/// or an HLS ladder without a branch in either. A value: each member is a function of the
/// stream's ``EncodedAudioFormat``.
public struct AudioCodecDescription: Sendable {
    /// The codec described.
    public let codec: AudioCodecID
    /// The sample entry's type (ISO/IEC 14496-12 12.2.3: `mp4a`, `Opus`, `fLaC`), as written.
    public let sampleEntryType: FourCharacterCode
    /// The box inside the sample entry that holds the decoder configuration (`esds`, `dOps`,
    /// `dfLa`), which a reader hands the decoder as ``EncodedAudioFormat/decoderConfiguration``;
    /// `nil` when the entry holds none.
    public let configurationBox: FourCharacterCode?
    /// Checks that the format's decoder configuration is one the codec has, before a track is
    /// made; throws the reason it is not.
    public let check: @Sendable (EncodedAudioFormat) throws(AudioSampleEntry.Refusal) -> Void
    /// The sample entry of a track of the format, given what the track ended up holding.
    public let sampleEntry: @Sendable (EncodedAudioFormat, AudioSampleEntry.TrackFigures) -> AudioSampleEntry
    /// The RFC 6381 (3.3) name of the format in an HLS `CODECS` or a DASH `@codecs`.
    public let codecsParameter: @Sendable (EncodedAudioFormat) -> String
    /// The roll distance (ISO/IEC 14496-12 10.1.1.2, `roll` sample group): packets before a
    /// packet that a decoder must decode for it to come out right, as a negative count (AAC:
    /// -1, every packet needs the one before); 0 when every packet decodes alone.
    public let roll: @Sendable (EncodedAudioFormat) -> Int
    /// The frames every packet decodes to, at the format's rate, when the codec's packets all
    /// decode to the same number (AAC: 1024, or 2048 with SBR); `nil` when they vary (Opus, FLAC).
    public let fixedPacketDuration: @Sendable (EncodedAudioFormat) -> Int?
    /// The decoder configuration (as ``EncodedAudioFormat/decoderConfiguration`` holds it, the
    /// form the codec's own decoder takes) that the payload of a ``configurationBox`` holds:
    /// `dOps` is `OpusHead` big-endian, `dfLa` wraps STREAMINFO; `nil` for a payload that is
    /// not one. By default the payload itself.
    public let configurationInBox: @Sendable ([UInt8]) -> [UInt8]?

    /// A description of `codec`, written as `sampleEntryType`, with its checks and names.
    public init(codec: AudioCodecID, sampleEntryType: FourCharacterCode, configurationBox: FourCharacterCode? = nil,
                check: @escaping @Sendable (EncodedAudioFormat) throws(AudioSampleEntry.Refusal) -> Void = { _ throws(AudioSampleEntry.Refusal) in },
                sampleEntry: @escaping @Sendable (EncodedAudioFormat, AudioSampleEntry.TrackFigures) -> AudioSampleEntry,
                codecsParameter: @escaping @Sendable (EncodedAudioFormat) -> String,
                roll: @escaping @Sendable (EncodedAudioFormat) -> Int = { _ in 0 },
                fixedPacketDuration: @escaping @Sendable (EncodedAudioFormat) -> Int? = { _ in nil },
                configurationInBox: @escaping @Sendable ([UInt8]) -> [UInt8]? = { $0 }) {
        self.codec = codec
        self.sampleEntryType = sampleEntryType
        self.configurationBox = configurationBox
        self.check = check
        self.sampleEntry = sampleEntry
        self.codecsParameter = codecsParameter
        self.roll = roll
        self.fixedPacketDuration = fixedPacketDuration
        self.configurationInBox = configurationInBox
    }
}

extension Sequence where Element == AudioCodecDescription {
    /// The first description of `codec` (a registry lists the latest registered first).
    public func matching(_ codec: AudioCodecID) -> AudioCodecDescription? {
        first { $0.codec == codec }
    }

    /// The first description whose sample entries are of `type`.
    public func matching(sampleEntryType type: FourCharacterCode) -> AudioCodecDescription? {
        first { $0.sampleEntryType == type }
    }

    /// The codecs described, for a message (`aac, my-codec`).
    public var describedCodecs: String {
        let names = map(\.codec.name)
        return names.isEmpty ? "no codec" : names.joined(separator: ", ")
    }
}

/// An ISO BMFF audio sample entry (ISO/IEC 14496-12 12.2.3, `AudioSampleEntry`) as a codec
/// describes it: the fields a reader looks at, and the boxes it holds (the decoder
/// configuration: `esds`, `dOps`, `dfLa`). The muxer writes it as the description's
/// ``AudioCodecDescription/sampleEntryType``, with the reserved and fixed fields.
public struct AudioSampleEntry: Sendable, Hashable {
    /// `channelcount`: 1 or 2 for most codecs (14496-12 says 2 unless the codec says otherwise;
    /// 14496-14 writes 1 for mono AAC).
    public var channelCount: Int
    /// `samplesize`: 16 unless the codec says otherwise.
    public var sampleSize: Int
    /// `samplerate`, in frames per second (written as 16.16; 0 above 65,535).
    public var sampleRate: Int
    /// The boxes inside the entry, in order: each a type and its payload (after the 8-byte
    /// header; a full box's version and flags included).
    public var boxes: [Box]

    /// One box inside the entry.
    public struct Box: Sendable, Hashable {
        /// The box type.
        public var type: FourCharacterCode
        /// What follows the size and type.
        public var payload: [UInt8]

        /// A box of `type` holding `payload`.
        public init(type: FourCharacterCode, payload: [UInt8]) {
            self.type = type
            self.payload = payload
        }
    }

    /// An entry with these fields and boxes.
    public init(channelCount: Int, sampleSize: Int = 16, sampleRate: Int, boxes: [Box]) {
        self.channelCount = channelCount
        self.sampleSize = sampleSize
        self.sampleRate = sampleRate
        self.boxes = boxes
    }

    /// What a track holds once written, which some decoder configurations record (`esds`'s
    /// buffer size and bitrates, ISO/IEC 14496-1 7.2.6.6).
    public struct TrackFigures: Sendable, Hashable {
        /// The track's ID (`ES_ID`).
        public var trackID: UInt32
        /// The largest packet, in bytes.
        public var largestPacket: Int
        /// The average bitrate, in bits per second; 0 when not known (a fragmented header).
        public var averageBitrate: Int
        /// The highest bitrate over any second, in bits per second; 0 when not known.
        public var peakBitrate: Int

        /// Figures of a track.
        public init(trackID: UInt32, largestPacket: Int, averageBitrate: Int, peakBitrate: Int) {
            self.trackID = trackID
            self.largestPacket = largestPacket
            self.averageBitrate = averageBitrate
            self.peakBitrate = peakBitrate
        }
    }

    /// Why a format cannot be described: its configuration is not the codec's.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, in words.
        public var reason: String
        /// The reason.
        public var description: String { reason }

        /// A refusal for `reason`.
        public init(_ reason: String) { self.reason = reason }
    }
}
