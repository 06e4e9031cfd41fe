extension AudioPacketInput {
    /// A decoder for these packets, trimming what the container says to trim: `codecs`'s
    /// AAC decoder (``/AudioCodec/AudioCodecRegistry/decoder(for:profile:settings:)``) for the
    /// profile the AudioSpecificConfig names, or for any profile when there is none (ADTS).
    /// A track of another codec (Opus, FLAC, ALAC) gets that codec's decoder, configured by its
    /// sample entry.
    public func makeDecoder(sampleFormat: PCMSampleFormat = .int16, codecs: AudioCodecRegistry = .standard) throws(PipelineError) -> any AudioDecoder {
        if let stream = audioFormat, stream.codec != .aac {
            return try codecs.decoder(for: stream.codec, config: nil, stream: stream, sampleFormat: sampleFormat, trim: trim)
        }
        return try codecs.decoder(for: .aac, config: audioSpecificConfig, stream: nil, sampleFormat: sampleFormat, trim: trim)
    }
}

extension AudioCodecRegistry {
    /// The decoder of `codec` for a stream configured by its AudioSpecificConfig (AAC, asked
    /// for the profile it names; none for ADTS) or by `stream` (another codec), trimmed by `trim`.
    func decoder(for codec: AudioCodecID, config: AudioSpecificConfig?, stream: EncodedAudioFormat?, sampleFormat: PCMSampleFormat,
                 trim: GaplessTrim) throws(PipelineError) -> any AudioDecoder {
        var settings = DecoderSettings(audioSpecificConfig: config, outputSampleFormat: sampleFormat, trim: trim)
        settings.stream = stream
        do { return try decoder(for: codec, profile: config.map(Self.profile(of:)), settings: settings) } catch { throw .codec(error) }
    }
}
