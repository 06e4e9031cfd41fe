internal import AudioCodec
internal import MediaCore

/// Decodes single frames of a lossless stream (FLAC, ALAC) and encodes PCM back into frames of
/// it: what an edit needs to end or begin a lossless stream inside a frame without re-encoding
/// the rest. Both are exact, so the frames written decode to the very samples taken.
///
/// Samples move as integers: 16 bits as `int16`, 24 as `int32` with the sample in the top 24
/// bits, as libavcodec gives and takes them.
final class LosslessFrameCoder {
    /// The stream's format.
    let stream: EncodedAudioFormat
    /// Bits per sample of the stream.
    let bitsPerSample: Int
    /// The PCM the frames decode to.
    let pcmFormat: PCMFormat
    private let codecs: AudioCodecRegistry
    private var decoder: (any AudioDecoder)?

    /// A coder of `stream`, whose samples have `bitsPerSample` bits.
    ///
    /// - Throws: `PipelineError.unsupported` for a depth other than 16 or 24 bits: libavcodec's
    ///   encoders write only those, and its decoders give other depths shifted.
    init(stream: EncodedAudioFormat, bitsPerSample: Int, codecs: AudioCodecRegistry = .standard) throws(PipelineError) {
        guard bitsPerSample == 16 || bitsPerSample == 24 else {
            throw .unsupported("\(stream.codec) of \(bitsPerSample) bits per sample cannot be cut inside a frame without re-encoding; "
                               + "16 and 24 bits can")
        }
        self.stream = stream
        self.bitsPerSample = bitsPerSample
        self.codecs = codecs
        pcmFormat = PCMFormat(sampleRate: stream.sampleRate, channelCount: stream.channelCount,
                              sampleFormat: bitsPerSample <= 16 ? .int16 : .int32)
    }

    /// The samples of one frame, interleaved.
    func decode(_ frame: [UInt8]) throws(PipelineError) -> [UInt8] {
        if decoder == nil {
            var settings = AudioCodecRegistry.DecoderSettings(audioSpecificConfig: nil, outputSampleFormat: pcmFormat.sampleFormat)
            settings.stream = stream
            do { decoder = try codecs.decoder(for: stream.codec, profile: nil, settings: settings) } catch { throw .codec(error) }
        }
        guard var decoder else { return [] }
        let sample = MediaSample(data: frame, presentationTime: .zero, duration: MediaTime(value: 0, timescale: Int32(clamping: stream.sampleRate)),
                                 format: .audio(stream))
        do throws(CodecError) { return try decoder.transform(sample).flatMap { $0.bytes } } catch { throw .codec(error) }
    }

    /// `pcm` (interleaved, ``pcmFormat``) encoded as frames of equal length (give or take one),
    /// as few as hold at most `largest` samples each, and never so many that one has fewer than 16
    /// (RFC 9639 9.1.6: only a stream's last block may be shorter) unless all of `pcm` is fewer.
    /// Each frame comes from an encoder of its own, so each is a short last frame where it must be.
    func encode(_ pcm: [UInt8], largest: Int) throws(PipelineError) -> [[UInt8]] {
        let total = pcm.count / pcmFormat.bytesPerFrame
        return try encode(pcm, frames: (total + max(largest, 16) - 1) / max(largest, 16))
    }

    /// `pcm` (interleaved, ``pcmFormat``) encoded as `count` frames of equal length (give or
    /// take one), fewer when that would leave one with fewer than 16 samples and `pcm` has more.
    func encode(_ pcm: [UInt8], frames count: Int) throws(PipelineError) -> [[UInt8]] {
        let frameBytes = pcmFormat.bytesPerFrame
        let total = pcm.count / frameBytes
        guard total > 0 else { return [] }
        let count = max(1, min(count, total / 16))
        var frames: [[UInt8]] = []
        var start = 0
        for index in 0..<count {
            let length = (total - start) / (count - index)
            let end = index == count - 1 ? total : start + length
            frames += try encodeOne(Array(pcm[(start * frameBytes)..<(end * frameBytes)]))
            start = end
        }
        return frames
    }

    private func encodeOne(_ pcm: [UInt8]) throws(PipelineError) -> [[UInt8]] {
        do throws(CodecError) {
            var encoder = try codecs.encoder(for: stream.codec, settings: AudioCodecRegistry.EncoderSettings(bitrate: 0, format: pcmFormat))
            var packets = try encoder.transform(PCMBuffer(format: pcmFormat, bytes: pcm))
            packets += try encoder.finish()
            return packets.map { $0.data }
        } catch { throw .codec(error) }
    }
}
