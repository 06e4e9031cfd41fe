public import SystemPackage

/// DASH MPDs (ISO/IEC 23009-1) checked against the media they name.
///
/// For each Representation addressed by a `SegmentTemplate` (5.3.9.4): its init segment and
/// media segments read as one ``/MP4/SegmentSequenceValidation``; each `SegmentTimeline` entry
/// (5.3.9.6) against the media: `S@d` against the sum of the segment's `trun` sample
/// durations, and `S@t` against the segment's presentation time, its `tfdt` less the init's edit
/// (the priming the edit skips; the first segment may start at 0 instead, shortened by the
/// priming, as FFmpeg writes it); `@presentationTimeOffset` against the edit (the priming is
/// not skipped twice). Then `@codecs` against the sample entry (RFC 6381),
/// `@audioSamplingRate` and `AudioChannelConfiguration` against the AudioSpecificConfig,
/// `@mediaPresentationDuration` against the presented length, `@bandwidth` with
/// `@minBufferTime` as 5.3.5.2 defines them (delivered at that rate, every segment is in before
/// it has played), and, in an Adaptation Set with `segmentAlignment`, the same segment times in
/// every Representation.
public enum DASHValidation {
    /// The findings for the MPD at `path`.
    ///
    /// - Throws: ``/MediaCore/PipelineError`` when the file cannot be read, or not as an MPD.
    public static func findings(forManifest path: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let text = try ManifestText.read(path, what: "an MPD")
        let manifest: DASHManifest
        do { manifest = try DASHManifest(text: text) } catch { throw error.about(path) }
        var findings: [ValidationFinding] = []
        // The segments listed and checked in all, for the whole MPD: a template can name a
        // million segments per Representation in a few bytes.
        var budget = Self.segmentBudget
        for (periodIndex, period) in manifest.periods.enumerated() {
            for (setIndex, set) in period.adaptationSets.enumerated() {
                var timelines: [(id: String, segments: [DASHManifest.Segment])] = []
                var tracks: [(id: String, track: SegmentSequenceValidation.TrackSummary)] = []
                for representation in set.representations {
                    let location = "Period \(period.id ?? String(periodIndex)) AdaptationSet \(set.id ?? String(setIndex)) Representation \(representation.id) (line \(representation.line))"
                    let check = RepresentationCheck(manifest: manifest, period: period, set: set, representation: representation, path: path, location: location,
                                                    budget: &budget)
                    findings += check.findings
                    if let segments = check.segments { timelines.append((representation.id, segments)) }
                    if let track = check.track { tracks.append((representation.id, track)) }
                }
                let location = "Period \(period.id ?? String(periodIndex)) AdaptationSet \(set.id ?? String(setIndex)) (line \(set.line))"
                if set.segmentAlignment, let first = timelines.first {
                    for other in timelines.dropFirst()
                    where other.segments.count != first.segments.count
                        || zip(other.segments, first.segments).contains(where: { $0.time != $1.time || $0.duration != $1.duration }) {
                        findings.append(ValidationFinding(.error, file: path.string, location: location, rule: "segmentAlignment: the same segment times",
                                                          expected: "Representation \(other.id)'s segments at Representation \(first.id)'s times",
                                                          found: "different ones"))
                    }
                }
                if let first = tracks.first {
                    for other in tracks.dropFirst() {
                        if let finding = ManifestMedia.audioConfigurationFinding(first.track, "Representation \(first.id)", other.track, "Representation \(other.id)",
                                                                                 file: path.string, location: location) {
                            findings.append(finding)
                        }
                    }
                }
            }
        }
        return findings
    }

    /// The most segments one MPD's Representations list and check together.
    static let segmentBudget = 100_000

    /// One Representation checked.
    struct RepresentationCheck {
        var findings: [ValidationFinding] = []
        var segments: [DASHManifest.Segment]?
        var track: SegmentSequenceValidation.TrackSummary?

        init(manifest: DASHManifest, period: DASHManifest.Period, set: DASHManifest.AdaptationSet, representation: DASHManifest.Representation,
             path: FilePath, location: String, budget: inout Int) {
            let name = path.string
            func add(_ severity: ValidationFinding.Severity, _ rule: String, expected: String, found: String, at where_: String? = nil) {
                findings.append(ValidationFinding(severity, file: name, location: where_ ?? location, rule: rule, expected: expected, found: found))
            }
            if let note = representation.unsupportedAddressing {
                add(.warning, "segments checked: SegmentTemplate", expected: "a SegmentTemplate", found: "\(note): its segments are not checked")
                return
            }
            guard let template = representation.segmentTemplate, let initialization = template.initialization, let mediaName = template.media else {
                add(.warning, "segments checked: SegmentTemplate", expected: "a SegmentTemplate with @initialization and @media", found: "none: its segments are not checked")
                return
            }
            guard budget > 0 else {
                add(.warning, "segments checked: at most \(DASHValidation.segmentBudget) in an MPD", expected: "fewer segments",
                    found: "the budget spent: this Representation is not checked")
                return
            }
            let segments: [DASHManifest.Segment]
            do { segments = try manifest.segments(of: representation, in: period) } catch {
                add(.error, "SegmentTimeline", expected: "segments that can be listed", found: "\(error)")
                return
            }
            guard segments.count <= budget else {
                budget = 0
                add(.warning, "segments checked: at most \(DASHValidation.segmentBudget) in an MPD", expected: "fewer segments",
                    found: "\(segments.count): this Representation is not checked")
                return
            }
            budget -= segments.count
            self.segments = segments
            // BaseURLs from the MPD down, relative to the MPD's directory.
            var directory = path.removingLastComponent()
            for base in [manifest.baseURL, period.baseURL, set.baseURL, representation.baseURL].compactMap({ $0 }) {
                guard !base.contains("://") else {
                    add(.warning, "segments checked: files beside the MPD", expected: "a relative BaseURL", found: "\(base): a URL, not fetched")
                    return
                }
                let file = FilePath(base)
                let folder = base.hasSuffix("/") ? file : file.removingLastComponent()
                directory = folder.isAbsolute ? folder : directory.appending(folder.components)
            }
            func file(_ template: String, number: Int, time: Int64) -> FilePath? {
                guard let expanded = try? DASHManifest.expand(template, representationID: representation.id, number: number, time: time,
                                                              bandwidth: representation.bandwidth) else { return nil }
                return ManifestMedia.resolve(expanded, against: directory.appending("manifest"))
            }
            guard let initPath = file(initialization, number: template.startNumber, time: 0) else {
                add(.warning, "segments checked: files beside the MPD", expected: "a relative @initialization", found: "\(initialization): a URL or a bad template, not fetched")
                return
            }
            var references: [ManifestMedia.Reference] = []
            for (index, segment) in segments.enumerated() {
                guard let segmentPath = file(mediaName, number: segment.number, time: segment.time) else {
                    add(.warning, "segments checked: files beside the MPD", expected: "a relative @media", found: "\(mediaName): a URL or a bad template, not fetched")
                    return
                }
                references.append(.init(path: segmentPath, range: nil, location: "\(location) segment \(index + 1)"))
            }
            let media = ManifestMedia(manifest: name, initSegment: .init(path: initPath, range: nil, location: "\(location) initialization"), segments: references)
            findings += media.findings
            findings += media.sequence?.findings ?? []
            guard let track = media.sequence?.track, track.timescale > 0 else { return }
            self.track = track
            findings += Self.timelineFindings(segments, media: media, template: template, track: track, name: name, location: location)
            if let codecs = representation.codecs, let actual = track.codecs, codecs != actual {
                add(.error, "@codecs against the sample entry (RFC 6381)", expected: "\(actual) (\(track.sampleEntryType))", found: codecs)
            }
            if let rate = representation.audioSamplingRate, let actual = track.sampleRate, rate != actual {
                add(.error, "@audioSamplingRate against the AudioSpecificConfig", expected: "\(actual)", found: "\(rate)")
            }
            if let channels = representation.channelConfiguration, let actual = track.channelCount, Int(channels) != actual {
                add(.error, "AudioChannelConfiguration against the AudioSpecificConfig", expected: "\(actual)", found: channels)
            }
            if let duration = manifest.mediaPresentationDuration, manifest.periods.count == 1, let frame = track.frameDuration,
               (0..<segments.count).allSatisfy({ media.timing($0) != nil }) {
                let total = (0..<segments.count).compactMap { media.timing($0)?.duration }.reduce(Int64(0)) { $0.saturatingAdding($1) }
                let presented = track.validLength ?? total.saturatingSubtracting(track.priming)
                let seconds = Double(presented) / Double(track.timescale)
                if abs(seconds - duration) > Double(frame) / Double(track.timescale) {
                    add(.warning, "@mediaPresentationDuration against the presented length", expected: "\(fixed(seconds, digits: 3)) s (the samples after the edit)",
                        found: "\(duration) s")
                }
            }
            if let bandwidth = representation.bandwidth, bandwidth > 0, let buffer = manifest.minBufferTime {
                // 5.3.5.2: delivered at @bandwidth from the first bit, playing from
                // @minBufferTime on: each segment in by the time it has played.
                var bits = 0.0
                var played = 0.0
                for (index, size) in media.sizes.enumerated() {
                    guard let timing = media.timing(index) else { continue }
                    bits += Double(size) * 8
                    played += Double(timing.duration) / Double(track.timescale)
                    if bits / Double(bandwidth) > buffer + played + 0.001 {
                        add(.error, "@bandwidth with @minBufferTime (23009-1 5.3.5.2)",
                            expected: "segment \(index + 1) delivered by \(fixed(buffer + played, digits: 3)) s at \(bandwidth) b/s",
                            found: "\(fixed(bits / Double(bandwidth), digits: 3)) s")
                        break
                    }
                }
            }
        }

        /// `S@t`/`S@d` against `tfdt`, the `trun`s and the edit, and the presentation time offset
        /// against the edit. The MPD's times are the media's presentation times (23009-1 5.3.9.6;
        /// in ISO BMFF, after the edit list, as 14496-12's `sidx` counts them): a segment starts at
        /// its `tfdt` less the edit's `media_time`. The first may start at 0 instead, shortened by
        /// the priming (FFmpeg's way). A timeline in decode times (`S@t` = `tfdt`) with the priming
        /// as `@presentationTimeOffset` skips the priming twice in a browser: Chromium's MSE parser
        /// applies the edit itself, and dash.js and Shaka subtract the offset again.
        private static func timelineFindings(_ segments: [DASHManifest.Segment], media: ManifestMedia, template: DASHManifest.SegmentTemplate,
                                             track: SegmentSequenceValidation.TrackSummary, name: String, location: String) -> [ValidationFinding] {
            var findings: [ValidationFinding] = []
            func add(_ rule: String, _ expected: String, _ found: String, _ at: String?) {
                findings.append(ValidationFinding(.error, file: name, location: at.map { "\(location) \($0)" } ?? location, rule: rule,
                                                  expected: expected, found: found))
            }
            let scale = Double(template.timescale) / Double(track.timescale)
            func mpdUnits(_ media: Int64) -> Int64 { Int64(saturating: (Double(media) * scale).rounded()) }
            // One unit either way when the timescales differ (a rounding), none when they agree.
            let tolerance: UInt64 = template.timescale == Int64(track.timescale) ? 0 : 1
            func near(_ a: Int64, _ b: Int64) -> Bool { a.saturatingSubtracting(b).magnitude <= tolerance }
            let skip = mpdUnits(track.priming)
            let offset = template.presentationTimeOffset
            if skip > 0, near(offset, skip) {
                add("presentationTimeOffset against the init's edit (23009-1 5.3.9.2)",
                    "0 (the edit already skips the \(track.priming)-sample priming)",
                    "\(offset): players that apply the edit (Chromium's MSE) and the offset (dash.js, Shaka) skip it twice", nil)
            }
            var decodeTimeline = 0
            var checked = 0
            var startMismatches: [(index: Int, segment: DASHManifest.Segment, expected: Int64)] = []
            var durationMismatches: [(index: Int, segment: DASHManifest.Segment, expected: Int64)] = []
            for (index, segment) in segments.enumerated() {
                guard let timing = media.timing(index), let decode = timing.firstDecodeTime else { continue }
                checked += 1
                let decodeStart = mpdUnits(decode)
                let start = decodeStart.saturatingSubtracting(skip)
                let duration = mpdUnits(timing.duration)
                // The first segment from 0, shortened by the priming.
                let clamped = start < 0 && segment.time == 0 && near(segment.duration, duration.saturatingAdding(start))
                // (The first segment, from 0 and shortened by the priming, is on both timelines.)
                if skip > 0 && !clamped && near(segment.time, decodeStart) && !near(segment.time, start) { decodeTimeline += 1 }
                if !clamped && !near(segment.time, start) { startMismatches.append((index, segment, start)) }
                if !clamped && !near(segment.duration, duration) { durationMismatches.append((index, segment, duration)) }
            }
            if checked > 0 && decodeTimeline == checked {
                add("S@t on the presentation timeline (23009-1 5.3.9.6)",
                    "each S@t its segment's tfdt less the edit's media_time \(track.priming)",
                    "S@t = tfdt (decode times): with the edit, players present every segment \(track.priming) samples early", nil)
            } else {
                for mismatch in startMismatches {
                    add("S@t against tfdt and the edit (23009-1 5.3.9.6)", "t=\(mismatch.expected) (tfdt less the edit's media_time)",
                        "t=\(mismatch.segment.time)", "segment \(mismatch.index + 1) (number \(mismatch.segment.number))")
                }
            }
            for mismatch in durationMismatches {
                add("S@d against the trun sample durations (23009-1 5.3.9.6)", "d=\(mismatch.expected)", "d=\(mismatch.segment.duration)",
                    "segment \(mismatch.index + 1) (number \(mismatch.segment.number))")
            }
            return findings
        }
    }
}
