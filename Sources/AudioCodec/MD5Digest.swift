internal import CFFmpeg

/// An MD5 (RFC 1321) computed by libavutil over bytes given in pieces: the digest FLAC's
/// STREAMINFO keeps of a stream's samples (RFC 9639 8.2), for an edit that writes a stream no
/// encoder saw whole.
///
/// Holds a libavutil context, so it is a class and not `Sendable`.
public final class MD5Digest {
    private let context: OpaquePointer

    /// An empty digest.
    ///
    /// - Throws: ``CodecError`` when libavutil cannot be loaded or allocate.
    public init() throws(CodecError) {
        try FFmpegLibrary.load()
        guard let context = kf_av_md5_alloc() else {
            throw .ffmpeg(operation: "av_md5_alloc", code: kf_averror_enomem(), message: "out of memory")
        }
        self.context = context
        kf_av_md5_init(context)
    }

    deinit { kf_av_free(UnsafeMutableRawPointer(context)) }

    /// Adds `bytes`.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        kf_av_md5_update(context, base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// Adds `bytes`.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The 16-byte digest of all that was added; the digest is spent.
    public func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 16)
        digest.withUnsafeMutableBufferPointer { kf_av_md5_final(context, $0.baseAddress) }
        return digest
    }
}

@available(*, unavailable)
extension MD5Digest: Sendable {}
