public import AudioIO

/// Plays a file on an ALSA device in real time: the series' last step (rendering, after seed
/// 004's decode), with the decode paths of ``Transcode`` feeding an ``AudioPlayer`` instead of a
/// file. The device is opened at the first decoded PCM, in the stream's rate and channel count,
/// and its buffer paces the decoding; at the end the device is drained, so everything written
/// has been heard when ``play(inputPath:device:alsaConfiguration:progress:)`` returns.
///
/// The PCM is exactly what `keyframe decode` writes for the same file: M4A/MP4 with the edit
/// list applied (no priming, no padding), ADTS whole, WAV as stored.
public enum Playback {
    /// What was played.
    public struct Summary: Sendable {
        /// The PCM layout played.
        public var format: PCMFormat
        /// Frames played.
        public var frames: Int64
        /// Device underruns recovered from (the decoder did not keep up).
        public var underruns: Int
        /// Damage met in the input (skipped bytes, truncation), one sentence each.
        public var damage: [String]

        /// Seconds played.
        public var seconds: Double { Double(frames) / Double(max(format.sampleRate, 1)) }
    }

    /// Decodes (or reads) the `.wav`, `.aac` or `.m4a`/`.mp4`/`.mov` file at `inputPath` and plays
    /// it on `device`.
    ///
    /// - Throws: ``PipelineError/audioDevice(_:)`` for a device that is missing, busy or cannot
    ///   play the stream's format; the decode errors of ``Transcode``.
    public static func play(inputPath: String, device: String = "default", alsaConfiguration: ALSAConfiguration? = nil,
                            progress: (Transcode.Progress) -> Void = { _ in }) throws(PipelineError) -> Summary {
        var output = PlaybackOutput(device: device, alsaConfiguration: alsaConfiguration)
        let damage: [String]
        switch MediaInput.kind(ofPath: inputPath) {
        case .wav:
            var reader = try PCMFileReader(wavPath: inputPath, allowTruncated: true)
            let total = reader.frameCount.map { Double($0) / Double(reader.format.sampleRate) }
            do throws(PipelineError) {
                var frames: Int64 = 0
                while let chunk = try reader.read(maxFrames: Transcode.chunkFrames) {
                    try output.write(chunk, format: reader.format)
                    frames += Int64(chunk.count / reader.format.bytesPerFrame)
                    progress(Transcode.Progress(mediaSeconds: Double(frames) / Double(reader.format.sampleRate), totalSeconds: total))
                }
                try output.finish()
            } catch {
                output.cancel()
                throw error
            }
            damage = reader.warnings
        case .adts:
            damage = try Transcode.decodeADTS(inputPath: inputPath, into: &output, sampleFormat: .int16, progress: progress).damage
        case .mp4:
            damage = try Transcode.decodeMP4(inputPath: inputPath, segments: [], into: &output, sampleFormat: .int16, trackID: nil,
                                             progress: progress).damage
        case nil:
            throw .unsupported("\(inputPath): unknown input type; play takes .wav, .aac or .m4a/.mp4")
        }
        guard let format = output.format else { throw .unsupported("\(inputPath): no audio to play") }
        return Summary(format: format, frames: output.frames, underruns: output.underruns, damage: damage)
    }
}

/// Decoded PCM to an ``AudioPlayer``, opened on the first PCM with its format.
struct PlaybackOutput: PCMWriting {
    let device: String
    let alsaConfiguration: ALSAConfiguration?
    private var player: AudioPlayer?
    private(set) var frames: Int64 = 0

    init(device: String, alsaConfiguration: ALSAConfiguration?) {
        self.device = device
        self.alsaConfiguration = alsaConfiguration
    }

    var format: PCMFormat? { player?.format }
    var underruns: Int { player?.underrunCount ?? 0 }

    mutating func write(_ pcm: [UInt8], format: PCMFormat?) throws(PipelineError) {
        guard !pcm.isEmpty, let format else { return }
        if player == nil {
            do { player = try AudioPlayer(format: format, device: device, alsaConfiguration: alsaConfiguration) } catch {
                throw .audioDevice(error)
            }
        }
        guard let player, player.format == format else {
            throw .unsupported("the stream's format changed mid-way to \(format.sampleRate) Hz, \(format.channelCount) ch")
        }
        do { try player.write(bytes: pcm) } catch { throw .audioDevice(error) }
        frames += Int64(pcm.count / format.bytesPerFrame)
    }

    mutating func finish() throws(PipelineError) {
        do { try player?.drain() } catch { throw .audioDevice(error) }
    }

    func cancel() {}
}
