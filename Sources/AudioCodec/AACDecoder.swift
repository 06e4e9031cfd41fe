internal import CFFmpeg
public import AACBitstream
public import MediaCore
internal import PCMAudio

/// An AAC decoder (ISO/IEC 14496-3) on libavcodec. Packets in — raw data blocks with an
/// AudioSpecificConfig (1.6.2.1), or whole ADTS frames (1.A.3.2) — and interleaved PCM out (s16,
/// s32 or f32, converted as `ffmpeg` converts).
///
/// Given ``Trim``, it drops the encoder's priming at the start and stops after the valid length,
/// so decoding a file with a sample-exact edit list gives exactly the samples that were encoded.
public final class AACDecoder {
    /// What to drop and keep of the decoded samples: ``/MediaCore/GaplessTrim``.
    public typealias Trim = GaplessTrim

    /// The PCM sample type the decoder writes.
    public let outputSampleFormat: PCMSampleFormat
    /// What to drop and keep.
    public let trim: Trim
    /// The PCM layout of the output, known after the first decoded frame.
    public private(set) var outputFormat: PCMFormat?
    /// Output frames delivered so far (after trimming).
    public private(set) var deliveredFrameCount: Int64 = 0

    private let context: CodecContext
    private let frame: Frame
    private let packet: Packet
    private var decodedFrameCount: Int64 = 0
    private var flushed = false
    private var scratch: [UInt8] = []

    /// Whether a packet libavcodec cannot decode is stepped over, reported by ``takeDamage()``,
    /// instead of ending the stream with an error: a damaged file salvaged. A stream whose first
    /// ``undecodableLimit`` packets all fail is not AAC this decoder reads, and throws.
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

    /// A decoder for raw AAC packets described by `config`, or — with `nil` — for whole ADTS
    /// frames, whose headers configure it.
    ///
    /// - Parameters:
    ///   - config: the track's AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1), or `nil` to decode
    ///     ADTS frames.
    ///   - outputSampleFormat: `.int16` (default), `.int32` or `.float32`.
    ///   - trim: the frames to drop at the start (the encoder's priming) and where to stop.
    public init(audioSpecificConfig config: AudioSpecificConfig?, outputSampleFormat: PCMSampleFormat = .int16,
                trim: Trim = .none) throws(CodecError) {
        try FFmpegLibrary.load()
        guard [.int16, .int32, .float32].contains(outputSampleFormat) else {
            throw .unsupportedInput("decoder output \(outputSampleFormat.rawValue): use int16, int32 or float32")
        }
        guard trim.priming >= 0, (trim.validFrameCount ?? 0) >= 0, !(trim.keptRanges ?? []).contains(where: { $0.lowerBound < 0 }) else {
            throw .unsupportedInput("a negative trim (priming \(trim.priming), length \(trim.validFrameCount ?? 0))")
        }
        self.outputSampleFormat = outputSampleFormat
        self.trim = trim
        if let config, let problem = Self.undecodable(config) { throw problem }
        guard let codec = kf_avcodec_find_decoder(AV_CODEC_ID_AAC) else { throw .codecNotFound("AAC decoder") }
        context = try CodecContext(codec: codec)
        frame = try Frame()
        packet = try Packet()
        if let config {
            let bytes: [UInt8]
            do { bytes = try config.serialized() } catch { throw .bitstream(error) }
            guard let extradata = kf_av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
                throw .ffmpeg(operation: "av_mallocz", code: kf_averror_enomem(), message: "out of memory")
            }
            extradata.copyMemory(from: bytes, byteCount: bytes.count)
            context.pointer.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
            context.pointer.pointee.extradata_size = Int32(bytes.count)
        }
        context.pointer.pointee.request_sample_fmt = AV_SAMPLE_FMT_FLTP
        do { try context.open() } catch {
            // A configuration libavcodec does not implement: name it, not the error number.
            if case .ffmpeg(_, let code, let message) = error, code == -ENOSYS, let config {
                throw Self.undecodableError(config, reason: "\(Self.libavcodecVersion) does not implement it (\(message))")
            }
            throw error
        }
    }

    /// The audio object types libavcodec's AAC decoder decodes (its
    /// `decode_audio_specific_config`): AAC Main, LC, SSR and LTP, ER AAC LC, LD and ELD, each
    /// with SBR and PS; USAC (xHE-AAC) from libavcodec 61.19 (FFmpeg 7.1) on.
    static var decodableObjectTypes: Set<AudioObjectType> {
        var types: Set<AudioObjectType> = [.aacMain, .aacLC, .aacSSR, .aacLTP, .erAACLC, .erAACLD, .erAACELD]
        if (LIBAVCODEC_VERSION_MAJOR, LIBAVCODEC_VERSION_MINOR) >= (61, 19) { types.insert(.usac) }
        return types
    }

    /// The libavcodec KeyFrameKit is built against, with the FFmpeg release it comes from.
    static var libavcodecVersion: String {
        let major = Int(LIBAVCODEC_VERSION_MAJOR), minor = Int(LIBAVCODEC_VERSION_MINOR)
        let releases: [(major: Int, minor: Int, release: String)] = [
            (58, 134, "4.4"), (59, 18, "5.0"), (59, 37, "5.1"), (60, 3, "6.0"), (60, 31, "6.1"), (61, 3, "7.0"), (61, 19, "7.1"),
        ]
        let release = releases.last { $0.major == major && $0.minor <= minor }?.release
        return "libavcodec \(major).\(minor)" + (release.map { " (FFmpeg \($0))" } ?? "")
    }

    /// Why libavcodec cannot decode a stream of `config`, or `nil` when it can.
    public static func undecodable(_ config: AudioSpecificConfig) -> CodecError? {
        let type = config.audioObjectType
        guard !decodableObjectTypes.contains(type) else { return nil }
        let reason = type == .usac ? "\(libavcodecVersion) has no USAC decoder"
                                   : "the AAC decoder of \(libavcodecVersion) does not decode \(type.name)"
        return undecodableError(config, reason: reason)
    }

    private static func undecodableError(_ config: AudioSpecificConfig, reason: String) -> CodecError {
        let type = config.audioObjectType
        let profile = config.profileName
        let codec = profile == type.name ? "audio object type \(type.rawValue)" : "\(type.name), audio object type \(type.rawValue)"
        return .undecodable(codec: codec, profile: profile, reason: reason)
    }

    /// Decodes one packet (a raw data block, or an ADTS frame with its header) and returns the
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
            try CodecError.check(kf_avcodec_send_packet(context.pointer, p), "decoding AAC")
            try receive()
        } catch {
            guard skipsUndecodablePackets, case .ffmpeg = error,
                  decodedPacketCount > 0 || skippedPacketCount + 1 < Self.undecodableLimit else { throw error }
            skippedPacketCount += 1
            if skippedPacketCount <= Self.toldPacketLimit {
                damage.append(DamageEvent(.skippedBytes(count: Int64(bytes.count)),
                                          message: "AAC packet \(packetCount) (\(bytes.count) bytes) cannot be decoded (\(error)); "
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
                                      message: "\(skippedPacketCount) AAC packets in all could not be decoded and were stepped over "
                                          + "(the first \(Self.toldPacketLimit) are told above)"))
        }
        scratch.removeAll(keepingCapacity: true)
        try CodecError.check(kf_avcodec_send_packet(context.pointer, nil), "flushing the AAC decoder")
        try receive()
        return scratch
    }

    private func receive() throws(CodecError) {
        let f = frame.pointer
        while true {
            let status = kf_avcodec_receive_frame(context.pointer, f)
            if status == kf_averror_eagain() || status == kf_averror_eof() { return }
            try CodecError.check(status, "decoding AAC")
            defer { kf_av_frame_unref(f) }
            let channels = Int(f.pointee.ch_layout.nb_channels)
            let count = Int(f.pointee.nb_samples)
            guard f.pointee.format == AV_SAMPLE_FMT_FLTP.rawValue else {
                throw .unsupportedInput("the AAC decoder gave sample format \(f.pointee.format), expected planar float")
            }
            let format = PCMFormat(sampleRate: Int(f.pointee.sample_rate), channelCount: channels,
                                   sampleFormat: outputSampleFormat, isInterleaved: true)
            if let outputFormat, outputFormat != format {
                throw .unsupportedInput("the stream changes to \(format.sampleRate) Hz, \(channels) channels mid-stream")
            }
            outputFormat = format
            // Which of this frame's samples survive the trim.
            let first = decodedFrameCount
            decodedFrameCount += Int64(count)
            let planes = (0..<channels).map { channel in
                UnsafePointer(UnsafeRawPointer(f.pointee.extended_data[channel]!).assumingMemoryBound(to: Float.self))
            }
            lastFrameCount = count
            deliver(planes: planes, from: first, count: count)
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
extension AACDecoder: Sendable {}
