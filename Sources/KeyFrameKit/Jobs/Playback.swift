public import SystemPackage
public import AudioIO

/// Plays a file on an ALSA device in real time: the series' last step (rendering, after
/// decoding). The device is opened with the first PCM, in the stream's rate and channel count,
/// and its buffer paces the pump; at the end the device is drained, so everything written has
/// been heard when ``play(_:device:alsaConfiguration:control:progress:)`` returns.
///
/// The PCM is exactly what ``Transcode/decode(_:segments:to:sampleFormat:trackID:control:progress:)``
/// writes for the same file: M4A/MP4 with the edit list applied (no priming, no padding), ADTS
/// whole, WAV as stored.
public enum Playback {
    /// What was played.
    public struct Summary: Sendable {
        /// The PCM layout played.
        public var format: PCMFormat
        /// Frames played.
        public var frames: Int64
        /// Device underruns recovered from (the decoder did not keep up).
        public var underruns: Int
        /// Damage met in the input.
        public var damage: [DamageEvent]

        /// Seconds played.
        public var seconds: Double { Double(frames) / Double(max(format.sampleRate, 1)) }
    }

    /// Plays the `.wav`, `.aac` or `.m4a`/`.mp4`/`.mov` file at `input` (recognised by its
    /// bytes) on `device`.
    ///
    /// Compositions: ``PCMFileReader`` → ``/AudioIO/AudioPlayerSink``, or ``AudioPacketInput`` →
    /// ``/AudioCodec/AACDecoder`` → ``/AudioIO/AudioPlayerSink``.
    ///
    /// - Throws: ``PipelineError/audioDevice(_:)`` for a device that is missing, busy or cannot
    ///   play the stream's format; the errors of the input.
    public static func play(_ input: FilePath, device: String = "default", alsaConfiguration: ALSAConfiguration? = nil,
                            control: JobControl? = nil, progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        var sink = AudioPlayerSink(device: device, alsaConfiguration: alsaConfiguration)
        let report: PumpReport
        switch MediaFileFormat.detect(input) {
        case .wav:
            var source = try PCMFileReader(wavPath: input, allowTruncated: true)
            report = try Pump.run(from: &source, into: &sink, control: control, progress: progress)
        case .adts, .mp4:
            let packets = try AudioPacketInput(path: input, purpose: .decoding)
            var source = packets.transformed(by: try packets.makeDecoder(sampleFormat: .int16))
            report = try Pump.run(from: &source, into: &sink, control: control, progress: progress)
        default:
            let formats = [MediaFileFormat.wav, .adts, .mp4].map { ".\($0.fileExtensions[0])" }.joined(separator: ", ")
            throw .unsupported("\(input): \(MediaFileFormat.detect(input).map { "\($0) input" } ?? "unknown input type"); play takes \(formats)")
        }
        guard let format = sink.player?.format else { throw .unsupported("\(input): no audio to play") }
        return Summary(format: format, frames: sink.framesWritten, underruns: sink.player?.underrunCount ?? 0, damage: report.damage)
    }
}
