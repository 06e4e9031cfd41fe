extension AudioPacketInput {
    /// A decoder for these packets, trimming what the container says to trim: `codecs`'s
    /// AAC decoder (``/AudioCodec/AudioCodecRegistry/decoder(for:profile:settings:)``) for the
    /// profile the AudioSpecificConfig names, or for any profile when there is none (ADTS).
    public func makeDecoder(sampleFormat: PCMSampleFormat = .int16, codecs: AudioCodecRegistry = .standard) throws(PipelineError) -> any AudioDecoder {
        do {
            return try codecs.decoder(
                for: .aac, profile: audioSpecificConfig.map(AudioCodecRegistry.profile(of:)),
                settings: .init(audioSpecificConfig: audioSpecificConfig, outputSampleFormat: sampleFormat, trim: trim))
        } catch {
            throw .codec(error)
        }
    }
}
