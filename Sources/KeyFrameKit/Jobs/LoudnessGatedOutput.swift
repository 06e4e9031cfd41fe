import AACBitstream
import AudioCodec
import MediaCore
import MediaFormats
internal import Synchronization

/// What a measured output's decode measured, read by the job once the pump has ended.
final class DecodedLoudnessVerdict: Sendable {
    private let state = Mutex<(loudness: Loudness?, refused: Bool)>((nil, false))

    /// The decoded output's loudness, once the stream has ended.
    var loudness: Loudness? { state.withLock { $0.loudness } }
    /// Whether the file was cancelled for a decoded loudness that broke the promise.
    var isRefused: Bool { state.withLock { $0.refused } }

    fileprivate func set(_ loudness: Loudness?, refused: Bool) { state.withLock { $0 = (loudness, refused) } }
}

/// A lossy file output (AAC in MP4 or ADTS, MP3, Ogg Opus) that decodes what it writes, as a
/// listener's decoder will, and measures the decoded PCM (EBU R 128 loudness; true peak per
/// ITU-R BS.1770-4, 4× oversampled): what `convert --normalize` promises is the decoded
/// output's, and a lossy codec adds peaks of its own and moves the loudness.
///
/// With a `DecodedLoudnessPromise`, a decoded true peak over its ceiling, or an integrated
/// loudness more than its tolerance from its target, cancels the file before it is committed, so
/// an existing output stays as it was and the job can encode again (``DecodedLoudnessVerdict/isRefused``).
struct LoudnessGatedOutput<Output: PacketFileSink>: PacketSink {
    private var output: Output
    private let promise: DecodedLoudnessPromise?
    /// Whether the ReplayGain tags are made again from the decoded output when it is committed.
    private let replayGain: Bool
    private var metadata: StreamMetadata?
    let verdict: DecodedLoudnessVerdict
    private var decoder: LibavcodecAudioDecoder?
    private let meter = LoudnessMeter()
    private var ended = false

    /// `output`, committed only when its decoded loudness keeps `promise` (`nil`: measured only);
    /// with `replayGain`, its ReplayGain tags are those of the decoded output (an MP4, whose tags
    /// are written when it is finished).
    init(_ output: consuming Output, promise: DecodedLoudnessPromise?, replayGain: Bool = false, verdict: DecodedLoudnessVerdict) {
        self.output = output
        self.promise = promise
        self.replayGain = replayGain
        self.verdict = verdict
    }

    mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        if case .metadata(let told) = event { metadata = told }
        try output.receive(event)
    }

    mutating func write(_ packet: MediaSample) throws(PipelineError) {
        do throws(CodecError) {
            if decoder == nil {
                guard case .audio(let format) = packet.format else { throw .unsupportedInput("a measured output takes audio packets") }
                if format.codec == .aac {
                    let config: AudioSpecificConfig
                    do { config = try AudioSpecificConfig(bytes: format.decoderConfiguration) } catch { throw .bitstream(error) }
                    decoder = try AACDecoder(audioSpecificConfig: config, outputSampleFormat: .float32)
                } else {
                    decoder = try LibavcodecAudioDecoder(format, outputSampleFormat: .float32)
                }
            }
            if let decoder { try measure(decoder.decode(packet: packet.data), from: decoder) }
        } catch {
            throw .codec(error)
        }
        try output.write(packet)
    }

    private func measure(_ pcm: [UInt8], from decoder: LibavcodecAudioDecoder) throws(CodecError) {
        guard !pcm.isEmpty, let format = decoder.outputFormat else { return }
        try meter.add(PCMBuffer(format: format, bytes: pcm))
    }

    mutating func finish() throws(PipelineError) {
        let loudness: Loudness?
        do throws(CodecError) {
            if let decoder { try measure(decoder.flush(), from: decoder) }
            loudness = try meter.measurement()
        } catch {
            cancel()
            throw .codec(error)
        }
        if let promise, let loudness, let broken = promise.broken(by: loudness) {
            verdict.set(loudness, refused: true)
            cancel()
            throw .unsupported("\(output.path): decoded, \(broken)")
        }
        verdict.set(loudness, refused: false)
        if replayGain, let loudness, loudness.integrated.isFinite, loudness.integrated > -70 {
            var tagged = metadata ?? StreamMetadata()
            tagged.tags.removeAll { $0.key.lowercased().hasPrefix("replaygain_") }
            tagged.tags += Transcode.replayGainTags(of: loudness)
            try output.receive(.metadata(tagged))
        }
        ended = true
        try output.finish()
    }

    mutating func cancel() {
        guard !ended else { return }
        ended = true
        output.cancel()
    }
}

/// What a normalised AAC output must measure decoded: a true peak at most ``ceiling`` dBTP, and
/// an integrated loudness within ``tolerance`` LU of ``target``.
struct DecodedLoudnessPromise: Sendable {
    var ceiling: Double
    var target: Double?
    var tolerance = 0.5

    /// Words for how `loudness` breaks the promise, or `nil` when it keeps it.
    func broken(by loudness: Loudness) -> String? {
        if loudness.truePeak.isFinite, loudness.truePeak > ceiling {
            return "the true peak is \(fixed(loudness.truePeak, digits: 2)) dBTP, over the \(fixed(ceiling, digits: 1)) dBTP ceiling"
        }
        if let target, loudness.integrated.isFinite, abs(loudness.integrated - target) > tolerance {
            return "the loudness is \(fixed(loudness.integrated, digits: 1)) LUFS, not \(fixed(target, digits: 1))"
        }
        return nil
    }
}

extension LoudnessGatedOutput: StageReporting {
    /// The output's stage (the decoding that measures it counted in its time).
    func appendStages(to stages: inout [JobReport.Stage], elements: Int64, busy: Duration) {
        JobReport.appendStages(of: output, role: .sink, elements: elements, busy: busy, to: &stages)
    }
}
