internal import AudioCodec
internal import Dispatch
internal import MediaCore
internal import MediaFormats
internal import Synchronization
internal import SystemPackage

/// The loudness of an encoded track, measured by decoding its packets: what a package made by
/// stream copy writes in its init segment's `ludt` (ISO/IEC 14496-12 12.2.7), as an encode
/// measures what it encodes (``/AudioCodec/LoudnessTap``).
///
/// The integrated loudness and the sample peak of ITU-R BS.1770-4 (``/AudioCodec/LoudnessMeter``
/// without the true peak), over the presented samples only: the priming and the padding are
/// not measured. The track is measured in consecutive parts on as many threads as there are
/// free processors, each part decoded from its packet pre-roll on
/// (``/MediaFormats/AudioTrackLayout/preRoll``), and the parts' gating blocks judged together
/// (``/AudioCodec/LoudnessMeter/measurement(combining:)``). An AAC track that signals SBR or PS,
/// whose decoder needs an SBR header before it gives full-rate audio, is measured in one part.
enum TrackLoudness {
    /// The fewest seconds of audio a part measures: shorter tracks are not split.
    static let minimumPartSeconds = 60.0

    /// The loudness of `layout`'s track, read through `formats`, in at most `parts` parts (by
    /// default, the processors free now: ``/MediaCore/IdleProcessors``);
    /// `nil` when it has no audio to measure, or it cannot be read or decoded whole (a track
    /// measured in parts that fails is measured again in one).
    ///
    /// - Throws: ``/MediaCore/PipelineError/cancelled`` when `control` is cancelled or stopped.
    static func measure(_ layout: AudioTrackLayout, formats: MediaFormatRegistry, parts: Int? = nil,
                        control: JobControl?) throws(PipelineError) -> StreamLoudness? {
        guard layout.packetCount > 0, layout.validLength > 0, layout.timescale > 0 else { return nil }
        let seconds = Double(layout.mediaDuration) / Double(layout.timescale)
        let most = splits(layout) ? min(Int(seconds / minimumPartSeconds), layout.packetCount) : 1
        let count = most < 2 ? 1 : max(1, min(most, parts ?? IdleProcessors.count(usable: IdleProcessors.usable, over: .milliseconds(30))))
        let bounds = (0...count).map { layout.packetCount * $0 / count }
        let meters = Mutex<[Int: Transfer<LoudnessMeter>]>([:])
        DispatchQueue.concurrentPerform(iterations: count) { part in
            // A part that cannot be measured leaves no meter: a packet its decoder refuses is
            // the copy's to report, not a reason to stop it.
            guard let meter = try? measurePart(layout, packets: bounds[part]..<bounds[part + 1], formats: formats, control: control) else { return }
            meters.withLock { $0[part] = Transfer(meter) }
        }
        if control?.isCancelled == true || control?.isStopRequested == true { throw .cancelled }
        let measured = meters.withLock { parts in (0..<count).compactMap { parts[$0]?.take() } }
        guard measured.count == count else { return count > 1 ? try measure(layout, formats: formats, parts: 1, control: control) : nil }
        let loudness: Loudness?
        do {
            loudness = try LoudnessMeter.measurement(combining: measured)
        } catch {
            // The parts decoded to different layouts (SBR signalled implicitly, found in the
            // stream by the part that met its header first): the whole track, in one part.
            guard count > 1 else { return nil }
            return try measure(layout, formats: formats, parts: 1, control: control)
        }
        return loudness.flatMap(StreamLoudness.init(samplePeakMeasurement:))
    }

    /// The loudness of what `input` decodes to (``AudioFileInput``), in one pass: a file without
    /// a track layout to split, an Ogg Opus file copied into Opus segments. `nil` when it has no
    /// audio to measure, or cannot be decoded whole.
    ///
    /// - Throws: ``/MediaCore/PipelineError/cancelled`` when `control` is cancelled.
    static func measure(decoding input: FilePath, control: JobControl?) throws(PipelineError) -> StreamLoudness? {
        var meter = LoudnessMeter(truePeak: false)
        do {
            var source = try AudioFileInput(path: input)
            _ = try Pump.run(from: &source, into: &meter, control: control)
        } catch {
            if error.code == .cancelled { throw error }
            return nil
        }
        if control?.isStopRequested == true { throw .cancelled }
        return (try? meter.measurement()).flatMap { $0.flatMap(StreamLoudness.init(samplePeakMeasurement:)) }
    }

    /// Whether `layout`'s track can be measured in parts: not an AAC track that signals SBR
    /// or PS (its decoder waits for an SBR header).
    static func splits(_ layout: AudioTrackLayout) -> Bool {
        guard layout.audioFormat.codec == .aac else { return true }
        guard let config = try? AudioSpecificConfig(bytes: layout.audioFormat.decoderConfiguration) else { return false }
        return config.audioObjectType == .aacLC && config.explicitExtension == nil && config.syncExtension?.sbrPresent != true
    }

    /// A meter of the presented samples of `packets`, decoded from the pre-roll before them.
    static func measurePart(_ layout: AudioTrackLayout, packets: Range<Int>, formats: MediaFormatRegistry,
                            control: JobControl?) throws(PipelineError) -> LoudnessMeter {
        let meter = LoudnessMeter(truePeak: false)
        guard !packets.isEmpty else { return meter }
        let first = max(0, packets.lowerBound - layout.preRoll)
        var input = try formats.aacInput(layout.path, purpose: .copying)
        let decoder: LibavcodecAudioDecoder
        do { decoder = try LibavcodecAudioDecoder(layout.audioFormat, outputSampleFormat: .float32) } catch { throw .codec(error) }
        // The presented samples, in media units.
        let presented = layout.priming..<(layout.priming + layout.validLength)
        var index = input.skip(packets: first)
        while index < packets.upperBound {
            if control?.isCancelled == true || control?.isStopRequested == true { throw .cancelled }
            guard let run = try input.nextRun(maxBytes: 256 * 1024) else { break }
            var offset = 0
            for entry in run.entries {
                defer { offset += entry.size; index += 1 }
                guard index >= first, index < packets.upperBound else { continue }
                do throws(CodecError) {
                    let pcm = try decoder.decode(packet: run.data[offset..<(offset + entry.size)])
                    guard index >= packets.lowerBound, let format = decoder.outputFormat, !pcm.isEmpty else { continue }
                    var start = layout.packetStart(index)
                    if index == 0 {
                        // A decoder that drops the priming itself (libavcodec's Opus, its
                        // pre-skip) gives the first packet short: its samples are the last ones.
                        let rate = Int64(format.sampleRate), scale = Int64(layout.timescale)
                        let expected = (layout.packetStart(1) - start) * rate / scale, frames = Int64(pcm.count / format.bytesPerFrame)
                        if frames < expected { start += (expected - frames) * scale / rate }
                    }
                    let kept = keptBytes(of: pcm, format: format, startingAt: start, timescale: layout.timescale, presented: presented)
                    // Most packets are kept whole: their PCM as it is, not a copy.
                    if !kept.isEmpty { try meter.add(PCMBuffer(format: format, bytes: kept.count == pcm.count ? pcm : Array(kept))) }
                } catch {
                    throw .codec(error)
                }
            }
        }
        return meter
    }

    /// The bytes of a packet's decoded `pcm` whose samples lie in `presented` (media units),
    /// the packet starting at `start`: its output spread over the packet's media units at the
    /// decoder's output rate (twice the core's for SBR).
    static func keptBytes(of pcm: [UInt8], format: PCMFormat, startingAt start: Int64, timescale: Int,
                          presented: Range<Int64>) -> ArraySlice<UInt8> {
        let frames = Int64(pcm.count / max(format.bytesPerFrame, 1))
        let rate = Int64(format.sampleRate), scale = Int64(timescale)
        // Output frame f plays at media unit start + f·timescale/rate.
        func frame(atUnit unit: Int64) -> Int64 {
            let offset = unit - start
            return offset <= 0 ? 0 : min(frames, (offset * rate + scale - 1) / scale)
        }
        let lower = frame(atUnit: presented.lowerBound), upper = frame(atUnit: presented.upperBound)
        guard upper > lower else { return [] }
        return pcm[Int(lower) * format.bytesPerFrame..<Int(upper) * format.bytesPerFrame]
    }
}
