extension Transcode {
    /// Decodes the AAC track of the MP4/M4A at `inputPath` to `destination`, applying the edit
    /// list: the encoder's priming (the edit's `media_time`) is dropped at the start and decoding
    /// stops where the edit ends, so a file with a sample-exact edit list gives exactly its valid
    /// samples. Without an edit list, iTunes' `iTunSMPB` gapless tag is used when present.
    public static func decodeMP4(inputPath: String, segments: [String] = [], to destination: PCMDestination, sampleFormat: PCMSampleFormat = .int16,
                                 trackID: UInt32? = nil,
                                 progress: (Progress) -> Void = { _ in }) throws(PipelineError) -> DecodeSummary {
        var output = try PCMOutput(destination: destination)
        return try decodeMP4(inputPath: inputPath, segments: segments, into: &output, sampleFormat: sampleFormat,
                             trackID: trackID, progress: progress)
    }

    /// Decodes the AAC track of the MP4/M4A at `inputPath` into `output` (a file, a player).
    static func decodeMP4(inputPath: String, segments: [String], into output: inout some PCMWriting,
                          sampleFormat: PCMSampleFormat, trackID: UInt32?,
                          progress: (Progress) -> Void) throws(PipelineError) -> DecodeSummary {
        let source = try MediaInput.open(inputPath, segments: segments)
        let demuxer = MP4Demuxer(source: source, configuration: DemuxerConfiguration(mediaTypes: .audio, audioTrackID: trackID))
        do { try demuxer.start() } catch { throw .container(error) }
        guard let file = demuxer.file, let track = demuxer.audioTrack else { throw .unsupported("\(inputPath): no audio track") }
        let config: AudioSpecificConfig
        do {
            guard let found = try track.audioSpecificConfig() else {
                throw PipelineError.unsupported("\(inputPath): audio track \(track.id) is \(track.codecName); decode takes AAC")
            }
            config = found
        } catch let error as MP4Error { throw .container(error) } catch let error as PipelineError { throw error } catch {
            throw .unsupported("\(error)")
        }
        let trim = gaplessTrim(track: track, file: file, outputRate: config.outputSampleRate)
        let decoder: AACDecoder
        do { decoder = try AACDecoder(audioSpecificConfig: config, outputSampleFormat: sampleFormat, trim: trim) } catch { throw .codec(error) }
        var damage = file.damage
        var packets = 0
        let total = Double(track.mediaDuration) / Double(max(track.timescale, 1))
        do throws(PipelineError) {
            while true {
                let sample: MediaSample?
                do { sample = try demuxer.nextAudioSample() } catch {
                    damage.append("\(error); the track ends there")
                    break
                }
                guard let sample else { break }
                let pcm: [UInt8]
                do { pcm = try decoder.decode(packet: sample.data) } catch { throw .codec(error) }
                try output.write(pcm, format: decoder.outputFormat)
                packets += 1
                if packets % 256 == 0, let rate = decoder.outputFormat?.sampleRate {
                    progress(Progress(mediaSeconds: Double(decoder.deliveredFrameCount) / Double(rate), totalSeconds: total))
                }
            }
            let last: [UInt8]
            do { last = try decoder.flush() } catch { throw .codec(error) }
            try output.write(last, format: decoder.outputFormat)
            guard let format = decoder.outputFormat else { throw .unsupported("\(inputPath): no AAC packets could be decoded") }
            try output.finish()
            return DecodeSummary(format: format, frames: decoder.deliveredFrameCount, packets: packets, damage: damage)
        } catch {
            output.cancel()
            throw error
        }
    }

    /// The trim an MP4 track asks for, in output samples: from its edit list, else from iTunSMPB.
    static func gaplessTrim(track: MP4Track, file: MP4File, outputRate: Int) -> AACDecoder.Trim {
        let scale = Double(max(track.timescale, 1))
        let toOutput = Double(outputRate) / scale
        if let edit = track.mediaEdit {
            let priming = Int(Int64(saturating: Double(edit.mediaTime) * toOutput))
            let valid = track.editedMediaDuration(movieTimescale: file.movieTimescale).map { Int64(saturating: Double($0) * toOutput) }
            return AACDecoder.Trim(priming: priming, validFrameCount: valid)
        }
        for userData in [track.userData, file.userData].compactMap({ $0 }) {
            if let tags = try? MetadataTags.parse(udta: userData, path: track.path), let gapless = tags.gapless {
                return AACDecoder.Trim(priming: gapless.priming, validFrameCount: gapless.originalSampleCount)
            }
        }
        return .none
    }
}

/// Where a decode writes its PCM: a file (``PCMOutput``) or a device (``PlaybackOutput``).
protocol PCMWriting {
    /// Writes interleaved PCM laid out as `format` (nothing when `format` is not known yet).
    mutating func write(_ pcm: [UInt8], format: PCMFormat?) throws(PipelineError)
    /// Completes the output (names the file; drains the device).
    mutating func finish() throws(PipelineError)
    /// Gives up, leaving nothing half-done behind where that is possible.
    func cancel()
}

/// Where decoded PCM goes: a WAV (header written on the first PCM) or a raw file, under a
/// temporary name until ``finish()``.
struct PCMOutput: PCMWriting {
    private let sink: FileByteSink
    private let isWAV: Bool
    private var wav: WAVWriter<FileByteSink>?

    init(destination: Transcode.PCMDestination) throws(PipelineError) {
        switch destination {
        case .wav(let path):
            do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
            isWAV = true
        case .raw(let path):
            do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
            isWAV = false
        }
    }

    mutating func write(_ pcm: [UInt8], format: PCMFormat?) throws(PipelineError) {
        guard !pcm.isEmpty, let format else { return }
        if isWAV {
            do {
                if wav == nil { wav = try WAVWriter(sink: sink, format: format) }
                try wav?.write(pcm)
            } catch {
                throw .wav(error)
            }
        } else {
            do { try sink.write(pcm) } catch { throw .stream(error) }
        }
    }

    mutating func finish() throws(PipelineError) {
        do { try wav?.finish() } catch { throw .wav(error) }
        do { try sink.commit() } catch { throw .stream(error) }
    }

    func cancel() { sink.cancel() }
}
