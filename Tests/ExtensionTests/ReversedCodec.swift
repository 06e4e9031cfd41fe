import KeyFrameKit

// A codec that KeyFrameKit does not have, written against the public API alone: a packet is
// 1024 frames of PCM with its bytes in reverse order. Its decoder configuration is the PCM
// sample type's name, so that the decoder restores the layout exactly.

extension AudioCodecID {
    /// Byte-reversed PCM.
    static let reversedPCM = AudioCodecID("reversed-pcm")
}

/// PCM in, byte-reversed packets of ``framesPerPacket`` frames out (the last one shorter).
final class ReversingEncoder: AudioEncoder {
    static let framesPerPacket = 1024
    let bitrate: Int
    private(set) var inputFormat: PCMFormat?
    private(set) var inputFrameCount: Int64 = 0
    private(set) var packetCount: Int64 = 0
    private(set) var padding: Int?
    var priming: Int { 0 }
    private var held: [UInt8] = []
    private var announcement = GaplessAnnouncement()

    init(settings: AudioCodecRegistry.EncoderSettings) {
        bitrate = settings.bitrate
        inputFormat = settings.format
    }

    func transform(_ buffer: PCMBuffer) throws(CodecError) -> [MediaSample] {
        if let inputFormat, inputFormat != buffer.format {
            throw .unsupportedInput("the PCM layout changed mid-stream")
        }
        inputFormat = buffer.format
        inputFrameCount += Int64(buffer.frameCount)
        held.append(contentsOf: buffer.bytes)
        return packets(flushing: false)
    }

    func finish() throws(CodecError) -> [MediaSample] {
        defer { padding = 0 }
        return packets(flushing: true)
    }

    func takeEvents() -> [StreamEvent] { gaplessEvents(&announcement) }

    private func packets(flushing: Bool) -> [MediaSample] {
        guard let format = inputFormat else { return [] }
        let packetBytes = Self.framesPerPacket * format.bytesPerFrame
        var out: [MediaSample] = []
        var start = 0
        while held.count - start >= packetBytes || (flushing && held.count > start) {
            let bytes = Array(held[start..<min(start + packetBytes, held.count)])
            start += bytes.count
            let frames = bytes.count / format.bytesPerFrame
            let scale = Int32(format.sampleRate)
            out.append(MediaSample(
                data: bytes.reversed(),
                presentationTime: MediaTime(value: packetCount * Int64(Self.framesPerPacket), timescale: scale),
                duration: MediaTime(value: Int64(frames), timescale: scale),
                format: .audio(EncodedAudioFormat(codec: .reversedPCM, sampleRate: format.sampleRate, channelCount: format.channelCount,
                                                  framesPerPacket: Self.framesPerPacket,
                                                  decoderConfiguration: Array(format.sampleFormat.rawValue.utf8)))))
            packetCount += 1
        }
        held.removeFirst(start)
        return out
    }
}

/// Byte-reversed packets in, the PCM they were out.
final class ReversingDecoder: AudioDecoder {
    let outputSampleFormat: PCMSampleFormat
    let trim: GaplessTrim
    private(set) var outputFormat: PCMFormat?
    var skipsUndecodablePackets = false
    private var kept: Int64 = 0

    init(settings: AudioCodecRegistry.DecoderSettings) {
        outputSampleFormat = settings.outputSampleFormat
        trim = settings.trim
    }

    func transform(_ packet: MediaSample) throws(CodecError) -> [PCMBuffer] {
        guard case .audio(let stream) = packet.format, stream.codec == .reversedPCM,
              let sampleFormat = PCMSampleFormat(rawValue: String(decoding: stream.decoderConfiguration, as: UTF8.self)) else {
            throw .unsupportedInput("not a reversed-PCM packet")
        }
        let format = PCMFormat(sampleRate: stream.sampleRate, channelCount: stream.channelCount, sampleFormat: sampleFormat)
        outputFormat = format
        kept += Int64(packet.data.count / format.bytesPerFrame)
        return [PCMBuffer(format: format, bytes: packet.data.reversed())]
    }

    func finish() throws(CodecError) -> [PCMBuffer] { [] }

    func takeDamage() -> [DamageEvent] { [] }
}

extension AudioCodecDescription {
    /// Reversed PCM in an MP4: a `rvpc` sample entry whose `rvcC` box holds the sample type's
    /// name; `rvpc` in a `CODECS` list; every packet decodes alone, 1024 frames (the last fewer).
    static let reversedPCM = AudioCodecDescription(
        codec: .reversedPCM, sampleEntryType: "rvpc", configurationBox: "rvcC",
        check: { format throws(AudioSampleEntry.Refusal) in
            guard PCMSampleFormat(rawValue: String(decoding: format.decoderConfiguration, as: UTF8.self)) != nil else {
                throw AudioSampleEntry.Refusal("its configuration names no PCM sample type")
            }
        },
        sampleEntry: { format, _ in
            AudioSampleEntry(channelCount: format.channelCount, sampleRate: format.sampleRate,
                             boxes: [AudioSampleEntry.Box(type: "rvcC", payload: format.decoderConfiguration)])
        },
        codecsParameter: { _ in "rvpc" },
        fixedPacketDuration: { _ in ReversingEncoder.framesPerPacket })
}

extension AudioCodecRegistry {
    /// KeyFrameKit's codecs and the reversing codec.
    static let withReversedPCM: AudioCodecRegistry = {
        var codecs = AudioCodecRegistry.standard
        codecs.register(.reversedPCM)
        codecs.register(EncoderEntry(codec: .reversedPCM, name: "reverser") { settings in ReversingEncoder(settings: settings) })
        codecs.register(DecoderEntry(codec: .reversedPCM, name: "reverser") { settings in ReversingDecoder(settings: settings) })
        return codecs
    }()
}
