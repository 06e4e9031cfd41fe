public import MediaCore

extension PCMFormat {
    /// Channel counts a WAV file may declare here (WAVEFORMATEXTENSIBLE names 18 speaker
    /// positions; 64 leaves room for ambisonics and bare multichannel files).
    public static let wavChannelRange = 1...64
    /// Sample rates a WAV file may declare here, in Hz (768 kHz is the highest rate of
    /// professional converters; anything beyond is a damaged header).
    public static let wavSampleRateRange = 1...768_000

    /// Checks that this layout can be read from or written to a WAV or raw PCM stream:
    /// interleaved, with a channel count and sample rate in the ranges above.
    func validateForWAV() throws(WAVError) {
        guard isInterleaved else {
            throw .unsupportedFormat(field: "isInterleaved", value: 0, allowed: "interleaved (1)")
        }
        guard Self.wavChannelRange.contains(channelCount) else {
            throw .unsupportedFormat(field: "channelCount", value: Int64(channelCount), allowed: "1...64")
        }
        guard Self.wavSampleRateRange.contains(sampleRate) else {
            throw .unsupportedFormat(field: "sampleRate", value: Int64(sampleRate), allowed: "1...768000")
        }
    }
}
