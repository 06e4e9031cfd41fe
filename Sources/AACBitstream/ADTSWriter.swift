public import MediaCore

/// Writes raw AAC packets as an ADTS stream: each packet gets a header made from a template,
/// with its own `aac_frame_length`.
///
/// Frames are written without CRC (`protection_absent` = 1), as FFmpeg, libfaac and voaacenc
/// do: computing `crc_check` needs a parse of the raw data block's channel elements.
public struct ADTSWriter<Sink: ByteSink> {
    /// The header every frame starts from; only the frame length changes.
    public let template: ADTSHeader
    /// The sink written to.
    public private(set) var sink: Sink
    /// Frames written so far.
    public private(set) var frameCount = 0
    /// Bytes written so far.
    public private(set) var byteCount: Int64 = 0
    private var scratch: [UInt8] = []
    /// The template's 7 bytes; each frame patches only `aac_frame_length` into them.
    private let templateBytes: [UInt8]

    /// A writer whose frames use `template`'s fixed header fields.
    ///
    /// - Throws: ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)`` if the
    ///   template asks for a CRC or for several raw data blocks per frame.
    public init(sink: Sink, template: ADTSHeader) throws(AACBitstreamError) {
        guard template.protectionAbsent else {
            throw .unrepresentable(structure: "ADTS header", field: "protection_absent", value: 0, allowed: "1 (CRC writing is not supported)")
        }
        guard template.rawDataBlockCountMinusOne == 0 else {
            throw .unrepresentable(structure: "ADTS header", field: "number_of_raw_data_blocks_in_frame",
                                   value: Int64(template.rawDataBlockCountMinusOne), allowed: "0")
        }
        self.sink = sink
        self.template = template
        var sized = template
        sized.frameLength = 7
        templateBytes = try sized.serialized()
        scratch.reserveCapacity(ADTSHeader.maximumFrameLength)
    }

    /// A writer for packets of the stream `config` describes (MPEG-4 ID, as FFmpeg writes).
    ///
    /// - Throws: ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)`` when ADTS
    ///   cannot describe the configuration: an object type above 4 (ADTS's 2-bit profile), a rate
    ///   without a sampling frequency index, or channel configuration 0 (a PCE).
    public init(sink: Sink, audioSpecificConfig config: AudioSpecificConfig) throws(AACBitstreamError) {
        try self.init(sink: sink, template: try ADTSHeader(audioSpecificConfig: config, frameLength: 7))
    }

    /// Writes one raw data block as a frame.
    ///
    /// - Throws: ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)`` for a
    ///   packet that makes the frame longer than 8191 bytes; ``AACBitstreamError/stream(_:)``.
    public mutating func write(rawDataBlock: some Collection<UInt8>) throws(AACBitstreamError) {
        let length = 7 + rawDataBlock.count
        guard length <= ADTSHeader.maximumFrameLength else {
            throw .unrepresentable(structure: "ADTS header", field: "aac_frame_length", value: Int64(length),
                                   allowed: "7...\(ADTSHeader.maximumFrameLength)")
        }
        // aac_frame_length is bits 30–42 of the header: the low 2 bits of byte 3, byte 4, and
        // the high 3 bits of byte 5.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: templateBytes)
        scratch[3] = (templateBytes[3] & 0xFC) | UInt8(length >> 11)
        scratch[4] = UInt8((length >> 3) & 0xFF)
        scratch[5] = UInt8((length & 0x7) << 5) | (templateBytes[5] & 0x1F)
        scratch.append(contentsOf: rawDataBlock)
        do { try sink.write(scratch) } catch { throw .stream(error) }
        frameCount += 1
        byteCount += Int64(scratch.count)
    }

    /// Writes the raw data blocks of a run, each as a frame, with one write to the sink: the
    /// run's bytes are copied once, between the headers.
    ///
    /// - Throws: as ``write(rawDataBlock:)``, before anything is written when any packet is too
    ///   long for a frame.
    public mutating func write(rawDataBlocksOf run: MediaSampleRun) throws(AACBitstreamError) {
        for entry in run.entries where 7 + entry.size > ADTSHeader.maximumFrameLength {
            throw .unrepresentable(structure: "ADTS header", field: "aac_frame_length", value: Int64(7 + entry.size),
                                   allowed: "7...\(ADTSHeader.maximumFrameLength)")
        }
        let total = run.data.count + 7 * run.count
        if scratch.count < total { scratch = [UInt8](repeating: 0, count: total) }
        let (b0, b1, b2, b3, b6) = (templateBytes[0], templateBytes[1], templateBytes[2], templateBytes[3] & 0xFC, templateBytes[6])
        let low5 = templateBytes[5] & 0x1F
        scratch.withUnsafeMutableBufferPointer { out in
            run.data.withUnsafeBufferPointer { input in
                var read = 0
                var written = 0
                for entry in run.entries {
                    let length = 7 + entry.size
                    out[written] = b0
                    out[written + 1] = b1
                    out[written + 2] = b2
                    out[written + 3] = b3 | UInt8(truncatingIfNeeded: length >> 11)
                    out[written + 4] = UInt8(truncatingIfNeeded: length >> 3)
                    out[written + 5] = UInt8(truncatingIfNeeded: (length & 0x7) << 5) | low5
                    out[written + 6] = b6
                    UnsafeMutableRawPointer(out.baseAddress! + written + 7)
                        .copyMemory(from: input.baseAddress! + read, byteCount: entry.size)
                    read += entry.size
                    written += length
                }
            }
        }
        var failure: ByteStreamError?
        scratch.withUnsafeBytes { bytes in
            do throws(ByteStreamError) { try sink.write(UnsafeRawBufferPointer(rebasing: bytes[..<total])) } catch { failure = error }
        }
        if let failure { throw .stream(failure) }
        frameCount += run.count
        byteCount += Int64(total)
    }
}

extension ADTSHeader {
    /// The header of an unprotected frame of `frameLength` bytes for the stream `config` describes.
    public init(audioSpecificConfig config: AudioSpecificConfig, frameLength: Int) throws(AACBitstreamError) {
        let core = config.audioObjectType
        guard (1...4).contains(core.rawValue) else {
            throw .unrepresentable(structure: "ADTS header", field: "profile_ObjectType (object type)",
                                   value: Int64(core.rawValue), allowed: "1...4 (Main, LC, SSR, LTP)")
        }
        guard config.samplingFrequencyIndex != .escape, config.samplingFrequencyIndex.frequency != nil else {
            throw .unrepresentable(structure: "ADTS header", field: "sampling frequency", value: Int64(config.samplingFrequency),
                                   allowed: SamplingFrequencyIndex.frequencies.map(String.init).joined(separator: ", "))
        }
        guard (1...7).contains(config.channelConfiguration) else {
            throw .unrepresentable(structure: "ADTS header", field: "channel_configuration",
                                   value: Int64(config.channelConfiguration), allowed: "1...7")
        }
        self.init(profile: core.rawValue - 1, samplingFrequencyIndex: config.samplingFrequencyIndex,
                  channelConfiguration: config.channelConfiguration, frameLength: frameLength)
    }

    /// The 7-byte ADTS header (ISO/IEC 13818-7, 6.2) of an AAC-LC frame of `rawDataLength`
    /// bytes: MPEG-2 `ID`, no CRC, VBR buffer fullness (`0x7FF`) — byte for byte what
    /// the common iOS recipes for ADTS headers write for valid input.
    ///
    /// Unlike that method, a rate without a sampling frequency index, a channel count ADTS cannot
    /// describe, or a frame over 8191 bytes is an error instead of index 15 or a wrapped length.
    public static func adtsData(channels: Int, sampleRate: Int, rawDataLength: Int) throws(AACBitstreamError) -> [UInt8] {
        guard let index = SamplingFrequencyIndex(frequency: sampleRate) else {
            throw .unrepresentable(structure: "ADTS header", field: "sample rate", value: Int64(sampleRate),
                                   allowed: SamplingFrequencyIndex.frequencies.map(String.init).joined(separator: ", "))
        }
        guard (1...7).contains(channels) else {
            throw .unrepresentable(structure: "ADTS header", field: "channel_configuration", value: Int64(channels), allowed: "1...7")
        }
        guard rawDataLength >= 0, rawDataLength <= maximumFrameLength - 7 else {
            throw .unrepresentable(structure: "ADTS header", field: "aac_frame_length", value: Int64(rawDataLength) + 7,
                                   allowed: "7...\(maximumFrameLength)")
        }
        let header = ADTSHeader(mpegVersion: .mpeg2, profile: 1, samplingFrequencyIndex: index,
                                channelConfiguration: UInt8(channels), frameLength: 7 + rawDataLength)
        return try header.serialized()
    }
}
