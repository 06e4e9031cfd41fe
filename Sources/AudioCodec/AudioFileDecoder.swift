internal import CFFmpeg
public import MediaCore
public import SystemPackage

/// The audio of any file FFmpeg reads — FLAC, MP3, Ogg Vorbis, Opus in Ogg or WebM/Matroska,
/// ALAC or AAC in MP4/M4A/CAF, AIFF, WAV/W64/RF64, the audio track of a video — demuxed by
/// libavformat, decoded by libavcodec and converted by libswresample, as a ``/MediaCore/PCMSource``.
///
/// What is delivered is what `ffmpeg -i FILE` decodes: libavcodec drops the decoder delay and
/// padding the file declares (MP3's LAME/Xing delay and padding, Opus pre-skip and end trimming,
/// Vorbis end trimming by the last granule position, an MP4 edit list), so the frame count is the
/// source's own. libavformat is loaded on first use (dlopen), so jobs that never read such a file
/// never load it.
public final class AudioFileDecoder {
    /// The file read.
    public let path: FilePath
    /// The codec, as libavcodec names it (`mp3`, `flac`, `opus`, `vorbis`, `alac`, …).
    public let codecName: String
    /// The codec's identifier, where KeyFrameKit has one (`AudioCodecID(libavcodecName:)`).
    public var codec: AudioCodecID? { AudioCodecID(libavcodecName: codecName) }
    /// The container, as libavformat names it (`mp3`, `flac`, `ogg`, `matroska,webm`, …).
    public let containerName: String
    /// The decoded layout before conversion: the stream's rate and channels.
    public let sourceFormat: PCMFormat
    /// The layout delivered: interleaved, at the rate, channel count and sample type asked for.
    public let outputFormat: PCMFormat
    /// The stream's length in seconds, when the container says.
    public let durationSeconds: Double?
    /// The file's tags by libavformat's generic keys (`title`, `artist`, `album_artist`,
    /// `track`, …, lower-cased), from the container and then the audio stream: Vorbis comments,
    /// ID3v2 frames, RIFF INFO, iTunes atoms.
    public let tags: [String: String]
    /// The cover picture the file carries (an attached picture: ID3v2 `APIC`, FLAC `PICTURE`,
    /// `METADATA_BLOCK_PICTURE`, `covr`), as its encoded bytes.
    public let attachedPicture: [UInt8]?
    /// Source frames decoded so far (after the decoder's trimming).
    public private(set) var decodedFrameCount: Int64 = 0

    private var formatContext: UnsafeMutablePointer<AVFormatContext>?
    private let streamIndex: Int32
    private let context: CodecContext
    private let frame: Frame
    private let packet: Packet
    private var converter: SampleConverter?
    private var declaredFrameCount: Int64?
    /// The longest packet read, in the stream's time base (ALAC in CAF: 4096 samples).
    private var packetFrames: Int64 = 0
    private var lastPacketTime: Int64?
    /// Whether the stream is PCM (its container's length is exact to the frame).
    private var isPCM = false
    private var inputEnded = false
    private var finished = false
    private var damage: [DamageEvent] = []
    /// Whether a packet was skipped as damage (``takeDamage()`` empties ``damage``).
    private var damagedBefore = false
    /// Whether a packet decoded after one skipped as damage: samples lost in the middle, not at
    /// the end.
    private var damagedInTheMiddle = false
    /// Where the last packet ended, in the stream's time base, when its duration is known.
    private var nextPacketTime: Int64?
    private var lastSeconds: Double = 0

    /// Opens `path` and its best audio stream.
    ///
    /// - Parameters:
    ///   - path: the file to read.
    ///   - sampleRate: the rate to deliver (resampled with soxr), or `nil` for the stream's.
    ///   - channelCount: the channels to deliver (downmixed with ITU-R BS.775 coefficients), or
    ///     `nil` for the stream's.
    ///   - sampleFormat: the sample type to deliver, or `nil` for the decoder's own (16-bit FLAC
    ///     gives 16-bit samples, 24-bit FLAC 32-bit ones, MP3 and AAC float), interleaved.
    ///   - skippingInitialBytes: where the stream starts (libavformat's `skip_initial_bytes`):
    ///     for an MP3 whose first frame follows its ID3v2 tag after stray bytes, the offset of
    ///     that frame, so that the MP3 reader finds the Xing/LAME header there and honours the
    ///     encoder delay and padding it gives (FFmpeg, reading from the tag's end, misses it and
    ///     decodes the header frame as audio). The tags and cover are still read from the whole
    ///     file.
    /// - Throws: ``CodecError/unsupportedInput(_:)`` naming what is wrong: not a media file, no
    ///   audio stream, no decoder, no channels; ``CodecError/ffmpeg(operation:code:message:)``.
    public init(path: FilePath, sampleRate: Int? = nil, channelCount: Int? = nil,
                sampleFormat: PCMSampleFormat? = nil, skippingInitialBytes: Int64 = 0) throws(CodecError) {
        try FFmpegFormatLibrary.load()
        self.path = path
        // An empty file is said to be one (libavformat would only find no stream in it).
        if let descriptor = try? FileDescriptor.open(path, .readOnly) {
            let size = try? descriptor.seek(offset: 0, from: .end)
            try? descriptor.close()
            if size == 0 { throw .unsupportedInput("the file is empty") }
        }
        var wholeFileMetadata: (tags: [String: String], picture: [UInt8]?)?
        var options: OpaquePointer?
        if skippingInitialBytes > 0 {
            var whole: UnsafeMutablePointer<AVFormatContext>?
            if kf_avformat_open_input(&whole, path.string, nil, nil) >= 0, let whole {
                wholeFileMetadata = Self.metadata(of: whole, streamIndex: nil)
            }
            kf_avformat_close_input(&whole)
            _ = kf_av_dict_set(&options, "skip_initial_bytes", String(skippingInitialBytes), 0)
        }
        defer { kf_av_dict_free(&options) }
        var opened: UnsafeMutablePointer<AVFormatContext>?
        let openCode = kf_avformat_open_input(&opened, path.string, nil, &options)
        guard openCode >= 0, let opened else {
            // A file that cannot be opened at all keeps the system's reason; anything else is
            // bytes libavformat does not recognise as a media file.
            if [ENOENT, EACCES, EISDIR, ENOTDIR].map({ -$0 }).contains(openCode) {
                throw .ffmpeg(operation: "opening", code: openCode, message: CodecError.message(for: openCode))
            }
            throw .unsupportedInput("not a media file libavformat recognises (\(CodecError.message(for: openCode)))")
        }
        formatContext = opened
        do throws(CodecError) {
            try CodecError.check(kf_avformat_find_stream_info(opened, nil), "reading the stream information")
            var decoder: UnsafePointer<AVCodec>?
            let index = kf_av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, &decoder, 0)
            if index == kf_averror_stream_not_found() { throw .unsupportedInput("the file has no audio stream") }
            if index == kf_averror_decoder_not_found() {
                throw .unsupportedInput("libavcodec has no decoder for the audio stream")
            }
            try CodecError.check(index, "finding the audio stream")
            guard let decoder, let stream = opened.pointee.streams[Int(index)] else {
                throw .unsupportedInput("libavcodec has no decoder for the audio stream")
            }
            streamIndex = index
            containerName = String(cString: opened.pointee.iformat.pointee.name)
            codecName = String(cString: kf_avcodec_get_name(stream.pointee.codecpar.pointee.codec_id))
            let parameters = stream.pointee.codecpar.pointee
            guard parameters.ch_layout.nb_channels > 0 else { throw .unsupportedInput("the \(codecName) stream has no channels") }
            guard parameters.sample_rate > 0 else { throw .unsupportedInput("the \(codecName) stream has no sample rate") }
            context = try CodecContext(codec: decoder)
            try CodecError.check(kf_avcodec_parameters_to_context(context.pointer, stream.pointee.codecpar), "avcodec_parameters_to_context")
            context.pointer.pointee.pkt_timebase = stream.pointee.time_base
            // FLAC frames checked against their CRC-16: one that fails is damage, skipped and
            // reported, not decoded to noise (AV_EF_CRCCHECK 1 << 0, and AV_EF_EXPLODE 1 << 3,
            // without which libavcodec's FLAC decoder only logs the mismatch).
            if codecName == "flac" { context.pointer.pointee.err_recognition |= 1 << 0 | 1 << 3 }
            try context.open()
            frame = try Frame()
            packet = try Packet()
            let rate = Int(parameters.sample_rate)
            let channels = Int(parameters.ch_layout.nb_channels)
            let decodedType = SampleConverter.sampleFormat(context.pointer.pointee.sample_fmt)
            // 64-bit integers (pcm_s64le) are delivered as 64-bit float, which holds them better
            // than any other type here.
            let wide = SampleConverter.stand_in(for: context.pointer.pointee.sample_fmt) != nil
            sourceFormat = PCMFormat(sampleRate: rate, channelCount: channels, sampleFormat: decodedType?.0 ?? (wide ? .float64 : .float32),
                                     isInterleaved: !(decodedType?.planar ?? true))
            // The source's speakers, when it names them and the channels are not remixed.
            let layout = parameters.ch_layout
            let mask: UInt64? = layout.order == AV_CHANNEL_ORDER_NATIVE && (channelCount == nil || channelCount == channels)
                && layout.u.mask.nonzeroBitCount == channels ? layout.u.mask : nil
            outputFormat = PCMFormat(sampleRate: sampleRate ?? rate, channelCount: channelCount ?? channels,
                                     sampleFormat: sampleFormat ?? sourceFormat.sampleFormat, isInterleaved: true, channelMask: mask)
            let found = wholeFileMetadata ?? Self.metadata(of: opened, streamIndex: Int(index))
            tags = found.tags
            attachedPicture = found.picture
            let timeBase = stream.pointee.time_base
            if stream.pointee.duration != kf_nopts_value(), stream.pointee.duration > 0, timeBase.den > 0 {
                let seconds = Double(stream.pointee.duration) * Double(timeBase.num) / Double(timeBase.den)
                durationSeconds = seconds
                // Containers that state the exact length of a lossless stream (FLAC's
                // STREAMINFO, a WAV/W64/AIFF/CAF data size, an MP4 sample table, a WavPack
                // header): fewer frames is a truncated file. Elsewhere (AVI, Matroska, …) the
                // length may be an estimate, and is not held against the file.
                let exactContainers: Set<String> = ["flac", "wav", "w64", "aiff", "caf", "mov,mp4,m4a,3gp,3g2,mj2", "wv"]
                isPCM = parameters.codec_id.rawValue >= AV_CODEC_ID_PCM_S16LE.rawValue && parameters.codec_id.rawValue < AV_CODEC_ID_ADPCM_IMA_QT.rawValue
                let lossless = [AV_CODEC_ID_FLAC, AV_CODEC_ID_ALAC, AV_CODEC_ID_WAVPACK].contains(parameters.codec_id) || isPCM
                if lossless, exactContainers.contains(containerName), opened.pointee.duration_estimation_method == AVFMT_DURATION_FROM_STREAM {
                    declaredFrameCount = Int64((seconds * Double(rate)).rounded())
                }
            } else if opened.pointee.duration > 0 {
                durationSeconds = Double(opened.pointee.duration) / Double(AV_TIME_BASE)
            } else {
                durationSeconds = nil
            }
        } catch {
            kf_avformat_close_input(&formatContext)
            throw error
        }
    }

    deinit {
        kf_avformat_close_input(&formatContext)
    }

    /// The tags of the container and then of the audio stream (by lower-cased key, the first
    /// one of a key kept), and the first attached picture.
    private static func metadata(of context: UnsafeMutablePointer<AVFormatContext>,
                                 streamIndex: Int?) -> (tags: [String: String], picture: [UInt8]?) {
        var found: [String: String] = [:]
        var dictionaries = [context.pointee.metadata]
        let streamCount = Int(context.pointee.nb_streams)
        if let streamIndex, streamIndex < streamCount, let stream = context.pointee.streams[streamIndex] {
            dictionaries.append(stream.pointee.metadata)
        } else if streamIndex == nil {
            for index in 0..<streamCount {
                if let stream = context.pointee.streams[index], stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
                    dictionaries.append(stream.pointee.metadata)
                    break
                }
            }
        }
        for dictionary in dictionaries {
            var entry: UnsafeMutablePointer<AVDictionaryEntry>?
            while let next = kf_av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX) {
                entry = next
                let key = String(cString: next.pointee.key).lowercased()
                if found[key] == nil { found[key] = String(cString: next.pointee.value) }
            }
        }
        var picture: [UInt8]?
        for index in 0..<streamCount {
            guard let candidate = context.pointee.streams[index], candidate.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0,
                  let data = candidate.pointee.attached_pic.data, candidate.pointee.attached_pic.size > 0 else { continue }
            picture = Array(UnsafeBufferPointer(start: data, count: Int(candidate.pointee.attached_pic.size)))
            break
        }
        return (found, picture)
    }

    /// The next decoded and converted frames, `nil` at the end.
    ///
    /// - Throws: ``CodecError`` for a read error, or for a lossless stream that ends before the
    ///   length its container declares (a truncated file).
    public func nextBuffer() throws(CodecError) -> PCMBuffer? {
        while !finished {
            let received = kf_avcodec_receive_frame(context.pointer, frame.pointer)
            if received >= 0 {
                defer { kf_av_frame_unref(frame.pointer) }
                let bytes = try convert(frame.pointer)
                if !bytes.isEmpty { return PCMBuffer(format: outputFormat, bytes: bytes) }
                continue
            }
            if received == kf_averror_eof() {
                finished = true
                try checkLength()
                let rest = try converter?.drain() ?? []
                return rest.isEmpty ? nil : PCMBuffer(format: outputFormat, bytes: rest)
            }
            if received == kf_averror_invaliddata() {
                // A frame the decoder could not make: skipped, as ffmpeg skips it, and reported.
                damage.append(DamageEvent(.skippedBytes(count: 0), message: "a damaged \(codecName) frame was skipped (\(CodecError.message(for: received)))"))
                continue
            }
            guard received == kf_averror_eagain() else {
                try CodecError.check(received, "decoding \(codecName)")
                continue
            }
            guard !inputEnded else { throw .invalidState("the \(codecName) decoder wants input after it was flushed") }
            try sendNextPacket()
        }
        return nil
    }

    /// Reads the next packet of the stream and gives it to the decoder (or ends its input).
    private func sendNextPacket() throws(CodecError) {
        guard !inputEnded else { return }
        while true {
            let read = kf_av_read_frame(formatContext, packet.pointer)
            if read == kf_averror_eof() || endsAtFileEnd(read) {
                inputEnded = true
                try CodecError.check(kf_avcodec_send_packet(context.pointer, nil), "flushing the \(codecName) decoder")
                return
            }
            try CodecError.check(read, "reading \(containerName)")
            defer { kf_av_packet_unref(packet.pointer) }
            guard packet.pointer.pointee.stream_index == streamIndex else { continue }
            let position = packet.pointer.pointee.pos
            // The longest packet: its duration, else the step between packets' times.
            let pts = packet.pointer.pointee.pts
            if pts != kf_nopts_value() {
                if let last = lastPacketTime { packetFrames = max(packetFrames, pts.subtractingReportingOverflow(last).partialValue) }
                // Native FLAC's times are its frame headers' sample numbers: one past where the
                // last frame ended means frames were lost to damage (the parser steps over a
                // frame that fails its CRC), not that the file ends early.
                if containerName == "flac", let nextPacketTime, pts > nextPacketTime {
                    damagedBefore = true
                    damage.append(DamageEvent(.skippedBytes(count: 0), at: position >= 0 ? position : nil,
                                              message: "\(pts - nextPacketTime) samples of damaged FLAC frames before byte \(position) were skipped"))
                }
                lastPacketTime = pts
                let duration = packet.pointer.pointee.duration
                nextPacketTime = duration > 0 ? pts.addingReportingOverflow(duration).partialValue : nil
            }
            packetFrames = max(packetFrames, packet.pointer.pointee.duration)
            let sent = kf_avcodec_send_packet(context.pointer, packet.pointer)
            if sent == kf_averror_invaliddata() {
                // A damaged packet: skipped, as ffmpeg skips it, and reported.
                damagedBefore = true
                damage.append(DamageEvent(.skippedBytes(count: Int64(packet.pointer.pointee.size)), at: position >= 0 ? position : nil,
                                          message: "a damaged \(codecName) packet\(position >= 0 ? " at byte \(position)" : "") was skipped (\(CodecError.message(for: sent)))"))
                continue
            }
            try CodecError.check(sent, "decoding \(codecName)")
            if damagedBefore { damagedInTheMiddle = true }
            return
        }
    }

    /// Whether `code` is the I/O error some demuxers (wsaud, roq) answer, instead of end of
    /// file, once they have read the file's last byte: ffmpeg ends there too. Noted as damage.
    private func endsAtFileEnd(_ code: Int32) -> Bool {
        guard code == kf_averror_eio(), formatContext?.pointee.pb?.pointee.eof_reached ?? 0 != 0 else { return false }
        damage.append(DamageEvent(.ignored, message: "\(containerName): the reader answered an I/O error at the end of the file; taken as its end"))
        return true
    }

    private func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws(CodecError) -> [UInt8] {
        let count = Int(frame.pointee.nb_samples)
        guard count > 0 else { return [] }
        decodedFrameCount += Int64(count)
        if frame.pointee.pts != kf_nopts_value() {
            let base = context.pointer.pointee.pkt_timebase
            if base.den > 0 { lastSeconds = Double(frame.pointee.pts) * Double(base.num) / Double(base.den) }
        }
        let frameFormat = AVSampleFormat(rawValue: frame.pointee.format)
        let standIn = SampleConverter.stand_in(for: frameFormat)
        if converter == nil {
            guard let (type, planar) = SampleConverter.sampleFormat(frameFormat) ?? standIn else {
                throw .unsupportedInput("the \(codecName) decoder's sample format \(frame.pointee.format)")
            }
            let input = PCMFormat(sampleRate: Int(frame.pointee.sample_rate), channelCount: Int(frame.pointee.ch_layout.nb_channels),
                                  sampleFormat: type, isInterleaved: !planar)
            converter = try withUnsafePointer(to: &frame.pointee.ch_layout) { layout throws(CodecError) in
                try SampleConverter(from: input, inputLayout: layout, to: outputFormat, inputSampleFormat: standIn == nil ? nil : frameFormat)
            }
        }
        let type = SampleConverter.sampleFormat(frameFormat) ?? standIn
        guard let converter, Int(frame.pointee.ch_layout.nb_channels) == converter.inputFormat.channelCount,
              Int(frame.pointee.sample_rate) == converter.inputFormat.sampleRate,
              let type, type.0 == converter.inputFormat.sampleFormat, type.planar == !converter.inputFormat.isInterleaved else {
            throw .unsupportedInput("the \(codecName) stream changes its sample rate, channels or sample format mid-stream")
        }
        let planes = UnsafeRawPointer(frame.pointee.extended_data).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        return try converter.convert(planes: planes, frameCount: count)
    }

    private func checkLength() throws(CodecError) {
        guard let declared = declaredFrameCount, decodedFrameCount < declared else { return }
        // A CAF of a packetized codec declares whole packets (its pakt: packets × frames per
        // packet, as FFmpeg's CAF muxer writes it), longer than the decode by less than one
        // packet when the last packet is short: that is padding, not a truncation. (PCM in CAF
        // declares its exact length.)
        let timeBase = formatContext.flatMap { $0.pointee.streams[Int(streamIndex)]?.pointee.time_base }
        let longest = timeBase.map { base -> Int64 in
            guard base.den > 0 else { return 0 }
            let (scaled, overflow) = packetFrames.multipliedReportingOverflow(by: Int64(base.num) * Int64(sourceFormat.sampleRate))
            return overflow ? 0 : scaled / Int64(base.den)
        } ?? 0
        if containerName == "caf", !isPCM, longest > 0, declared - decodedFrameCount < longest { return }
        // Packets skipped as damage explain the samples missing: a salvage, told as damage.
        guard !damagedInTheMiddle else {
            damage.append(DamageEvent(.truncated(declared: declared, available: decodedFrameCount),
                                      message: "the \(codecName) stream decodes to \(decodedFrameCount) of the \(declared) samples its header declares: "
                                          + "damaged packets were skipped"))
            return
        }
        throw .unsupportedInput("the \(codecName) stream ends after \(decodedFrameCount) of the \(declared) samples its header declares (a truncated file)")
    }
}

extension AudioFileDecoder: PCMSource {
    /// ``outputFormat``.
    public var pcmFormat: PCMFormat? { outputFormat }

    /// ``nextBuffer()``.
    public func next() throws(CodecError) -> PCMBuffer? { try nextBuffer() }

    /// Seconds decoded, out of the container's duration when it gives one.
    public var progress: MediaProgress { MediaProgress(mediaSeconds: lastSeconds, totalSeconds: durationSeconds) }

    /// Damaged packets skipped since the last call.
    public func takeDamage() -> [DamageEvent] {
        defer { damage.removeAll() }
        return damage
    }
}

@available(*, unavailable)
extension AudioFileDecoder: Sendable {}

extension AudioFileDecoder {
    /// What libavformat says of a file's audio without decoding it: its container, codec,
    /// layout, packets and length (`keyframe probe` of a file KeyFrameKit's own readers do not
    /// read: MP3, FLAC, Ogg, an ADPCM WAV, …).
    public struct StreamSummary: Sendable, Hashable {
        /// The container, as libavformat names it (`mp3`, `flac`, `ogg`, `wav`, …).
        public var containerName: String
        /// The codec, as libavcodec names it (`mp3`, `flac`, `vorbis`, `adpcm_ima_wav`, …).
        public var codecName: String
        /// The codec's identifier, where KeyFrameKit has one.
        public var codec: AudioCodecID? { AudioCodecID(libavcodecName: codecName) }
        /// The stream's sample rate in Hz.
        public var sampleRate: Int
        /// The stream's channels.
        public var channelCount: Int
        /// Packets of the audio stream, counted by reading them.
        public var packetCount: Int
        /// Seconds: the stream's length as the container gives it (an Ogg's last granule, a
        /// Xing header's frame count, a WAV's data size), else — when there is none, or it is
        /// only estimated from the bitrate (an MP3 without a Xing header) — the packets'
        /// durations added up.
        public var duration: Double
        /// Bytes of the audio stream's packets.
        public var byteCount: Int64
        /// Samples of encoder delay at the start, when the container declares them in the codec
        /// parameters (an Opus pre-skip); an MP3's LAME delay is applied by the decoder but not
        /// declared there.
        public var priming: Int?
        /// The tags, as ``AudioFileDecoder/tags``.
        public var tags: [String: String]
        /// Frames a PCM stream holds, when its container states them exactly (a WAV, W64, AIFF
        /// or CAF data size): what a decode gives.
        public var declaredFrames: Int64?
    }

    /// Reads the packets of the best audio stream of `path` (no decoding) and sums them up;
    /// `skippingInitialBytes` as for ``init(path:sampleRate:channelCount:sampleFormat:skippingInitialBytes:)``.
    ///
    /// - Throws: ``CodecError/unsupportedInput(_:)`` for a file libavformat does not read or
    ///   that has no audio stream; ``CodecError/ffmpeg(operation:code:message:)`` for a read
    ///   error.
    public static func summary(of path: FilePath, skippingInitialBytes: Int64 = 0) throws(CodecError) -> StreamSummary {
        let decoder = try AudioFileDecoder(path: path, skippingInitialBytes: skippingInitialBytes)
        guard let context = decoder.formatContext, let stream = context.pointee.streams[Int(decoder.streamIndex)] else {
            throw .invalidState("the file was closed")
        }
        let parameters = stream.pointee.codecpar.pointee
        var packets = 0
        var bytes: Int64 = 0
        var ticks: Int64 = 0
        while true {
            let read = kf_av_read_frame(context, decoder.packet.pointer)
            if read == kf_averror_eof() || decoder.endsAtFileEnd(read) { break }
            try CodecError.check(read, "reading \(decoder.containerName)")
            defer { kf_av_packet_unref(decoder.packet.pointer) }
            guard decoder.packet.pointer.pointee.stream_index == decoder.streamIndex else { continue }
            packets += 1
            bytes += Int64(decoder.packet.pointer.pointee.size)
            ticks = ticks.addingReportingOverflow(max(0, decoder.packet.pointer.pointee.duration)).partialValue
        }
        let base = stream.pointee.time_base
        let fromPackets = base.den > 0 ? Double(ticks) * Double(base.num) / Double(base.den) : 0
        let priming = parameters.initial_padding > 0 ? Int(parameters.initial_padding) : nil
        return StreamSummary(containerName: decoder.containerName, codecName: decoder.codecName,
                             sampleRate: decoder.sourceFormat.sampleRate, channelCount: decoder.sourceFormat.channelCount,
                             packetCount: packets,
                             duration: context.pointee.duration_estimation_method == AVFMT_DURATION_FROM_BITRATE && fromPackets > 0
                                 ? fromPackets : (decoder.durationSeconds ?? fromPackets),
                             byteCount: bytes, priming: priming, tags: decoder.tags, declaredFrames: decoder.isPCM ? decoder.declaredFrameCount : nil)
    }
}

extension AudioFileDecoder {
    /// What libavformat finds in a container's headers, its packets neither counted nor read
    /// past what it needs to know the stream (``headerSummary(of:named:)``).
    public struct HeaderSummary: Sendable, Hashable {
        /// The container, as libavformat names it (`mp3`, `flac`, `ogg`, `wav`, …).
        public var containerName: String
        /// The codec, as libavcodec names it (`mp3`, `flac`, `opus`, `pcm_s16le`, …).
        public var codecName: String
        /// The codec's identifier, where KeyFrameKit has one.
        public var codec: AudioCodecID? { AudioCodecID(libavcodecName: codecName) }
        /// The stream's sample rate in Hz.
        public var sampleRate: Int
        /// The stream's channels.
        public var channelCount: Int
        /// Seconds: the stream's length as the container declares it (FLAC's STREAMINFO, a WAV's
        /// data size, an MP3's Xing frame count, an Ogg stream's last granule position, found by
        /// reading the file's end), or as libavformat estimates it from the bitrate and the
        /// file's size when it declares none (``durationIsEstimated``); `nil` when neither is
        /// known.
        public var duration: Double?
        /// Whether ``duration`` is libavformat's estimate from the bitrate (an MP3 without a
        /// Xing header, ADTS) rather than a length the container declares.
        public var durationIsEstimated: Bool
        /// Bits per second: the stream's as its headers say (an MP3 frame header, PCM's rate
        /// times its sample size), else the file's size over its duration; `nil` when unknown.
        public var bitrate: Int?
        /// Samples of encoder delay at the start, when the container declares them in the codec
        /// parameters (an Opus pre-skip).
        public var priming: Int?
        /// The tags, as ``AudioFileDecoder/tags``: the container's and then the audio stream's.
        public var tags: [String: String]
        /// Frames a PCM stream holds, when its container states them exactly (a WAV, W64, AIFF
        /// or CAF data size): what a decode gives.
        public var declaredFrames: Int64?
    }

    /// Describes the best audio stream of the bytes `source` holds from their headers alone:
    /// libavformat reads through `source` (seeking where the container needs it: an Ogg
    /// stream's last page, tags at a file's end) only as far as it must to open the container
    /// and know the stream, and no packet is counted. Made for sources whose bytes are dear,
    /// such as an object in a store read in ranges.
    ///
    /// - Parameters:
    ///   - source: the file's bytes.
    ///   - name: what messages call it.
    /// - Throws: ``CodecError/unsupportedInput(_:)`` for bytes libavformat does not read or
    ///   that hold no audio stream; ``CodecError/ffmpeg(operation:code:message:)`` for a read
    ///   of `source` that failed, with the source's own error as its message.
    public static func headerSummary(of source: any RandomAccessByteSource, named name: String) throws(CodecError) -> HeaderSummary {
        try FFmpegFormatLibrary.load()
        guard source.byteCount > 0 else { throw .unsupportedInput("\(name) is empty") }
        let input = CallbackInput(source)
        let opaque = Unmanaged.passRetained(input).toOpaque()
        defer { Unmanaged<CallbackInput>.fromOpaque(opaque).release() }
        let readAt: @convention(c) (UnsafeMutableRawPointer?, Int64, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = { opaque, offset, buffer, count in
            guard let opaque, let buffer, count > 0 else { return kf_averror_eio() }
            let input = Unmanaged<CallbackInput>.fromOpaque(opaque).takeUnretainedValue()
            do throws(ByteStreamError) {
                let bytes = try input.source.read(at: offset, count: Int(count))
                let copied = min(bytes.count, Int(count))
                bytes.withUnsafeBufferPointer { read in
                    if let base = read.baseAddress, copied > 0 { buffer.update(from: base, count: copied) }
                }
                return Int32(copied)
            } catch {
                // libavformat sees an I/O error; the source's own words are thrown after.
                if input.error == nil { input.error = error }
                return kf_averror_eio()
            }
        }
        // The bytes are all there is: a container that names other files (a playlist, an
        // ffconcat list) opens none of them, local or remote (no protocol is allowed).
        var options: OpaquePointer?
        _ = kf_av_dict_set(&options, "protocol_whitelist", "none", 0)
        defer { kf_av_dict_free(&options) }
        var context: UnsafeMutablePointer<AVFormatContext>?
        let openCode = kf_avformat_open_callbacks(&context, opaque, source.byteCount, readAt, &options)
        defer { kf_avformat_close_callbacks(&context) }
        if let error = input.error { throw .ffmpeg(operation: "reading \(name)", code: kf_averror_eio(), message: "\(error)") }
        guard openCode >= 0, let opened = context else {
            throw .unsupportedInput("\(name) is not a media file libavformat recognises (\(CodecError.message(for: openCode)))")
        }
        let infoCode = kf_avformat_find_stream_info(opened, nil)
        if let error = input.error { throw .ffmpeg(operation: "reading \(name)", code: kf_averror_eio(), message: "\(error)") }
        try CodecError.check(infoCode, "reading the stream information of \(name)")
        let index = kf_av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        if index == kf_averror_stream_not_found() { throw .unsupportedInput("\(name) has no audio stream") }
        try CodecError.check(index, "finding the audio stream of \(name)")
        guard let stream = opened.pointee.streams[Int(index)] else { throw .unsupportedInput("\(name) has no audio stream") }
        let parameters = stream.pointee.codecpar.pointee
        let codecName = String(cString: kf_avcodec_get_name(parameters.codec_id))
        guard parameters.ch_layout.nb_channels > 0 else { throw .unsupportedInput("the \(codecName) stream of \(name) has no channels") }
        guard parameters.sample_rate > 0 else { throw .unsupportedInput("the \(codecName) stream of \(name) has no sample rate") }
        let timeBase = stream.pointee.time_base
        var duration: Double?
        if stream.pointee.duration != kf_nopts_value(), stream.pointee.duration > 0, timeBase.den > 0 {
            duration = Double(stream.pointee.duration) * Double(timeBase.num) / Double(timeBase.den)
        } else if opened.pointee.duration != kf_nopts_value(), opened.pointee.duration > 0 {
            duration = Double(opened.pointee.duration) / Double(AV_TIME_BASE)
        }
        let bitrate = parameters.bit_rate > 0 ? parameters.bit_rate : opened.pointee.bit_rate
        let containerName = String(cString: opened.pointee.iformat.pointee.name)
        // PCM whose container states its data size: the frames are the header's, to the frame.
        let isPCM = parameters.codec_id.rawValue >= AV_CODEC_ID_PCM_S16LE.rawValue && parameters.codec_id.rawValue < AV_CODEC_ID_ADPCM_IMA_QT.rawValue
        let declaredFrames = isPCM && ["wav", "w64", "aiff", "caf"].contains(containerName)
            && opened.pointee.duration_estimation_method == AVFMT_DURATION_FROM_STREAM ? duration.map { Int64(($0 * Double(parameters.sample_rate)).rounded()) } : nil
        return HeaderSummary(containerName: containerName, codecName: codecName,
                             sampleRate: Int(parameters.sample_rate), channelCount: Int(parameters.ch_layout.nb_channels),
                             duration: duration, durationIsEstimated: opened.pointee.duration_estimation_method == AVFMT_DURATION_FROM_BITRATE,
                             bitrate: bitrate > 0 ? Int(bitrate) : nil,
                             priming: parameters.initial_padding > 0 ? Int(parameters.initial_padding) : nil,
                             tags: metadata(of: opened, streamIndex: Int(index)).tags, declaredFrames: declaredFrames)
    }

    /// The source libavformat reads through ``headerSummary(of:named:)``'s callbacks, and the
    /// first error a read of it threw.
    private final class CallbackInput {
        let source: any RandomAccessByteSource
        var error: ByteStreamError?

        init(_ source: any RandomAccessByteSource) {
            self.source = source
        }
    }
}
