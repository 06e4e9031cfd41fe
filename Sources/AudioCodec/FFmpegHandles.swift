internal import CFFmpeg

/// Owns an `AVCodecContext`, freed in `deinit`.
final class CodecContext {
    let pointer: UnsafeMutablePointer<AVCodecContext>
    let codec: UnsafePointer<AVCodec>

    init(codec: UnsafePointer<AVCodec>) throws(CodecError) {
        try FFmpegLibrary.load()
        guard let context = kf_avcodec_alloc_context3(codec) else {
            throw .ffmpeg(operation: "avcodec_alloc_context3", code: kf_averror_enomem(), message: "out of memory")
        }
        self.pointer = context
        self.codec = codec
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = pointer
        kf_avcodec_free_context(&context)
    }

    /// Opens the codec with the parameters set on the context.
    func open() throws(CodecError) {
        try CodecError.check(kf_avcodec_open2(pointer, codec, nil), "opening \(String(cString: codec.pointee.name))")
    }
}

/// Owns an `AVFrame`, freed in `deinit`.
final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() throws(CodecError) {
        try FFmpegLibrary.load()
        guard let frame = kf_av_frame_alloc() else {
            throw .ffmpeg(operation: "av_frame_alloc", code: kf_averror_enomem(), message: "out of memory")
        }
        pointer = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        kf_av_frame_free(&frame)
    }
}

/// Owns an `AVPacket`, freed in `deinit`.
final class Packet {
    let pointer: UnsafeMutablePointer<AVPacket>

    init() throws(CodecError) {
        try FFmpegLibrary.load()
        guard let packet = kf_av_packet_alloc() else {
            throw .ffmpeg(operation: "av_packet_alloc", code: kf_averror_enomem(), message: "out of memory")
        }
        pointer = packet
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        kf_av_packet_free(&packet)
    }
}

/// libavcodec and libavutil, opened on first use (see CFFmpeg.h); logging set to errors only,
/// so the encoder's notes do not reach the terminal.
enum FFmpegLibrary {
    /// Opens FFmpeg once; an error names the library or symbol that is missing.
    static func load() throws(CodecError) {
        guard kf_ffmpeg_load() == 0 else {
            throw .codecNotFound(String(cString: kf_ffmpeg_load_error()))
        }
    }
}
