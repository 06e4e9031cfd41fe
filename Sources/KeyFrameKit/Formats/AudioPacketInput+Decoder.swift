extension AudioPacketInput {
    /// A decoder for these packets, trimming what the container says to trim.
    public func makeDecoder(sampleFormat: PCMSampleFormat = .int16) throws(PipelineError) -> AACDecoder {
        do { return try AACDecoder(audioSpecificConfig: audioSpecificConfig, outputSampleFormat: sampleFormat, trim: trim) } catch {
            throw .codec(error)
        }
    }
}
