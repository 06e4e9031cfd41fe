internal import CFFmpeg
public import AACBitstream
public import MediaCore
internal import PCMAudio

/// An AAC-LC encoder (ISO/IEC 14496-3, object type 2) on libavcodec's native `aac` encoder:
/// PCM in, raw AAC packets and their AudioSpecificConfig out (what an AudioConverter does on
/// Apple's platforms).
///
/// - Takes PCM samples of any length — s16, s32, f32 (or u8, s24, f64), interleaved or planar —
///   and re-chunks them into 1024-frame codec frames (as `KFAudioEncoder`'s `_leftBuffer` does); each
///   input sample is converted once, straight into the codec's frame.
/// - The sample rate and channel count come from the first PCM sample, or from
///   ``init(format:bitrate:coder:lowersBitrateToFit:cutoff:)``.
/// - Every packet has its own time: `pts = first input pts + (1024·k − priming)/rate`, the time
///   of the first input sample the packet's output stands for once the decoder drops the
///   ``priming``. (`KFAudioEncoder` stamps every packet cut from one buffer with that buffer's
///   time.)
/// - ``flush()`` encodes the short last frame and drains the encoder; after it ``padding`` says
///   how many samples at the end are not input, so a muxer can write a sample-exact edit list.
public final class AACEncoder {
    /// Sample rates the encoder takes (ISO/IEC 14496-3 Table 1.18, 8–96 kHz).
    public static let supportedSampleRates = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]
    /// Channel counts libavcodec's encoder takes: those of an AAC channel configuration (ISO/IEC
    /// 14496-3 Table 1.19), and 7 (6.1), which it writes with a program_config_element, as it
    /// does other layouts no configuration names (quad, 7.1 wide) when the PCM's
    /// ``/MediaCore/PCMFormat/channelMask`` names them.
    public static let supportedChannelCounts = [1, 2, 3, 4, 5, 6, 7, 8]
    /// PCM frames per AAC-LC packet.
    public static let framesPerPacket = 1024

    /// How libavcodec's encoder picks scale factors (its `aac_coder` option).
    public enum Coder: String, Sendable, Hashable, CaseIterable {
        /// The two-loop search, libavcodec's default: `ffmpeg -c:a aac` gives the same bytes.
        case twoLoop = "twoloop"
        /// The constant-quantizer search: about half the CPU of ``twoLoop``, a little lower
        /// quality (for live capture on small machines).
        case fast
    }

    /// The target bitrate in bits per second: the one asked for, or — when the encoder was made
    /// with `lowersBitrateToFit` — the one chosen for the input once it is open
    /// (``fittingBitrate(_:channels:sampleRate:)``).
    public private(set) var bitrate: Int
    /// Whether ``bitrate`` is a preference, lowered to the most the input's rate and channel
    /// count allow, rather than a demand that is an error when it does not fit.
    public let lowersBitrateToFit: Bool
    /// The scale-factor search.
    public let coder: Coder
    /// The highest frequency the encoder codes, in hertz (libavcodec's `cutoff`), or `nil` for
    /// libavcodec's choice by bitrate. The LC core of HE-AAC sets it to the SBR crossover: the
    /// decoder takes nothing above it from the core.
    public let cutoff: Int?
    /// The PCM layout of the input (set by the first sample or the initializer).
    public private(set) var inputFormat: PCMFormat?
    /// The stream's AudioSpecificConfig (libavcodec's extradata), once the encoder is open.
    public private(set) var audioSpecificConfig: AudioSpecificConfig?
    /// Samples of encoder delay at the start of the decoded output (`initial_padding`; 1024).
    public private(set) var priming = 0
    /// Samples after the input's end in the decoded output; known after ``flush()``.
    public private(set) var padding: Int?
    /// Input frames taken so far.
    public private(set) var inputFrameCount: Int64 = 0
    /// Packets produced so far.
    public private(set) var packetCount: Int64 = 0

    private var context: CodecContext?
    private var frame: Frame?
    private let packet: Packet
    private var filled = 0
    private var framesSent: Int64 = 0
    private var firstTime: MediaTime?
    private var outputFormat: FormatDescription?
    private var flushed = false
    private var announcement = GaplessAnnouncement()

    /// The priming once open, the valid length and padding once flushed
    /// (``/MediaCore/StreamEvent/gapless(_:)``), as a ``/MediaCore/MediaTransform``.
    public func takeEvents() -> [StreamEvent] { gaplessEvents(&announcement) }

    /// An encoder that opens on the first PCM sample, with its rate and channel count.
    ///
    /// - Parameters:
    ///   - bitrate: bits per second.
    ///   - coder: the scale-factor search.
    ///   - lowersBitrateToFit: take `bitrate` as a default rather than a demand: at open it is
    ///     lowered to the most AAC carries at the input's rate and channel count
    ///     (``fittingBitrate(_:channels:sampleRate:)``), so a 12 kHz mono input gets 72 kb/s
    ///     where 128 kb/s was asked. Without it, a bitrate that does not fit is an error.
    ///   - cutoff: the highest frequency coded, in hertz; `nil` lets libavcodec choose by bitrate.
    /// - Throws: ``CodecError/bitrateOutOfRange(_:allowed:)`` for a bitrate that is not positive.
    ///   Whether it fits AAC is checked at open, against the range of the input's rate and
    ///   channel count (8 kb/s up to ``maximumBitrate(channels:sampleRate:)``), so the error
    ///   names the range that applies.
    public init(bitrate: Int = 96_000, coder: Coder = .twoLoop, lowersBitrateToFit: Bool = false, cutoff: Int? = nil) throws(CodecError) {
        try FFmpegLibrary.load()
        self.coder = coder
        self.cutoff = cutoff
        self.lowersBitrateToFit = lowersBitrateToFit
        guard bitrate > 0 else { throw .bitrateOutOfRange(bitrate, allowed: 8000...Self.maximumBitrate(channels: 1, sampleRate: 8000)) }
        self.bitrate = bitrate
        self.packet = try Packet()
    }

    /// An encoder for `format`, opened now, so an unsupported rate, channel count or bitrate is an
    /// error before any work starts (the other parameters as for
    /// ``init(bitrate:coder:lowersBitrateToFit:cutoff:)``).
    public convenience init(format: PCMFormat, bitrate: Int = 96_000, coder: Coder = .twoLoop,
                            lowersBitrateToFit: Bool = false, cutoff: Int? = nil) throws(CodecError) {
        try self.init(bitrate: bitrate, coder: coder, lowersBitrateToFit: lowersBitrateToFit, cutoff: cutoff)
        try open(format)
    }

    /// The most bits per second AAC can carry: 6144 bits per channel per 1024-sample frame
    /// (ISO/IEC 14496-3, 4.5.3.2: the decoder input buffer holds 6144 bits per channel).
    public static func maximumBitrate(channels: Int, sampleRate: Int) -> Int {
        6144 * channels * sampleRate / 1024
    }

    /// `preferred`, lowered to the most AAC carries at `sampleRate` with `channels`
    /// (``maximumBitrate(channels:sampleRate:)``) and raised to the 8 kb/s floor: the bitrate
    /// a default becomes for an input. With the 128 kb/s default: 48 kb/s for mono at 8 kHz,
    /// 72 kb/s for mono at 12 kHz, 128 kb/s from mono at 22.05 kHz on.
    public static func fittingBitrate(_ preferred: Int, channels: Int, sampleRate: Int) -> Int {
        max(8000, min(preferred, maximumBitrate(channels: channels, sampleRate: sampleRate)))
    }

    /// The compressed format of the packets, once the encoder is open.
    public var formatDescription: FormatDescription? { outputFormat }

    /// Encodes one PCM sample (any number of frames) and returns the packets that are ready.
    public func encode(_ sample: MediaSample) throws(CodecError) -> [MediaSample] {
        guard case .pcm(let format) = sample.format else {
            throw .unsupportedInput("the encoder takes PCM samples, got \(sample.format.mediaType == .video ? "video" : "compressed audio")")
        }
        var packets: [MediaSample] = []
        var failure: CodecError?
        sample.data.withUnsafeBytes { raw in
            do throws(CodecError) {
                packets = try encode(pcm: raw, format: format, presentationTime: sample.presentationTime)
            } catch { failure = error }
        }
        if let failure { throw failure }
        return packets
    }

    /// Encodes PCM bytes laid out as `format` says (whole frames; a planar buffer holds
    /// `byteCount / bytesPerFrame` frames per plane). `presentationTime` is used for the first
    /// call only; later times follow from the samples counted.
    public func encode(pcm: UnsafeRawBufferPointer, format: PCMFormat, presentationTime: MediaTime? = nil) throws(CodecError) -> [MediaSample] {
        guard !flushed else { throw .invalidState("encode after flush: make a new encoder") }
        if inputFormat == nil { try open(format) }
        let total = try PCMEncoderInput.frameCount(of: pcm, format: format, opened: inputFormat)
        if firstTime == nil { firstTime = PCMEncoderInput.startTime(presentationTime, sampleRate: format.sampleRate) }
        var done = 0
        var packets: [MediaSample] = []
        while done < total {
            let (codecFrame, planes) = try writableFrame()
            let count = min(Self.framesPerPacket - filled, total - done)
            PCMConversion.toPlanarFloat(source: pcm, format: format, sourceFrameCount: total, frameOffset: done, frameCount: count,
                                        destination: planes, destinationOffset: filled)
            filled += count
            done += count
            if filled == Self.framesPerPacket {
                try send(codecFrame, frameCount: filled)
                try receive(into: &packets)
            }
        }
        inputFrameCount += Int64(total)
        return packets
    }

    /// Encodes the short last frame and drains the encoder; sets ``padding``.
    public func flush() throws(CodecError) -> [MediaSample] {
        guard !flushed else { return [] }
        flushed = true
        guard let context else { return [] }
        var packets: [MediaSample] = []
        if filled > 0, let frame {
            try send(frame, frameCount: filled)
            try receive(into: &packets)
        }
        try CodecError.check(kf_avcodec_send_frame(context.pointer, nil), "flushing the AAC encoder")
        try receive(into: &packets)
        padding = inputFrameCount == 0 ? 0 : max(0, Int(packetCount * Int64(Self.framesPerPacket) - Int64(priming) - inputFrameCount))
        return packets
    }

    // MARK: - Codec

    private func openContext(_ codec: UnsafePointer<AVCodec>, format: PCMFormat, namedLayout: Bool) throws(CodecError) -> CodecContext {
        let context = try CodecContext(codec: codec)
        let c = context.pointer
        c.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        c.pointee.sample_rate = Int32(format.sampleRate)
        if namedLayout, let mask = format.channelMask, mask.nonzeroBitCount == format.channelCount {
            try CodecError.check(kf_av_channel_layout_from_mask(&c.pointee.ch_layout, mask), "av_channel_layout_from_mask")
        } else {
            kf_default_channel_layout(&c.pointee.ch_layout, Int32(format.channelCount))
        }
        c.pointee.bit_rate = Int64(bitrate)
        if let cutoff { c.pointee.cutoff = Int32(cutoff) }
        c.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        c.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        try CodecError.check(kf_av_opt_set(c.pointee.priv_data, "aac_coder", coder.rawValue, 0), "setting aac_coder \(coder.rawValue)")
        try context.open()
        return context
    }

    private func open(_ format: PCMFormat) throws(CodecError) {
        guard Self.supportedSampleRates.contains(format.sampleRate) else {
            throw .unsupportedSampleRate(format.sampleRate, supported: Self.supportedSampleRates)
        }
        guard Self.supportedChannelCounts.contains(format.channelCount) else {
            throw .unsupportedChannelCount(format.channelCount, supported: Self.supportedChannelCounts)
        }
        let limit = Self.maximumBitrate(channels: format.channelCount, sampleRate: format.sampleRate)
        if lowersBitrateToFit { bitrate = Self.fittingBitrate(bitrate, channels: format.channelCount, sampleRate: format.sampleRate) }
        guard (8000...limit).contains(bitrate) else { throw .bitrateOutOfRange(bitrate, allowed: 8000...limit) }
        guard let codec = kf_avcodec_find_encoder(AV_CODEC_ID_AAC) else { throw .codecNotFound("AAC encoder") }
        // The PCM's speakers when it names them (a program_config_element for quad, 6.1, 7.1
        // wide, …), else the usual layout of the count; a named layout libavcodec cannot
        // describe falls back to the usual one.
        let context: CodecContext
        if format.channelMask != nil, let named = try? openContext(codec, format: format, namedLayout: true) {
            context = named
        } else {
            context = try openContext(codec, format: format, namedLayout: false)
        }
        let c = context.pointer

        let frame = try Frame()
        let f = frame.pointer
        f.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        f.pointee.nb_samples = Int32(Self.framesPerPacket)
        f.pointee.sample_rate = Int32(format.sampleRate)
        try CodecError.check(kf_av_channel_layout_copy(&f.pointee.ch_layout, &c.pointee.ch_layout), "av_channel_layout_copy")
        try CodecError.check(kf_av_frame_get_buffer(f, 0), "av_frame_get_buffer")

        let extradata = c.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(c.pointee.extradata_size))) } ?? []
        let config: AudioSpecificConfig
        do { config = try AudioSpecificConfig(bytes: extradata) } catch { throw .bitstream(error) }
        self.context = context
        self.frame = frame
        self.inputFormat = format
        self.priming = Int(c.pointee.initial_padding)
        self.audioSpecificConfig = config
        self.outputFormat = .audio(EncodedAudioFormat(codec: .aac, sampleRate: format.sampleRate, channelCount: format.channelCount,
                                                      framesPerPacket: Self.framesPerPacket, decoderConfiguration: extradata))
    }

    /// The frame being filled, made writable when a new one starts, and its channel planes.
    private func writableFrame() throws(CodecError) -> (Frame, [UnsafeMutablePointer<Float>]) {
        guard let frame, let inputFormat else { throw .invalidState("the encoder is not open") }
        let f = frame.pointer
        if filled == 0 {
            try CodecError.check(kf_av_frame_make_writable(f), "av_frame_make_writable")
            f.pointee.nb_samples = Int32(Self.framesPerPacket)
        }
        let planes = (0..<inputFormat.channelCount).map { channel in
            UnsafeMutableRawPointer(f.pointee.extended_data[channel]!).assumingMemoryBound(to: Float.self)
        }
        return (frame, planes)
    }

    private func send(_ frame: Frame, frameCount: Int) throws(CodecError) {
        guard let context else { return }
        frame.pointer.pointee.nb_samples = Int32(frameCount)
        frame.pointer.pointee.pts = framesSent
        framesSent += Int64(frameCount)
        filled = 0
        try CodecError.check(kf_avcodec_send_frame(context.pointer, frame.pointer), "encoding AAC")
    }

    private func receive(into packets: inout [MediaSample]) throws(CodecError) {
        guard let context, let inputFormat, let outputFormat, let firstTime else { return }
        let p = packet.pointer
        while true {
            let status = kf_avcodec_receive_packet(context.pointer, p)
            if status == kf_averror_eagain() || status == kf_averror_eof() { return }
            try CodecError.check(status, "receiving AAC packets")
            defer { kf_av_packet_unref(p) }
            let data = Array(UnsafeBufferPointer(start: p.pointee.data, count: Int(p.pointee.size)))
            let scale = Int32(inputFormat.sampleRate)
            let start = packetCount * Int64(Self.framesPerPacket) - Int64(priming)
            let time = MediaTime(value: firstTime.value + start, timescale: scale)
            packets.append(MediaSample(data: data, presentationTime: time,
                                       duration: MediaTime(value: Int64(Self.framesPerPacket), timescale: scale),
                                       format: outputFormat))
            packetCount += 1
        }
    }
}

/// A codec context takes one thread at a time (libavcodec's rule); hand it over, don't share it.
@available(*, unavailable)
extension AACEncoder: Sendable {}
