internal import CFFmpeg

/// Owns an `AVCodecContext`, freed in `deinit`.
final class CodecContext {
    let pointer: UnsafeMutablePointer<AVCodecContext>
    let codec: UnsafePointer<AVCodec>

    init(codec: UnsafePointer<AVCodec>) throws(CodecError) {
        guard let context = avcodec_alloc_context3(codec) else {
            throw .ffmpeg(operation: "avcodec_alloc_context3", code: kf_averror_enomem(), message: "out of memory")
        }
        self.pointer = context
        self.codec = codec
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&context)
    }

    /// Opens the codec with the parameters set on the context.
    func open() throws(CodecError) {
        try CodecError.check(avcodec_open2(pointer, codec, nil), "opening \(String(cString: codec.pointee.name))")
    }
}

/// Owns an `AVFrame`, freed in `deinit`.
final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() throws(CodecError) {
        guard let frame = av_frame_alloc() else {
            throw .ffmpeg(operation: "av_frame_alloc", code: kf_averror_enomem(), message: "out of memory")
        }
        pointer = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }
}

/// Owns an `AVPacket`, freed in `deinit`.
final class Packet {
    let pointer: UnsafeMutablePointer<AVPacket>

    init() throws(CodecError) {
        guard let packet = av_packet_alloc() else {
            throw .ffmpeg(operation: "av_packet_alloc", code: kf_averror_enomem(), message: "out of memory")
        }
        pointer = packet
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }
}

/// FFmpeg's logging: errors only, so the encoder's notes do not reach the terminal.
enum FFmpegLog {
    static let quiet: Void = { av_log_set_level(AV_LOG_ERROR) }()
}
