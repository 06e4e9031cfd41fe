internal import CFFmpeg
internal import MediaCore

/// libavformat and libswresample, opened on first use (see CFFmpeg.h), after libavcodec: only
/// jobs that read containers other than ours or convert PCM load them.
enum FFmpegFormatLibrary {
    /// Opens them once; an error names the library or symbol that is missing.
    static func load() throws(CodecError) {
        guard kf_avformat_load() == 0 else {
            throw .codecNotFound(String(cString: kf_ffmpeg_load_error()))
        }
    }
}

/// Owns a libswresample `SwrContext` that converts PCM from one layout to another: sample
/// format (with triangular dither when the bit depth drops to 16 or 8), interleaving, channel
/// count (with libswresample's default matrix: centre and surrounds at −3 dB, ITU-R BS.775) and
/// rate (with the soxr engine at 28-bit precision).
///
/// Output is always interleaved; input may be planar.
final class SampleConverter {
    private var context: OpaquePointer?
    let inputFormat: PCMFormat
    let outputFormat: PCMFormat
    private var outputPlane: [UInt8] = []

    /// A converter from `input` (whose channel layout is `inputLayout`, or the default order for
    /// its channel count) to `output` (interleaved; the default order for its channel count).
    init(from input: PCMFormat, inputLayout: UnsafePointer<AVChannelLayout>? = nil, to output: PCMFormat,
         inputSampleFormat: AVSampleFormat? = nil) throws(CodecError) {
        try FFmpegFormatLibrary.load()
        guard let inFormat = inputSampleFormat ?? Self.sampleFormat(input.sampleFormat, planar: !input.isInterleaved),
              let outFormat = Self.sampleFormat(output.sampleFormat, planar: false) else {
            throw .unsupportedInput("PCM conversion from \(input.sampleFormat.rawValue) to \(output.sampleFormat.rawValue)")
        }
        guard input.channelCount > 0, output.channelCount > 0, input.sampleRate > 0, output.sampleRate > 0 else {
            throw .unsupportedInput("a PCM layout of \(input.channelCount) channels at \(input.sampleRate) Hz")
        }
        inputFormat = input
        outputFormat = PCMFormat(sampleRate: output.sampleRate, channelCount: output.channelCount,
                                 sampleFormat: output.sampleFormat, isInterleaved: true, channelMask: output.channelMask)
        var inLayout = AVChannelLayout()
        var outLayout = AVChannelLayout()
        defer {
            kf_av_channel_layout_uninit(&inLayout)
            kf_av_channel_layout_uninit(&outLayout)
        }
        if let inputLayout, inputLayout.pointee.nb_channels == Int32(input.channelCount), inputLayout.pointee.order != AV_CHANNEL_ORDER_UNSPEC {
            _ = kf_av_channel_layout_copy(&inLayout, inputLayout)
        } else if !Self.setLayout(&inLayout, mask: input.channelMask, channelCount: input.channelCount) {
            kf_default_channel_layout(&inLayout, Int32(input.channelCount))
        }
        // The same speakers out as in when the count stays (no remix of quad into 4.0), those
        // the output names, else the usual layout of the count (a downmix).
        if Self.setLayout(&outLayout, mask: output.channelMask, channelCount: output.channelCount) {
        } else if output.channelCount == input.channelCount {
            _ = kf_av_channel_layout_copy(&outLayout, &inLayout)
        } else {
            kf_default_channel_layout(&outLayout, Int32(output.channelCount))
        }
        var swr: OpaquePointer?
        try CodecError.check(kf_swr_alloc_set_opts2(&swr, &outLayout, outFormat, Int32(output.sampleRate),
                                                    &inLayout, inFormat, Int32(input.sampleRate), 0, nil),
                             "swr_alloc_set_opts2")
        context = swr
        if input.sampleRate != output.sampleRate {
            try CodecError.check(kf_av_opt_set_int(UnsafeMutableRawPointer(swr), "resampler", Int64(SWR_ENGINE_SOXR.rawValue), 0),
                                 "choosing the soxr resampler")
            try CodecError.check(kf_av_opt_set_double(UnsafeMutableRawPointer(swr), "precision", 28, 0), "setting soxr's precision")
        }
        if Self.reducesDepth(from: input.sampleFormat, to: output.sampleFormat) {
            // Fewer bits out than in: triangular (TPDF) dither, so the rounding error is noise
            // independent of the signal rather than distortion that follows it.
            try CodecError.check(kf_av_opt_set_int(UnsafeMutableRawPointer(swr), "dither_method", Int64(SWR_DITHER_TRIANGULAR.rawValue), 0),
                                 "choosing triangular dither")
        }
        try CodecError.check(kf_swr_init(swr), "swr_init (\(input.sampleRate) Hz \(input.channelCount) ch → \(output.sampleRate) Hz \(output.channelCount) ch)")
    }

    deinit {
        kf_swr_free(&context)
    }

    /// Sets `layout` to the speakers `mask` names when it names `channelCount` of them.
    static func setLayout(_ layout: inout AVChannelLayout, mask: UInt64?, channelCount: Int) -> Bool {
        guard let mask, mask.nonzeroBitCount == channelCount else { return false }
        return kf_av_channel_layout_from_mask(&layout, mask) == 0
    }

    /// Converts `frameCount` frames whose planes (one for interleaved input) start at `planes`;
    /// `nil` drains what the resampler still holds. Returns interleaved bytes of ``outputFormat``.
    func convert(planes: UnsafePointer<UnsafePointer<UInt8>?>?, frameCount: Int) throws(CodecError) -> [UInt8] {
        let inRate = Int64(inputFormat.sampleRate), outRate = Int64(outputFormat.sampleRate)
        let delay = kf_swr_get_delay(context, inRate)
        let capacity = Int((delay + Int64(frameCount)) * outRate / inRate) + 64
        let bytesPerFrame = outputFormat.bytesPerFrame
        var output = [UInt8](repeating: 0, count: capacity * bytesPerFrame)
        let produced = try output.withUnsafeMutableBufferPointer { buffer throws(CodecError) -> Int32 in
            var plane: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return try withUnsafeMutablePointer(to: &plane) { planePointer throws(CodecError) -> Int32 in
                let input = UnsafeMutablePointer(mutating: planes)
                return try CodecError.check(kf_swr_convert(context, planePointer, Int32(capacity), input, Int32(frameCount)), "swr_convert")
            }
        }
        output.removeLast(output.count - Int(produced) * bytesPerFrame)
        return output
    }

    /// Converts interleaved `bytes` of ``inputFormat``.
    func convert(interleaved bytes: [UInt8]) throws(CodecError) -> [UInt8] {
        let frames = bytes.count / max(inputFormat.bytesPerFrame, 1)
        return try bytes.withUnsafeBufferPointer { buffer throws(CodecError) -> [UInt8] in
            var plane: UnsafePointer<UInt8>? = buffer.baseAddress
            return try withUnsafePointer(to: &plane) { planes throws(CodecError) -> [UInt8] in
                try convert(planes: planes, frameCount: frames)
            }
        }
    }

    /// What the resampler still holds, at the end of the stream.
    func drain() throws(CodecError) -> [UInt8] {
        try convert(planes: nil, frameCount: 0)
    }

    /// Whether `output` holds fewer bits than `input` can carry, so that converting needs dither:
    /// 8- or 16-bit integer out of float or wider integer. (A 24-bit output is made as 32-bit
    /// and narrowed by rounding, which loses nothing from a 24-bit source.)
    static func reducesDepth(from input: PCMSampleFormat, to output: PCMSampleFormat) -> Bool {
        func bits(_ format: PCMSampleFormat) -> Int {
            switch format {
            case .uint8: 8
            case .int16: 16
            case .int24: 24
            case .int32: 32
            case .float32, .float64: 64
            }
        }
        return (output == .int16 || output == .uint8) && bits(input) > bits(output)
    }

    /// libavutil's sample format for ours (no packed 24-bit: callers widen it to 32 first).
    static func sampleFormat(_ format: PCMSampleFormat, planar: Bool) -> AVSampleFormat? {
        switch (format, planar) {
        case (.uint8, false): AV_SAMPLE_FMT_U8
        case (.uint8, true): AV_SAMPLE_FMT_U8P
        case (.int16, false): AV_SAMPLE_FMT_S16
        case (.int16, true): AV_SAMPLE_FMT_S16P
        case (.int32, false): AV_SAMPLE_FMT_S32
        case (.int32, true): AV_SAMPLE_FMT_S32P
        case (.float32, false): AV_SAMPLE_FMT_FLT
        case (.float32, true): AV_SAMPLE_FMT_FLTP
        case (.float64, false): AV_SAMPLE_FMT_DBL
        case (.float64, true): AV_SAMPLE_FMT_DBLP
        case (.int24, _): nil
        }
    }

    /// Our sample format for libavutil's, and whether it is planar; `nil` for one we do not name.
    static func sampleFormat(_ format: AVSampleFormat) -> (PCMSampleFormat, planar: Bool)? {
        switch format {
        case AV_SAMPLE_FMT_U8: (.uint8, false)
        case AV_SAMPLE_FMT_U8P: (.uint8, true)
        case AV_SAMPLE_FMT_S16: (.int16, false)
        case AV_SAMPLE_FMT_S16P: (.int16, true)
        case AV_SAMPLE_FMT_S32: (.int32, false)
        case AV_SAMPLE_FMT_S32P: (.int32, true)
        case AV_SAMPLE_FMT_FLT: (.float32, false)
        case AV_SAMPLE_FMT_FLTP: (.float32, true)
        case AV_SAMPLE_FMT_DBL: (.float64, false)
        case AV_SAMPLE_FMT_DBLP: (.float64, true)
        default: nil
        }
    }

    /// For a decoder's sample format that ``sampleFormat(_:)`` does not name but libswresample
    /// converts (64-bit integers, from the `pcm_s64le` decoder): the type of the same width that
    /// stands for it in a ``/MediaCore/PCMFormat`` (the bytes are never read as that type), and
    /// whether it is planar.
    static func stand_in(for format: AVSampleFormat) -> (PCMSampleFormat, planar: Bool)? {
        switch format {
        case AV_SAMPLE_FMT_S64: (.float64, false)
        case AV_SAMPLE_FMT_S64P: (.float64, true)
        default: nil
        }
    }
}
