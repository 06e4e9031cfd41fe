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

    /// Plays the audio file at `input` (recognised by its bytes) on `device`: WAV, ADTS and MP4
    /// AAC by KeyFrameKit's readers, anything else libavformat reads (FLAC, MP3, Ogg, …) through
    /// ``AudioFileInput``.
    ///
    /// Compositions: ``/MediaFormats/PCMFileReader`` → ``/AudioIO/AudioPlayerSink``, or ``/MediaFormats/AudioPacketInput`` →
    /// ``/AudioCodec/AACDecoder`` → ``/AudioIO/AudioPlayerSink``.
    ///
    /// - Throws: `PipelineError.audioDevice` for a device that is missing, busy or cannot
    ///   play the stream's format; the errors of the input.
    public static func play(_ input: FilePath, device: String = "default", alsaConfiguration: ALSAConfiguration? = nil,
                            control: JobControl? = nil, progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        var sink = AudioPlayerSink(device: device, alsaConfiguration: alsaConfiguration)
        let report: PumpReport
        switch MediaFileFormat.detect(input) {
        case .wav where (try? PCMFileReader(wavPath: input, allowTruncated: true)) != nil:
            var source = try PCMFileReader(wavPath: input, allowTruncated: true)
            report = try Pump.run(from: &source, into: &sink, control: control, progress: progress)
        case let format? where format == .adts || format == .mp4 || format == .hlsPlaylist:
            let packets: AudioPacketInput
            do { packets = try AudioPacketInput(path: input, purpose: .decoding) } catch {
                // A playlist our reader refuses stays refused: never libavformat's HLS reader
                // (holes, no gapless trim). Other AAC it refuses, libavformat may read.
                guard format != .hlsPlaylist else { throw error }
                report = try playOther(input, into: &sink, control: control, progress: progress)
                break
            }
            var source = packets.transformed(by: try packets.makeDecoder(sampleFormat: .int16))
            report = try Pump.run(from: &source, into: &sink, control: control, progress: progress)
        default:
            report = try playOther(input, into: &sink, control: control, progress: progress)
        }
        guard let format = sink.player?.format else { throw .unsupported("\(input): no audio to play") }
        return Summary(format: format, frames: sink.framesWritten, underruns: sink.player?.underrunCount ?? 0, damage: report.damage)
    }

    /// Any other audio file, decoded as `convert` reads it (``AudioFileInput``), in 16-bit.
    private static func playOther(_ input: FilePath, into sink: inout AudioPlayerSink, control: JobControl?,
                                  progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> PumpReport {
        var source = try AudioFileInput(path: input, allowsTruncatedWAV: true).transformed(by: PCMResampler(sampleFormat: .int16))
        return try Pump.run(from: &source, into: &sink, control: control, progress: progress)
    }
}
