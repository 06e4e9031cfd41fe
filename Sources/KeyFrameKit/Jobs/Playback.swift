public import SystemPackage
public import AudioIO

/// Plays a file on an ALSA device in real time: the series' last step (rendering, after
/// decoding). The device is opened with the first PCM, in the stream's rate and channel count,
/// and its buffer paces the pump; at the end the device is drained, so everything written has
/// been heard when ``play(_:device:alsaConfiguration:control:progress:)`` returns.
///
/// The PCM is exactly what ``Transcode/decode(_:segments:to:outputFormat:sampleFormat:trackID:formats:control:progress:)``
/// writes for the same file: M4A/MP4 with the edit list applied (no priming, no padding), ADTS
/// whole, WAV as stored.
public enum Playback {
    /// What was played.
    public struct Summary: JobSummary, Sendable {
        /// The PCM layout played.
        public var format: PCMFormat
        /// Frames played.
        public var frames: Int64
        /// Device underruns recovered from (the decoder did not keep up).
        public var underruns: Int
        /// What the pump did, stage by stage: the input, the resampler, the device.
        public var report: JobReport

        /// Seconds played.
        public var seconds: Double { Double(frames) / Double(max(format.sampleRate, 1)) }
    }

    /// Plays the audio file at `input` (recognised by its bytes) on `device`, opened through the
    /// format registry (``AudioFileInput``): WAV, ADTS, MP4 and HLS AAC by KeyFrameKit's readers,
    /// anything else libavformat reads (FLAC, MP3, Ogg, …).
    ///
    /// Compositions: ``AudioFileInput`` → ``/AudioIO/AudioPlayerSink`` for a PCM file, or
    /// ``AudioFileInput`` → ``/AudioCodec/PCMResampler`` (16-bit) → ``/AudioIO/AudioPlayerSink``.
    ///
    /// - Throws: `PipelineError.audioDevice` for a device that is missing, busy or cannot
    ///   play the stream's format; the errors of the input.
    public static func play(_ input: FilePath, device: String = "default", alsaConfiguration: ALSAConfiguration? = nil,
                            control: JobControl? = nil, progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        var sink = AudioPlayerSink(device: device, alsaConfiguration: alsaConfiguration)
        // Through the format registry, as every job opens its input: PCM files as stored,
        // everything decoded in 16-bit.
        let source = try AudioFileInput(path: input, options: MediaFormatRegistry.InputOptions(allowsTruncatedWAV: true,
                                                                                                decodedSampleFormat: .int16))
        let report: JobReport
        if source.isPCMFile {
            var file = source
            report = try Pump.run(from: &file, into: &sink, control: control, progress: progress)
        } else {
            var chain = source.transformed(by: PCMResampler(sampleFormat: .int16))
            report = try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
        }
        guard let format = sink.player?.format else { throw .unsupported("\(input): no audio to play") }
        return Summary(format: format, frames: sink.framesWritten, underruns: sink.player?.underrunCount ?? 0, report: report)
    }
}
