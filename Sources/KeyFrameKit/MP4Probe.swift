/// Describes an MP4/M4A/MOV file: every track with its codec, sample count, durations, audio
/// configuration, gapless priming and remainder, video size after the track matrix, and tags.
public enum MP4Probe {
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
            if let edit = track.mediaEdit, edit.segmentDuration > 0 {
                entry.duration = Double(edit.segmentDuration) / movieScale
            } else {
                entry.duration = mediaSeconds
            }
            if let problem = track.damage {
                entry.damage = problem.message
            }
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
            entry.sampleRate = audio.sampleRate
            entry.channels = audio.channelCount
        }
        entry.decodedFrames = track.mediaDuration
        if let edit = track.mediaEdit, track.timescale > 0 {
            entry.priming = Int(edit.mediaTime)
            // A segment_duration of 0 (fragmented files) leaves the end open: no remainder known.
            if let valid = track.editedMediaDuration(movieTimescale: movieTimescale) {
                entry.remainder = Int(max(0, track.mediaDuration.saturatingSubtracting(edit.mediaTime).saturatingSubtracting(valid)))
            }
        } else {
            // No edit list: iTunes' gapless tag, in the track's or the movie's udta.
            for userData in [track.userData, file.userData].compactMap({ $0 }) {
                if let tags = try? MetadataTags.parse(udta: userData, path: track.path), let gapless = tags.gapless {
                    entry.priming = gapless.priming
                    entry.remainder = gapless.padding
                    break
                }
            }
        }
        if entry.duration > 0 {
            let bytes = track.sampleTable.sampleSizes.totalBytes + track.fragmentRuns.reduce(Int64(0)) { $0 + $1.byteCountForReport }
            entry.bitrate = Int(Int64(saturating: Double(bytes) * 8 / (Double(track.mediaDuration) / Double(max(track.timescale, 1)))))
        }
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

extension FragmentRun {
    var byteCountForReport: Int64 {
        sizes.map { $0.reduce(Int64(0)) { $0.saturatingAdding(Int64($1)) } } ?? Int64(sampleCount).saturatingMultiplied(by: Int64(defaultSize))
    }
}
