internal import CFFmpeg
public import MediaCore
internal import PCMAudio

/// A decoder of any codec libavcodec decodes — AAC (``AACDecoder``), MP3, Opus, FLAC, ALAC —
/// as the jobs see one (``AudioDecoder``): packets in, interleaved PCM out (s16, s32 or f32,
/// converted as `ffmpeg` converts), trimmed by the gapless numbers it was made with.
///
/// Given a ``/MediaCore/GaplessTrim``, it drops the encoder's priming at the start and stops
/// after the valid length, so decoding a file with a sample-exact edit list gives exactly the
/// samples that were encoded. Integer samples (FLAC, ALAC) pass through float, which holds 24
/// bits exactly, so a lossless stream decodes to its very samples.
public class LibavcodecAudioDecoder {
    /// The PCM sample type the decoder writes.
    public let outputSampleFormat: PCMSampleFormat
    /// What to drop and keep.
    public let trim: GaplessTrim
    /// The PCM layout of the output, known after the first decoded frame.
    public private(set) var outputFormat: PCMFormat?
    /// Output frames delivered so far (after trimming).
    public private(set) var deliveredFrameCount: Int64 = 0

    private let context: CodecContext
    /// The codec's name in messages (`AAC`, `MP3`, `FLAC`).
    let codecName: String
    private let frame: Frame
    private let packet: Packet
    private var decodedFrameCount: Int64 = 0
    private var flushed = false
    private var scratch: [UInt8] = []

    /// Whether a packet libavcodec cannot decode is stepped over, reported by ``takeDamage()``,
    /// instead of ending the stream with an error: a damaged file salvaged. A stream whose first
    /// ``undecodableLimit`` packets all fail is not a stream this decoder reads, and throws.
    public var skipsUndecodablePackets = false
    /// Packets that must fail, none decoding, before a stream is refused.
    public static let undecodableLimit = 32
    /// Packets given to ``decode(packet:)``, and of them decoded without an error.
    private var packetCount = 0
    private var decodedPacketCount = 0
    /// Packets stepped over, and the damage not yet taken.
    private var skippedPacketCount = 0
    private var damage: [DamageEvent] = []
    /// How many stepped-over packets are told one by one; the rest are counted at the end.
    private static let toldPacketLimit = 10

    /// The packets stepped over since the last call (``skipsUndecodablePackets``).
    public func takeDamage() -> [DamageEvent] {
        defer { damage.removeAll() }
        return damage
    }


    /// A decoder of `format`'s codec, configured by its ``/MediaCore/EncodedAudioFormat/decoderConfiguration``
    /// (libavcodec's extradata: Opus's `OpusHead`, FLAC's STREAMINFO, ALAC's magic cookie).
    ///
    /// - Parameters:
    ///   - format: the stream as its container describes it.
    ///   - outputSampleFormat: `.int16` (default), `.int32` or `.float32`.
    ///   - trim: the frames to drop at the start (the encoder's priming) and where to stop.
    /// - Throws: ``CodecError/codecNotFound(_:)`` for a codec libavcodec has no identifier or
    ///   decoder for; libavcodec's refusal of the configuration.
    public convenience init(_ format: EncodedAudioFormat, outputSampleFormat: PCMSampleFormat = .int16, trim: GaplessTrim = .none) throws(CodecError) {
        let id: AVCodecID
        switch format.codec {
        case .aac: id = AV_CODEC_ID_AAC
        case .mp3: id = AV_CODEC_ID_MP3
        case .opus: id = AV_CODEC_ID_OPUS
        case .flac: id = AV_CODEC_ID_FLAC
        case .alac: id = AV_CODEC_ID_ALAC
        case .ac3: id = AV_CODEC_ID_AC3
        case .eac3: id = AV_CODEC_ID_EAC3
        default: throw .codecNotFound("a libavcodec decoder of \(format.codec)")
        }
        try self.init(codecID: id, name: format.codec.name.uppercased(), extradata: format.decoderConfiguration,
                      sampleRate: format.sampleRate, channelCount: format.channelCount,
                      outputSampleFormat: outputSampleFormat, trim: trim)
    }

    /// A decoder of libavcodec's codec `id`, called `name` in messages, configured by
    /// `extradata` (and the rate and channels, for a codec whose extradata does not say them).
    init(codecID id: AVCodecID, name: String, extradata: [UInt8], sampleRate: Int = 0, channelCount: Int = 0,
         outputSampleFormat: PCMSampleFormat, trim: GaplessTrim) throws(CodecError) {
        try FFmpegLibrary.load()
        guard [.int16, .int32, .float32].contains(outputSampleFormat) else {
            throw .unsupportedInput("decoder output \(outputSampleFormat.rawValue): use int16, int32 or float32")
        }
        guard trim.priming >= 0, (trim.validFrameCount ?? 0) >= 0, !(trim.keptRanges ?? []).contains(where: { $0.lowerBound < 0 }) else {
            throw .unsupportedInput("a negative trim (priming \(trim.priming), length \(trim.validFrameCount ?? 0))")
        }
        self.outputSampleFormat = outputSampleFormat
        self.trim = trim
        self.codecName = name
        guard let codec = kf_avcodec_find_decoder(id) else { throw .codecNotFound("\(name) decoder") }
        context = try CodecContext(codec: codec)
        frame = try Frame()
        packet = try Packet()
        if !extradata.isEmpty {
            guard let bytes = kf_av_mallocz(extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
                throw .ffmpeg(operation: "av_mallocz", code: kf_averror_enomem(), message: "out of memory")
            }
            bytes.copyMemory(from: extradata, byteCount: extradata.count)
            context.pointer.pointee.extradata = bytes.assumingMemoryBound(to: UInt8.self)
            context.pointer.pointee.extradata_size = Int32(extradata.count)
        }
        if sampleRate > 0 { context.pointer.pointee.sample_rate = Int32(clamping: sampleRate) }
        if channelCount > 0 { kf_default_channel_layout(&context.pointer.pointee.ch_layout, Int32(channelCount)) }
        context.pointer.pointee.request_sample_fmt = AV_SAMPLE_FMT_FLTP
        try context.open()
        // libavcodec's Opus decoder drops the OpusHead's pre-skip itself (its `delay`, RFC 7845
        // 4.2): its first output frame is frame `delay` of the stream, which the trim counts from 0.
        if id == AV_CODEC_ID_OPUS { decodedFrameCount = Int64(max(0, context.pointer.pointee.delay)) }
    }

    /// Decodes one packet (for AAC a raw data block, or an ADTS frame with its header) and returns the
    /// PCM it gives after trimming, as interleaved bytes of ``outputFormat``.
    ///
    /// A packet of no bytes (a damaged file's `stsz` entry of 0, which its reader reports) is not
    /// given to libavcodec, which would take it for the end of the stream: it gives a frame of
    /// silence, as a packet stepped over does (``skipsUndecodablePackets``).
    public func decode(packet bytes: some Collection<UInt8>) throws(CodecError) -> [UInt8] {
        guard !flushed else { throw .invalidState("decode after flush: make a new decoder") }
        guard !bytes.isEmpty else { return silentFrame() }
        scratch.removeAll(keepingCapacity: true)
        packetCount += 1
        let p = packet.pointer
        try CodecError.check(kf_av_new_packet(p, Int32(bytes.count)), "av_new_packet")
        defer { kf_av_packet_unref(p) }
        _ = UnsafeMutableBufferPointer(start: p.pointee.data, count: bytes.count).initialize(from: bytes)
        do throws(CodecError) {
            try CodecError.check(kf_avcodec_send_packet(context.pointer, p), "decoding \(codecName)")
            try receive()
        } catch {
            guard skipsUndecodablePackets, case .ffmpeg = error,
                  decodedPacketCount > 0 || skippedPacketCount + 1 < Self.undecodableLimit else { throw error }
            skippedPacketCount += 1
            if skippedPacketCount <= Self.toldPacketLimit {
                damage.append(DamageEvent(.skippedBytes(count: Int64(bytes.count)),
                                          message: "\(codecName) packet \(packetCount) (\(bytes.count) bytes) cannot be decoded (\(error)); "
                                              + "replaced by a frame of silence"))
            }
            return silentFrame()
        }
        decodedPacketCount += 1
        return scratch
    }

    /// Decodes one packet sample and returns its PCM as a sample (nil when trimming left nothing).
    public func decode(_ sample: MediaSample) throws(CodecError) -> MediaSample? {
        let pcm = try decode(packet: sample.data)
        guard let format = outputFormat, !pcm.isEmpty else { return nil }
        let frames = pcm.count / format.bytesPerFrame
        let start = deliveredFrameCount - Int64(frames)
        let scale = Int32(format.sampleRate)
        return MediaSample(data: pcm, presentationTime: MediaTime(value: start, timescale: scale),
                           duration: MediaTime(value: Int64(frames), timescale: scale), format: .pcm(format))
    }

    /// Drains the decoder and returns the last PCM.
    public func flush() throws(CodecError) -> [UInt8] {
        guard !flushed else { return [] }
        flushed = true
        if skippedPacketCount > Self.toldPacketLimit {
            damage.append(DamageEvent(.skippedBytes(count: 0),
                                      message: "\(skippedPacketCount) \(codecName) packets in all could not be decoded and were stepped over "
                                          + "(the first \(Self.toldPacketLimit) are told above)"))
        }
        scratch.removeAll(keepingCapacity: true)
        try CodecError.check(kf_avcodec_send_packet(context.pointer, nil), "flushing the \(codecName) decoder")
        try receive()
        return scratch
    }

    private func receive() throws(CodecError) {
        let f = frame.pointer
        while true {
            let status = kf_avcodec_receive_frame(context.pointer, f)
            if status == kf_averror_eagain() || status == kf_averror_eof() { return }
            try CodecError.check(status, "decoding \(codecName)")
            defer { kf_av_frame_unref(f) }
            let channels = Int(f.pointee.ch_layout.nb_channels)
            let count = Int(f.pointee.nb_samples)
            let format = PCMFormat(sampleRate: Int(f.pointee.sample_rate), channelCount: channels,
                                   sampleFormat: outputSampleFormat, isInterleaved: true)
            if let outputFormat, outputFormat != format {
                throw .unsupportedInput("the stream changes to \(format.sampleRate) Hz, \(channels) channels mid-stream")
            }
            outputFormat = format
            // Which of this frame's samples survive the trim.
            let first = decodedFrameCount
            decodedFrameCount += Int64(count)
            lastFrameCount = count
            if f.pointee.format == AV_SAMPLE_FMT_FLTP.rawValue {
                // AAC, MP3 and Opus: the decoder's planes as they are.
                let planes = (0..<channels).map { channel in
                    UnsafePointer(UnsafeRawPointer(f.pointee.extended_data[channel]!).assumingMemoryBound(to: Float.self))
                }
                deliver(planes: planes, from: first, count: count)
            } else {
                // FLAC and ALAC give integers: through float, which holds 24 bits exactly.
                try deliverConverted(f, from: first, count: count, channels: channels)
            }
        }
    }

    /// Float planes of the last integer frame (FLAC, ALAC), one after another.
    private var floatPlanes: [Float] = []

    /// Delivers a frame whose samples are not planar float, converted to it first.
    private func deliverConverted(_ f: UnsafeMutablePointer<AVFrame>, from first: Int64, count: Int, channels: Int) throws(CodecError) {
        let raw = AVSampleFormat(rawValue: f.pointee.format)
        let planar = [AV_SAMPLE_FMT_S16P, AV_SAMPLE_FMT_S32P].contains(raw)
        let sampleFormat: PCMSampleFormat
        switch raw {
        case AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P: sampleFormat = .int16
        case AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S32P: sampleFormat = .int32
        case AV_SAMPLE_FMT_FLT: sampleFormat = .float32
        default: throw .unsupportedInput("the \(codecName) decoder gave sample format \(f.pointee.format), which KeyFrameKit does not convert")
        }
        if floatPlanes.count < channels * count { floatPlanes = [Float](repeating: 0, count: channels * count) }
        let width = sampleFormat.bytesPerSample
        let rate = Int(f.pointee.sample_rate)
        floatPlanes.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            for plane in 0..<(planar ? channels : 1) {
                let layout = PCMFormat(sampleRate: rate, channelCount: planar ? 1 : channels, sampleFormat: sampleFormat, isInterleaved: true)
                let source = UnsafeRawBufferPointer(start: f.pointee.extended_data[plane]!, count: count * width * layout.channelCount)
                let targets = planar ? [plane] : Array(0..<channels)
                PCMConversion.toPlanarFloat(source: source, format: layout, sourceFrameCount: count, frameOffset: 0, frameCount: count,
                                            destination: targets.map { base + $0 * count }, destinationOffset: 0)
            }
            deliver(planes: (0..<channels).map { UnsafePointer(base + $0 * count) }, from: first, count: count)
        }
    }

    /// A frame of silence, as long as the last decoded frame (after the trim), in place of a
    /// packet that is empty or stepped over, so that what follows keeps its time; nothing before
    /// the first frame is decoded (its length is not known yet).
    private func silentFrame() -> [UInt8] {
        scratch.removeAll(keepingCapacity: true)
        guard let channels = outputFormat?.channelCount, lastFrameCount > 0 else { return [] }
        let silence = [Float](repeating: 0, count: lastFrameCount)
        silence.withUnsafeBufferPointer { zeros in
            let first = decodedFrameCount
            decodedFrameCount += Int64(lastFrameCount)
            deliver(planes: Array(repeating: zeros.baseAddress!, count: channels), from: first, count: lastFrameCount)
        }
        return scratch
    }

    /// Frames of the last decoded frame: the length of the silence a skipped packet leaves.
    private var lastFrameCount = 0

    /// Appends to ``scratch`` what the trim keeps of `count` frames at decoded frame `first`.
    private func deliver(planes: [UnsafePointer<Float>], from first: Int64, count: Int) {
        if let ranges = trim.keptRanges {
            let frameRange = first..<(first + Int64(count))
            for range in ranges where range.overlaps(frameRange) {
                let kept = range.clamped(to: frameRange)
                PCMConversion.appendInterleaved(planes: planes, frameOffset: Int(kept.lowerBound - first), frameCount: kept.count,
                                                as: outputSampleFormat, to: &scratch)
                deliveredFrameCount += Int64(kept.count)
            }
            return
        }
        // Trim values come from files (edit lists, iTunSMPB): add without overflowing.
        var keepStart = max(0, Int64(trim.priming) - first)
        var keepEnd = Int64(count)
        if let valid = trim.validFrameCount {
            let (end, overflow) = Int64(trim.priming).addingReportingOverflow(valid)
            if !overflow { keepEnd = min(keepEnd, end - first) }
        }
        keepStart = min(keepStart, Int64(count))
        guard keepEnd > keepStart else { return }
        PCMConversion.appendInterleaved(planes: planes, frameOffset: Int(keepStart), frameCount: Int(keepEnd - keepStart),
                                        as: outputSampleFormat, to: &scratch)
        deliveredFrameCount += keepEnd - keepStart
    }
}

/// A codec context takes one thread at a time (libavcodec's rule); hand it over, don't share it.
@available(*, unavailable)
extension LibavcodecAudioDecoder: Sendable {}
