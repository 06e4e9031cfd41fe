public import MediaCore

/// The AAC packets of an ADTS stream (ISO/IEC 14496-3, 1.A.2.2) as a ``/MediaCore/PacketSource``:
/// each frame's raw data block, timed by counting (packet *k* starts at *k* × 1024 samples), with
/// the stream's AudioSpecificConfig in its format.
///
/// ADTS cannot say how much of the start is encoder priming, so the packets carry every sample.
/// A stream whose configuration changes mid-way, or a frame with several raw data blocks, is an
/// error when ``Framing/rawDataBlocks`` is asked for (an MP4 track holds one configuration and one
/// block per sample); ``Framing/frames`` hands over whole frames, headers included, for a
/// decoder that reads ADTS itself.
public struct ADTSPacketReader<Source: ByteSource>: PacketSource {
    /// What each packet holds.
    public enum Framing: Sendable, Hashable {
        /// The raw data block after the header: what an MP4 sample holds.
        case rawDataBlocks
        /// The whole ADTS frame, header included: what a decoder without an AudioSpecificConfig
        /// takes.
        case frames
    }

    private var reader: ADTSReader<Source>
    private let framing: Framing
    private let totalBytes: Int64?
    private var firstHeader: ADTSHeader?
    private var format: FormatDescription?
    private var timescale: Int32 = 1
    private var samplesDelivered: Int64 = 0
    private var damage: [DamageEvent] = []

    /// The stream's AudioSpecificConfig, from its first frame's header.
    public private(set) var audioSpecificConfig: AudioSpecificConfig?

    /// A reader of `source`; `totalBytes` (the file size) makes ``progress`` an estimate of the
    /// whole. `chunkSize` is how much is read at a time (see ``ADTSReader/init(source:chunkSize:)``).
    public init(source: Source, framing: Framing = .rawDataBlocks, totalBytes: Int64? = nil, chunkSize: Int = 64 * 1024) {
        reader = ADTSReader(source: source, chunkSize: chunkSize)
        self.framing = framing
        self.totalBytes = totalBytes
    }

    /// Counters of the underlying reader (frames, skipped bytes, ID3 bytes).
    public var statistics: ADTSReader<Source>.Statistics { reader.statistics }

    /// The next packet, `nil` at the end of the stream.
    ///
    /// - Throws: ``AACBitstreamError`` for a read error, or, with ``Framing/rawDataBlocks``, for
    ///   a frame with several raw data blocks, a change of configuration, or a program config
    ///   element (channel configuration 0).
    public mutating func next() throws(AACBitstreamError) -> MediaSample? {
        let frame = try reader.nextFrame()
        damage += reader.takeEvents().compactMap(\.damage)
        guard let frame else { return nil }
        let header = frame.header
        if let first = firstHeader {
            if framing == .rawDataBlocks {
                guard header.profile == first.profile, header.samplingFrequencyIndex == first.samplingFrequencyIndex,
                      header.channelConfiguration == first.channelConfiguration else {
                    throw .unrepresentable(structure: "ADTS frame at byte \(frame.offset)", field: "configuration",
                                           value: Int64(header.channelConfiguration),
                                           allowed: "the stream's first configuration (an MP4 track has one)")
                }
            }
        } else {
            firstHeader = header
            try describe(header, offset: frame.offset)
        }
        let blocks = Int64(header.rawDataBlockCount)
        if framing == .rawDataBlocks, blocks != 1 {
            throw .unrepresentable(structure: "ADTS frame at byte \(frame.offset)", field: "number_of_raw_data_blocks_in_frame",
                                   value: blocks - 1, allowed: "0 (one raw data block per MP4 sample)")
        }
        guard let format else { return nil }
        let duration = 1024 * blocks
        defer { samplesDelivered += duration }
        let data = framing == .frames ? frame.bytes : Array(frame.payload)
        return MediaSample(data: data, presentationTime: MediaTime(value: samplesDelivered, timescale: timescale),
                           duration: MediaTime(value: duration, timescale: timescale), format: format)
    }

    /// The next raw data blocks, read as one run of back-to-back packets (with
    /// ``Framing/rawDataBlocks``; one frame per run with ``Framing/frames``): the same packets,
    /// errors and damage as ``next()``, without an allocation per packet.
    public mutating func nextRun(maxBytes: Int) throws(AACBitstreamError) -> MediaSampleRun? {
        guard let first = try next() else { return nil }
        guard framing == .rawDataBlocks, let format else { return MediaSampleRun(sample: first) }
        var data = first.data
        var sizes = [data.count]
        reader.takeRawDataBlocksInStep(into: &data, sizes: &sizes, maxBytes: maxBytes - data.count)
        samplesDelivered += 1024 * Int64(sizes.count - 1)
        return MediaSampleRun(data: data, entries: sizes.map { MediaSampleRun.Entry(size: $0, duration: 1024) },
                              firstDecodeTime: first.decodeTime.value, timescale: timescale, format: format)
    }

    private mutating func describe(_ header: ADTSHeader, offset: Int64) throws(AACBitstreamError) {
        guard let rate = header.sampleRate else {
            throw .unrepresentable(structure: "ADTS frame at byte \(offset)", field: "sampling_frequency_index",
                                   value: Int64(header.samplingFrequencyIndex.rawValue), allowed: "0...12")
        }
        guard (1...7).contains(header.channelConfiguration) else {
            throw .unrepresentable(structure: "ADTS frame at byte \(offset)", field: "channel_configuration",
                                   value: Int64(header.channelConfiguration), allowed: "1...7 (a program config element is not supported)")
        }
        let config = try AudioSpecificConfig(objectType: header.audioObjectType, sampleRate: rate,
                                             channelCount: header.channelConfiguration == 7 ? 8 : Int(header.channelConfiguration))
        audioSpecificConfig = config
        format = try config.formatDescription()
        timescale = Int32(rate)
    }

    /// Seconds delivered, out of an estimate of the whole from the bytes read.
    public var progress: MediaProgress {
        let seconds = Double(samplesDelivered) / Double(max(timescale, 1))
        let total = totalBytes.map { seconds * Double($0) / Double(max(reader.offset, 1)) }
        return MediaProgress(mediaSeconds: seconds, totalSeconds: total)
    }

    /// The skipped bytes, truncated frames and CRC mismatches met since the last call.
    public mutating func takeDamage() -> [DamageEvent] {
        defer { damage.removeAll() }
        return damage
    }
}
