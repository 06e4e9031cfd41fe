internal import CFFmpeg
public import MediaCore
internal import PCMAudio

/// An encoder of MP3, Opus, FLAC or ALAC — any codec libavcodec encodes that a
/// ``Configuration`` describes — as the jobs see an encoder (``AudioEncoder``): PCM of any
/// layout in, the codec's packets out, each stamped with the time of the first input sample it
/// stands for once the decoder drops the ``priming``.
///
/// - Lossy codecs (MP3 through libmp3lame, Opus through libopus) are given floats, and each
///   packet lasts the codec's frame (1152 or 576 for MP3, 960 for Opus at 48 kHz): what the
///   decoder gives for it. The ``priming`` (libavcodec's `initial_padding`: LAME's delay plus
///   the 529 of MP3 synthesis; Opus's pre-skip) and the ``padding`` let a container trim both
///   ends exactly.
/// - Lossless codecs (FLAC, ALAC) are given the input's integers unchanged: 16-bit input as
///   16 bits, 24- and 32-bit as 32 with 24 significant, so the decode of a 16- or 24-bit input
///   is the input to the bit (of a 32-bit or float input, its top 24 bits).
///   Their last packet is as short as the input left it, and there is no priming.
///
/// A FLAC stream's final STREAMINFO (its length and the MD5 of its samples, RFC 9639 8.2) is
/// known only once flushed: ``finalDecoderConfiguration`` holds it, and a
/// ``/MediaCore/StreamEvent/codecConfiguration(_:)`` event carries it to the sink.
public final class LibavcodecAudioEncoder {
    /// What libavcodec encoder a codec is made by, and what it takes.
    public struct Configuration: Sendable {
        /// The codec written.
        public var codec: AudioCodecID
        /// The libavcodec encoder's name (`libmp3lame`, `libopus`, `flac`, `alac`).
        public var encoderName: String
        /// The sample rates it takes; `nil` for any from 1 Hz up.
        public var sampleRates: [Int]?
        /// The channel counts it takes.
        public var channelCounts: ClosedRange<Int>
        /// Whether it is lossless: integers in, no bitrate, packets as long as their samples.
        public var isLossless: Bool
        /// The most bits per second it codes at a rate and channel count, for a default bitrate
        /// lowered to fit and the range an error names; `nil` for a lossless codec.
        public var maximumBitrate: (@Sendable (_ sampleRate: Int, _ channels: Int) -> Int)?
        /// The least bits per second it codes.
        public var minimumBitrate: Int
        /// Private options set on the encoder before it opens (libavcodec's names and values).
        public var options: [String: String]
        /// Samples per packet asked of an encoder that takes any (FLAC); `nil`: the encoder's own.
        public var frameLength: Int?

        /// A configuration of `codec`, made by libavcodec's encoder `encoderName`.
        public init(codec: AudioCodecID, encoderName: String, sampleRates: [Int]?, channelCounts: ClosedRange<Int>,
                    isLossless: Bool, minimumBitrate: Int = 8000,
                    maximumBitrate: (@Sendable (_ sampleRate: Int, _ channels: Int) -> Int)? = nil, options: [String: String] = [:],
                    frameLength: Int? = nil) {
            self.codec = codec
            self.encoderName = encoderName
            self.sampleRates = sampleRates
            self.channelCounts = channelCounts
            self.isLossless = isLossless
            self.minimumBitrate = minimumBitrate
            self.maximumBitrate = maximumBitrate
            self.options = options
            self.frameLength = frameLength
        }

        /// MPEG-1/2/2.5 Layer III (ISO/IEC 11172-3, 13818-3) through LAME: constant bitrate,
        /// 32–320 kb/s at 32–48 kHz, to 160 kb/s at 16–24 kHz, to 64 kb/s at 8–12 kHz; one or
        /// two channels.
        public static let mp3 = Configuration(
            codec: .mp3, encoderName: "libmp3lame", sampleRates: [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000],
            channelCounts: 1...2, isLossless: false, maximumBitrate: { rate, _ in rate >= 32000 ? 320_000 : rate >= 16000 ? 160_000 : 64_000 })

        /// Opus (RFC 6716) through libopus: 20-ms frames at 48 kHz, the rate every Opus decoder
        /// outputs and ISO BMFF's Opus entry is timed at (an input at another rate is resampled
        /// first), 6 kb/s up to 256 kb/s a channel; up to 8 channels (RFC 7845 5.1.1 mapping
        /// family 1 above two).
        public static let opus = Configuration(
            codec: .opus, encoderName: "libopus", sampleRates: [48000], channelCounts: 1...8,
            isLossless: false, minimumBitrate: 6000, maximumBitrate: { _, channels in 256_000 * channels })

        /// FLAC (RFC 9639) through libavcodec's encoder, at its default compression (level 5), in
        /// blocks of 4096 samples (the `flac` tool's default, and ALAC's and a whole number of
        /// AAC frames, so that a ladder's segments end at the same samples); up to 8 channels, 16
        /// or 24 bits.
        public static let flac = Configuration(
            codec: .flac, encoderName: "flac", sampleRates: nil, channelCounts: 1...8, isLossless: true, frameLength: 4096)

        /// Apple Lossless through libavcodec's encoder: 4096-frame packets; up to 8 channels, 16
        /// or 24 bits.
        public static let alac = Configuration(
            codec: .alac, encoderName: "alac", sampleRates: nil, channelCounts: 1...8, isLossless: true, frameLength: 4096)
    }

    /// What is encoded, and by what.
    public let configuration: Configuration
    /// The target bitrate in bits per second (0 for a lossless codec), lowered at open to what
    /// the input allows when the encoder was made with `lowersBitrateToFit`.
    public private(set) var bitrate: Int
    /// Whether ``bitrate`` is a preference, lowered to fit the input, rather than a demand.
    public let lowersBitrateToFit: Bool
    /// The PCM layout of the input (set by the first sample or at init).
    public private(set) var inputFormat: PCMFormat?
    /// The compressed format of the packets, once open.
    public private(set) var formatDescription: FormatDescription?
    /// The codec's configuration as the flushed encoder left it (FLAC: STREAMINFO with the
    /// length and MD5), when it changed from the one at open; `nil` until then.
    public private(set) var finalDecoderConfiguration: [UInt8]?
    /// Samples of encoder delay at the start of the decoded output.
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
    private var frameSize = 0
    private var sampleFormat = PCMSampleFormat.float32
    private var planar = false
    private var filled = 0
    private var framesSent: Int64 = 0
    private var framesOut: Int64 = 0
    private var firstTime: MediaTime?
    private var flushed = false
    private var announcement = GaplessAnnouncement()
    private var pendingEvents: [StreamEvent] = []

    /// An encoder of `configuration`'s codec at `bitrate` (ignored by a lossless codec), opened
    /// on the first PCM sample, or now when `format` is given, so that a rate, channel count or
    /// bitrate the codec refuses is an error before any work starts.
    ///
    /// - Throws: ``CodecError/codecNotFound(_:)`` when the libavcodec installed lacks the
    ///   encoder; ``CodecError/bitrateOutOfRange(_:allowed:)`` for a lossy bitrate that is not
    ///   positive; at open, the codec's refusals.
    public init(_ configuration: Configuration, bitrate: Int, lowersBitrateToFit: Bool = false, format: PCMFormat? = nil) throws(CodecError) {
        try FFmpegLibrary.load()
        self.configuration = configuration
        self.lowersBitrateToFit = lowersBitrateToFit
        if !configuration.isLossless, bitrate <= 0 {
            let most = configuration.maximumBitrate?(48000, 2) ?? 320_000
            throw .bitrateOutOfRange(bitrate, allowed: configuration.minimumBitrate...max(configuration.minimumBitrate, most))
        }
        self.bitrate = configuration.isLossless ? 0 : bitrate
        self.packet = try Packet()
        if let format { try open(format) }
    }

    /// The priming once open, the valid length and padding once flushed, and a final codec
    /// configuration (``finalDecoderConfiguration``).
    public func takeEvents() -> [StreamEvent] {
        var events = gaplessEvents(&announcement)
        events += pendingEvents
        pendingEvents.removeAll()
        return events
    }

    /// Encodes PCM bytes laid out as `format` says (whole frames). `presentationTime` is used
    /// for the first call only; later times follow from the samples counted.
    public func encode(pcm: UnsafeRawBufferPointer, format: PCMFormat, presentationTime: MediaTime? = nil) throws(CodecError) -> [MediaSample] {
        guard !flushed else { throw .invalidState("encode after flush: make a new encoder") }
        if inputFormat == nil { try open(format) }
        let total = try PCMEncoderInput.frameCount(of: pcm, format: format, opened: inputFormat)
        if firstTime == nil { firstTime = PCMEncoderInput.startTime(presentationTime, sampleRate: format.sampleRate) }
        var done = 0
        var packets: [MediaSample] = []
        while done < total {
            let (codecFrame, planes) = try writableFrame()
            let count = min(frameSize - filled, total - done)
            PCMConversion.convert(source: pcm, format: format, sourceFrameCount: total, frameOffset: done, frameCount: count,
                                  to: sampleFormat, planar: planar, destination: planes, destinationOffset: filled)
            filled += count
            done += count
            if filled == frameSize {
                try send(codecFrame)
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
            try send(frame)
            try receive(into: &packets)
        }
        try CodecError.check(kf_avcodec_send_frame(context.pointer, nil), "flushing the \(configuration.encoderName) encoder")
        try receive(into: &packets)
        padding = inputFrameCount == 0 ? 0 : max(0, Int(framesOut - Int64(priming) - inputFrameCount))
        return packets
    }

    // MARK: - Codec

    private func open(_ format: PCMFormat) throws(CodecError) {
        let name = configuration.encoderName
        if let rates = configuration.sampleRates, !rates.contains(format.sampleRate) {
            throw .unsupportedInput("\(configuration.codec) takes a sample rate of \(rates.sorted().map(String.init).joined(separator: ", ")) Hz, "
                                    + "not \(format.sampleRate)")
        }
        guard configuration.channelCounts.contains(format.channelCount) else {
            let counts = configuration.channelCounts
            throw .unsupportedInput("\(configuration.codec) takes \(counts.lowerBound == counts.upperBound ? "\(counts.lowerBound)" : "\(counts.lowerBound) to \(counts.upperBound)") "
                                    + "channels, not \(format.channelCount)")
        }
        if let maximum = configuration.maximumBitrate?(format.sampleRate, format.channelCount) {
            if lowersBitrateToFit { bitrate = max(configuration.minimumBitrate, min(bitrate, maximum)) }
            guard (configuration.minimumBitrate...maximum).contains(bitrate) else {
                throw .bitrateOutOfRange(bitrate, allowed: configuration.minimumBitrate...maximum)
            }
        }
        guard let codec = kf_avcodec_find_encoder_by_name(name) else {
            throw .codecNotFound("libavcodec's \(name) encoder (\(AACDecoder.libavcodecVersion) was built without it)")
        }
        let context = try CodecContext(codec: codec)
        let c = context.pointer
        let (chosen, isPlanar, avFormat) = try Self.sampleFormat(of: codec, for: format, lossless: configuration.isLossless, name: name)
        c.pointee.sample_fmt = avFormat
        if configuration.isLossless, chosen == .int32 { c.pointee.bits_per_raw_sample = 24 }
        c.pointee.sample_rate = Int32(format.sampleRate)
        if let mask = format.channelMask, mask.nonzeroBitCount == format.channelCount {
            try CodecError.check(kf_av_channel_layout_from_mask(&c.pointee.ch_layout, mask), "av_channel_layout_from_mask")
        } else {
            kf_default_channel_layout(&c.pointee.ch_layout, Int32(format.channelCount))
        }
        if !configuration.isLossless { c.pointee.bit_rate = Int64(bitrate) }
        c.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        c.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        if let length = configuration.frameLength { c.pointee.frame_size = Int32(length) }
        for (option, value) in configuration.options.sorted(by: { $0.key < $1.key }) {
            try CodecError.check(kf_av_opt_set(c.pointee.priv_data, option, value, 0), "setting \(name)'s \(option) to \(value)")
        }
        try context.open()
        // A codec that takes any frame size is given 4096 frames at a time.
        let size = Int(c.pointee.frame_size)
        frameSize = size > 0 ? size : 4096

        let frame = try Frame()
        let f = frame.pointer
        f.pointee.format = avFormat.rawValue
        f.pointee.nb_samples = Int32(frameSize)
        f.pointee.sample_rate = Int32(format.sampleRate)
        try CodecError.check(kf_av_channel_layout_copy(&f.pointee.ch_layout, &c.pointee.ch_layout), "av_channel_layout_copy")
        try CodecError.check(kf_av_frame_get_buffer(f, 0), "av_frame_get_buffer")

        self.context = context
        self.frame = frame
        self.sampleFormat = chosen
        self.planar = isPlanar
        self.inputFormat = format
        self.priming = Int(c.pointee.initial_padding)
        let extradata = c.pointee.extradata.map { Array(UnsafeBufferPointer(start: $0, count: Int(c.pointee.extradata_size))) } ?? []
        formatDescription = .audio(EncodedAudioFormat(codec: configuration.codec, sampleRate: format.sampleRate, channelCount: format.channelCount,
                                                      framesPerPacket: configuration.isLossless ? 0 : frameSize, decoderConfiguration: extradata))
    }

    /// The sample type to give the codec: for a lossless codec the input's integers (16 bits,
    /// or 32 with 24 significant), for a lossy one floats where it takes them; planar or
    /// interleaved as it takes them.
    private static func sampleFormat(of codec: UnsafePointer<AVCodec>, for input: PCMFormat, lossless: Bool,
                                     name: String) throws(CodecError) -> (PCMSampleFormat, planar: Bool, AVSampleFormat) {
        var offered: [AVSampleFormat] = []
        if var next = codec.pointee.sample_fmts {
            while next.pointee != AV_SAMPLE_FMT_NONE {
                offered.append(next.pointee)
                next += 1
            }
        }
        let wide = [.int24, .int32, .float32, .float64].contains(input.sampleFormat)
        let preferred: [PCMSampleFormat] = lossless ? (wide ? [.int32, .int16] : [.int16, .int32]) : [.float32, .int16, .int32]
        for sample in preferred {
            let (packed, planar): (AVSampleFormat, AVSampleFormat) = switch sample {
            case .int16: (AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P)
            case .int32: (AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S32P)
            default: (AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_FLTP)
            }
            if offered.contains(planar) { return (sample, true, planar) }
            if offered.contains(packed) { return (sample, false, packed) }
        }
        throw .unsupportedInput("\(name) takes none of the sample types KeyFrameKit gives (s16, s32, f32)")
    }

    /// The frame being filled, made writable when a new one starts, and its planes.
    private func writableFrame() throws(CodecError) -> (Frame, [UnsafeMutableRawPointer]) {
        guard let frame, let inputFormat else { throw .invalidState("the encoder is not open") }
        let f = frame.pointer
        if filled == 0 {
            try CodecError.check(kf_av_frame_make_writable(f), "av_frame_make_writable")
            f.pointee.nb_samples = Int32(frameSize)
        }
        let planes = (0..<(planar ? inputFormat.channelCount : 1)).map { UnsafeMutableRawPointer(f.pointee.extended_data[$0]!) }
        return (frame, planes)
    }

    private func send(_ frame: Frame) throws(CodecError) {
        guard let context else { return }
        frame.pointer.pointee.nb_samples = Int32(filled)
        frame.pointer.pointee.pts = framesSent
        framesSent += Int64(filled)
        filled = 0
        try CodecError.check(kf_avcodec_send_frame(context.pointer, frame.pointer), "encoding with \(configuration.encoderName)")
    }

    private func receive(into packets: inout [MediaSample]) throws(CodecError) {
        guard let context, let inputFormat, let formatDescription, let firstTime else { return }
        let p = packet.pointer
        while true {
            let status = kf_avcodec_receive_packet(context.pointer, p)
            if status == kf_averror_eagain() || status == kf_averror_eof() { return }
            try CodecError.check(status, "receiving \(configuration.encoderName) packets")
            defer { kf_av_packet_unref(p) }
            var size = 0
            if let extradata = kf_av_packet_get_side_data(p, AV_PKT_DATA_NEW_EXTRADATA, &size), size > 0 {
                let bytes = Array(UnsafeBufferPointer(start: extradata, count: size))
                finalDecoderConfiguration = bytes
                if case .audio(var audio) = formatDescription {
                    audio.decoderConfiguration = bytes
                    pendingEvents.append(.codecConfiguration(audio))
                }
            }
            // A lossless packet lasts what it holds; a lossy one the codec's frame, which its
            // decoder gives in full (the container trims the padding).
            let frames = configuration.isLossless && p.pointee.duration > 0 ? Int64(p.pointee.duration) : Int64(frameSize)
            guard p.pointee.size > 0 else { continue }
            let data = Array(UnsafeBufferPointer(start: p.pointee.data, count: Int(p.pointee.size)))
            let scale = Int32(inputFormat.sampleRate)
            let time = MediaTime(value: firstTime.value + framesOut - Int64(priming), timescale: scale)
            packets.append(MediaSample(data: data, presentationTime: time, duration: MediaTime(value: frames, timescale: scale),
                                       format: formatDescription))
            framesOut += frames
            packetCount += 1
        }
    }
}

extension LibavcodecAudioEncoder: PCMBytesEncoder, AudioEncoder {}

/// A codec context takes one thread at a time (libavcodec's rule); hand it over, don't share it.
@available(*, unavailable)
extension LibavcodecAudioEncoder: Sendable {}
