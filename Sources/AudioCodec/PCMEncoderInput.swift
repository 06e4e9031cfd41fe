internal import MediaCore

/// What every encoder of PCM bytes checks of a buffer before it codes it (``AACEncoder``,
/// ``HEAACEncoder``, ``LibavcodecAudioEncoder``), written once.
enum PCMEncoderInput {
    /// The whole frames `pcm` holds, laid out as `format` says, after checking that the stream
    /// keeps the rate and channels it opened with (`opened`).
    ///
    /// - Throws: ``CodecError/unsupportedInput(_:)`` for a change of format mid-stream, or bytes
    ///   that are not whole frames.
    static func frameCount(of pcm: UnsafeRawBufferPointer, format: PCMFormat, opened: PCMFormat?) throws(CodecError) -> Int {
        guard let opened, opened.sampleRate == format.sampleRate, opened.channelCount == format.channelCount else {
            throw .unsupportedInput("PCM format changed mid-stream to \(format.sampleRate) Hz, \(format.channelCount) channels")
        }
        guard pcm.count % format.bytesPerFrame == 0 else {
            throw .unsupportedInput("\(pcm.count) bytes is not a whole number of \(format.bytesPerFrame)-byte frames")
        }
        return pcm.count / format.bytesPerFrame
    }

    /// The stream's first time at its own rate: `presentationTime` converted, or zero.
    static func startTime(_ presentationTime: MediaTime?, sampleRate: Int) -> MediaTime {
        (try? presentationTime?.converted(to: Int32(sampleRate), rounding: .nearest)) ?? MediaTime(value: 0, timescale: Int32(sampleRate))
    }
}
