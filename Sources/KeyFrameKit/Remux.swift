/// Container-to-elementary-stream jobs: `keyframe demux` (the seeds' demuxer demo).
public enum Remux {
    /// What a demux wrote.
    public struct DemuxSummary: Sendable {
        /// The audio track written.
        public var audioTrackID: UInt32?
        /// Audio packets written.
        public var audioPackets: Int
        /// The video track written.
        public var videoTrackID: UInt32?
        /// Video samples written.
        public var videoSamples: Int
        /// Priming and remainder the ADTS output cannot carry (from the edit list), in samples.
        public var droppedGapless: (priming: Int, remainder: Int)?
        /// Damage found in the input.
        public var damage: [String]
    }

    /// Writes the audio track of the MP4 at `inputPath` as ADTS to `audioPath`, and optionally its
    /// video track as an Annex-B stream to `videoPath`. Outputs are written under temporary names
    /// and renamed when complete.
    public static func demux(inputPath: String, segments: [String] = [], audioPath: String?, videoPath: String?,
                             audioTrackID: UInt32? = nil,
                             progress: (Double) -> Void = { _ in }) throws(PipelineError) -> DemuxSummary {
        let source = try MediaInput.open(inputPath, segments: segments)
        var types: MediaType = []
        if audioPath != nil { types.insert(.audio) }
        if videoPath != nil { types.insert(.video) }
        let demuxer = MP4Demuxer(source: source, configuration: DemuxerConfiguration(mediaTypes: types, audioTrackID: audioTrackID))
        do { try demuxer.start() } catch { throw .container(error) }
        guard let file = demuxer.file else { throw .unsupported("\(inputPath): no movie") }
        var summary = DemuxSummary(audioPackets: 0, videoSamples: 0, damage: file.damage)

        var sinks: [FileByteSink] = []
        defer { for sink in sinks { sink.cancel() } }
        if let audioPath {
            guard let track = demuxer.audioTrack else { throw .unsupported("\(inputPath): no audio track") }
            guard track.codecName == "aac" else {
                throw .unsupported("\(inputPath): audio track \(track.id) is \(track.codecName); ADTS carries AAC only")
            }
            let config: AudioSpecificConfig
            do {
                guard let found = try track.audioSpecificConfig() else { throw PipelineError.unsupported("\(inputPath): track \(track.id) has no AudioSpecificConfig") }
                config = found
            } catch let error as MP4Error { throw .container(error) } catch let error as PipelineError { throw error } catch { throw .unsupported("\(error)") }
            let sink: FileByteSink
            do { sink = try FileByteSink(path: audioPath) } catch { throw .stream(error) }
            sinks.append(sink)
            var writer: ADTSWriter<FileByteSink>
            do { writer = try ADTSWriter(sink: sink, audioSpecificConfig: config) } catch { throw .bitstream(error) }
            let total = max(track.sampleCount, 1)
            while true {
                let sample: MediaSample?
                do { sample = try demuxer.nextAudioSample() } catch {
                    summary.damage.append("\(error); the track ends there")
                    break
                }
                guard let sample else { break }
                do { try writer.write(rawDataBlock: sample.data) } catch { throw .bitstream(error) }
                summary.audioPackets += 1
                if summary.audioPackets % 4096 == 0 { progress(Double(summary.audioPackets) / Double(total)) }
            }
            summary.audioTrackID = track.id
            if let edit = track.mediaEdit {
                let valid = track.editedMediaDuration(movieTimescale: file.movieTimescale)
                let remainder = valid.map { max(0, track.mediaDuration.saturatingSubtracting(edit.mediaTime).saturatingSubtracting($0)) } ?? 0
                summary.droppedGapless = (Int(edit.mediaTime), Int(remainder))
            }
        }
        if let videoPath {
            guard let track = demuxer.videoTrack else { throw .unsupported("\(inputPath): no video track") }
            let sink: FileByteSink
            do { sink = try FileByteSink(path: videoPath) } catch { throw .stream(error) }
            sinks.append(sink)
            summary.videoSamples = try writeAnnexB(track: track, demuxer: demuxer, sink: sink, damage: &summary.damage)
            summary.videoTrackID = track.id
        }
        for sink in sinks {
            do { try sink.commit() } catch { throw .stream(error) }
        }
        sinks.removeAll()
        return summary
    }

    private static func writeAnnexB(track: MP4Track, demuxer: MP4Demuxer<MediaInput.Source>, sink: FileByteSink,
                                    damage: inout [String]) throws(PipelineError) -> Int {
        var converter: AnnexBConverter
        do { converter = try track.annexBConverter() } catch { throw .container(error) }
        var count = 0
        let output = sink
        while true {
            let sample: MediaSample?
            do { sample = try demuxer.nextVideoSample() } catch {
                damage.append("\(error); the track ends there")
                break
            }
            guard let sample else { break }
            do {
                let bytes = try converter.convert(sample.data, isSync: sample.isSync, trackID: track.id, sampleIndex: count)
                try output.write(bytes)
            } catch let error as MP4Error { throw .container(error) } catch let error as ByteStreamError { throw .stream(error) } catch {
                throw .unsupported("\(error)")
            }
            count += 1
        }
        return count
    }
}
