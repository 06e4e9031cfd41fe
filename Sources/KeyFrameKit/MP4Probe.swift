/// Describes an MP4/M4A/MOV file: every track with its codec, sample count, durations, audio
/// configuration, gapless priming and remainder, video size after the track matrix, and tags.
public enum MP4Probe {
    /// The seconds of `track` that lie inside a file of `fileSize` bytes, when fewer than the
    /// `declared` ones: the durations of the samples inside it, less the edit's start.
    static func readableSeconds(of track: MP4Track, declared: Double, fileSize: Int64) -> Double? {
        guard track.fragments.runCount == 0, track.timescale > 0 else { return nil }
        let inside = track.samplesInside(fileSize: fileSize)
        guard inside.firstOutside != nil else { return nil }
        var left = Int64(inside.count)
        var ticks: Int64 = 0
        for entry in track.sampleTable.timeToSample where left > 0 {
            let count = min(left, Int64(entry.count))
            ticks = ticks.saturatingAdding(count.saturatingMultiplied(by: Int64(entry.delta)))
            left -= count
        }
        let start = track.mediaEdit.map { max(0, $0.mediaTime) } ?? 0
        let readable = Double(max(0, ticks - start)) / Double(track.timescale)
        return readable < declared ? readable : nil
    }

    /// Probes `source`.
    public static func probe(_ source: some RandomAccessByteSource) throws(MP4Error) -> ProbeReport {
        let file = try MP4File(source: source)
        var tracks: [ProbeReport.Track] = []
        let movieScale = Double(file.movieTimescale)
        var damage = file.damage
        for track in file.tracks {
            var entry = ProbeReport.Track(id: Int(track.id), type: track.typeName, codec: track.codecName,
                                          sampleCount: track.sampleCount, duration: 0)
            let mediaSeconds = Double(track.mediaDuration) / Double(max(track.timescale, 1))
            if let ranges = track.editedMediaRanges(movieTimescale: file.movieTimescale), track.timescale > 0 {
                // A joined file: its media edits one after another.
                entry.duration = Double(ranges.reduce(Int64(0)) { $0.saturatingAdding(Int64($1.count)) }) / Double(track.timescale)
            } else if let edit = track.mediaEdit, edit.segmentDuration > 0 {
                entry.duration = Double(edit.segmentDuration) / movieScale
            } else {
                entry.duration = mediaSeconds
            }
            if let problem = track.damage {
                entry.damage = problem.message
            }
            if let empty = track.emptyAudioSamples { damage.append(empty) }
            entry.readableDuration = readableSeconds(of: track, declared: entry.duration, fileSize: source.byteCount)
            if track.mediaType == .audio {
                describeAudio(track, file: file, into: &entry, damage: &damage)
            } else if track.mediaType == .video, let video = track.sampleEntry?.video {
                let transform = TrackTransform(matrix: track.trackHeader.matrix) ?? .identity
                let size = transform.displaySize(width: video.width, height: video.height)
                entry.width = size.width
                entry.height = size.height
                entry.transform = transform.description
            }
            tracks.append(entry)
        }
        var report = ProbeReport(format: "mp4", duration: 0, tracks: tracks, damage: Array(damage.prefix(ProbeReport.damageLimit)),
                                 damageCount: damage.count)
        // mvhd covers only the samples in moov; fragments can add more, and mvex/mehd can say
        // how long the whole fragmented movie is (an init segment has no samples at all).
        var longest = tracks.map(\.duration).max() ?? 0
        if let fragmentDuration = file.fragmentDurationSeconds { longest = max(longest, fragmentDuration) }
        if let header = file.movieHeader, header.duration > 0 {
            report.duration = file.isFragmented ? max(Double(header.duration) / movieScale, longest) : Double(header.duration) / movieScale
        } else {
            report.duration = longest
        }
        if let readable = tracks.compactMap(\.readableDuration).max() {
            // (Media tracks only: a chapter track lasts as long as the file says, read or not.)
            let whole = tracks.filter { $0.readableDuration == nil && ($0.type == "audio" || $0.type == "video") }.map(\.duration).max() ?? 0
            report.readableDuration = min(report.duration, max(readable, whole))
        }
        report.brand = file.fileType?.majorBrand.description
        report.fragmented = file.isFragmented
        if let userData = file.userData, let tags = try? MetadataTags.parse(udta: userData, path: BoxPath(components: ["moov", "udta"])) {
            // An item with several values (two covers) shows them all, separated by "; ".
            report.tags = Dictionary(tags.all.map { ($0.key, $0.value) }, uniquingKeysWith: { first, next in first + "; " + next })
        }
        return report
    }

    private static func describeAudio(_ track: MP4Track, file: MP4File, into entry: inout ProbeReport.Track, damage: inout [DamageEvent]) {
        let movieTimescale = file.movieTimescale
        guard let sampleEntry = track.sampleEntry else { return }
        var config: AudioSpecificConfig?
        do { config = try track.audioSpecificConfig() } catch {
            damage.append(DamageEvent(.unreadableTrack(id: track.id), message: "track \(track.id): \(error)"))
        }
        if let config {
            entry.sampleRate = config.outputSampleRate
            entry.channels = config.channelCount
            entry.profile = config.profileName
        } else if let audio = sampleEntry.audio {
            // A rate above 65,535 Hz does not fit the sample entry's 16.16 field, which FLAC and
            // ALAC entries then set to 0: the media timescale is the rate.
            entry.sampleRate = audio.sampleRate > 0 ? audio.sampleRate : Int(track.timescale)
            entry.channels = audio.channelCount
        }
        // Media ticks to output samples: 1 but for HE-AAC in a core-rate timescale (fdkaac's,
        // qaac's, Apple's files).
        let outputRate = entry.sampleRate ?? Int(track.timescale)
        let ratio = config?.sbrPresent == true && track.timescale > 0 && outputRate > 0 ? Double(outputRate) / Double(track.timescale) : 1
        func samples(_ ticks: Int64) -> Int64 { ratio == 1 ? ticks : Int64(saturating: (Double(ticks) * ratio).rounded()) }
        entry.decodedFrames = samples(track.mediaDuration)
        if let config, let problem = timelineSkips(of: track, config: config) {
            damage.append(DamageEvent(.inconsistentHeader, message: problem))
        }
        if let ranges = track.editedMediaRanges(movieTimescale: movieTimescale), let first = ranges.first, let last = ranges.last {
            // A joined file: the first part's priming, the last part's padding.
            entry.priming = Int(samples(first.lowerBound))
            entry.remainder = Int(samples(max(0, track.mediaDuration.saturatingSubtracting(last.upperBound))))
        } else if let edit = track.mediaEdit, track.timescale > 0 {
            entry.priming = Int(samples(edit.mediaTime))
            // A segment_duration of 0 (fragmented files) leaves the end open: no remainder known.
            if let valid = track.editedMediaDuration(movieTimescale: movieTimescale) {
                entry.remainder = Int(samples(max(0, track.mediaDuration.saturatingSubtracting(edit.mediaTime).saturatingSubtracting(valid))))
            }
        } else {
            // No edit list: iTunes' gapless tag, in the track's or the movie's udta.
            for userData in [track.userData, file.userData].compactMap({ $0 }) {
                if let tags = try? MetadataTags.parse(udta: userData, path: track.path), let gapless = tags.gapless {
                    // iTunSMPB counts the core's samples for HE-AAC, as iTunes writes it.
                    let tagRatio = config.map { $0.sbrPresent && $0.outputSampleRate == 2 * $0.samplingFrequency ? 2 : 1 } ?? 1
                    entry.priming = gapless.priming * tagRatio
                    entry.remainder = gapless.padding * tagRatio
                    break
                }
            }
        }
        if entry.duration > 0 {
            // Saturating: the sizes are the file's, and a hostile trun declares any.
            let bytes = track.sampleTable.sampleSizes.totalBytes.saturatingAdding(track.fragments.byteCount)
            entry.bitrate = Int(Int64(saturating: Double(bytes) * 8 / (Double(track.mediaDuration) / Double(max(track.timescale, 1)))))
        }
    }
}

extension MP4Probe {
    /// A sentence when the time-to-sample table skips time a decoder does not: a packet that
    /// lasts at least one and a half frames of the AudioSpecificConfig's frame length (a
    /// muxer's timestamp gap). Decoders, ours and FFmpeg's, play the frames back to back, so
    /// after it the audio comes earlier than the table says. Small jitter (a delta of 1022 or
    /// 1025 for 1024) is not reported: it is the same timeline rounded.
    static func timelineSkips(of track: MP4Track, config: AudioSpecificConfig) -> String? {
        guard case .audio(let audio)? = try? config.formatDescription(), audio.sampleRate > 0 else { return nil }
        let units = Int64(audio.framesPerPacket) * Int64(track.timescale)
        guard units % Int64(audio.sampleRate) == 0 else { return nil }
        let frame = units / Int64(audio.sampleRate)
        var sample = 0
        var skips = 0
        var skipped: Int64 = 0
        var first: (sample: Int, delta: UInt32)?
        for entry in track.sampleTable.timeToSample {
            if Int64(entry.delta) * 2 >= frame * 3 {
                skips = skips.addingReportingOverflow(Int(entry.count)).partialValue
                skipped = skipped.saturatingAdding((Int64(entry.delta) - frame).saturatingMultiplied(by: Int64(entry.count)))
                if first == nil { first = (sample + 1, entry.delta) }
            }
            sample = sample.addingReportingOverflow(Int(entry.count)).partialValue
        }
        guard let first else { return nil }
        return "track \(track.id): stts gives sample \(first.sample) a duration of \(first.delta) where an AAC frame lasts \(frame) "
            + "(\(skips) such sample\(skips == 1 ? "" : "s"), \(skipped) units in all): the timeline skips time the frames do not hold; "
            + "decoders play the frames back to back"
    }
}

extension SampleSizes {
    var totalBytes: Int64 {
        switch self {
        case .constant(let size, let count): Int64(size).saturatingMultiplied(by: Int64(count))
        case .table(let sizes): sizes.reduce(Int64(0)) { $0.saturatingAdding(Int64($1)) }
        }
    }
}
