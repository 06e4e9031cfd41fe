public import MediaCore

/// An encoder of PCM bytes into packets, flushed at the end (``AACEncoder``,
/// ``HEAACEncoder``): its ``/MediaCore/MediaTransform`` face comes from these two calls.
public protocol PCMBytesEncoder: AnyObject {
    /// Encodes PCM bytes laid out as `format` says; returns the packets that are ready.
    func encode(pcm: UnsafeRawBufferPointer, format: PCMFormat, presentationTime: MediaTime?) throws(CodecError) -> [MediaSample]
    /// Encodes what is held and drains the encoder.
    func flush() throws(CodecError) -> [MediaSample]
}

extension PCMBytesEncoder {
    /// Encodes a buffer of PCM; returns the packets it completes, each with its own
    /// presentation time.
    public func transform(_ buffer: PCMBuffer) throws(CodecError) -> [MediaSample] {
        var result: Result<[MediaSample], CodecError> = .success([])
        buffer.bytes.withUnsafeBytes { raw in
            do throws(CodecError) {
                result = .success(try encode(pcm: raw, format: buffer.format, presentationTime: buffer.presentationTime))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    /// Flushes the encoder: the packets that hold the last input and its padding.
    public func finish() throws(CodecError) -> [MediaSample] {
        try flush()
    }
}

/// Its ``/MediaCore/MediaTransform`` face (``PCMBytesEncoder``): PCM buffers in, AAC packets
/// (1024 frames each) out.
extension AACEncoder: PCMBytesEncoder, MediaTransform {}

extension LibavcodecAudioDecoder: MediaTransform {
    /// Decodes one packet; returns its PCM (none while the decoder fills its delay or trims
    /// priming).
    public func transform(_ packet: MediaSample) throws(CodecError) -> [PCMBuffer] {
        let pcm = try decode(packet: packet.data)
        guard !pcm.isEmpty, let format = outputFormat else { return [] }
        return [PCMBuffer(format: format, bytes: pcm)]
    }

    /// Drops an upstream's gapless numbers: the decoder's output is already trimmed by them (or
    /// the PCM starts with the priming, which no PCM sink can signal); passes the rest on.
    public func transform(event: StreamEvent) -> [StreamEvent] {
        if case .gapless = event { return [] }
        return [event]
    }

    /// Flushes the decoder: the PCM it still holds.
    public func finish() throws(CodecError) -> [PCMBuffer] {
        let pcm = try flush()
        guard !pcm.isEmpty, let format = outputFormat else { return [] }
        return [PCMBuffer(format: format, bytes: pcm)]
    }
}
