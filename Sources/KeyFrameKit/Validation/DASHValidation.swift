public import SystemPackage

/// DASH MPDs (ISO/IEC 23009-1) checked against the media they name.
///
/// For each Representation addressed by a `SegmentTemplate` (5.3.9.4): its init segment and
/// media segments read as one ``/MP4/SegmentSequenceValidation``; each `SegmentTimeline` entry
/// (5.3.9.6) against the media: `S@d` against the sum of the segment's `trun` sample
/// durations, and `S@t − @presentationTimeOffset` (the period time the MPD gives, 5.3.9.2)
/// against the segment's `tfdt` less the init's edit (the priming it skips) — so the
/// presentation time offset is checked against the edit. Two ways of writing the first segment
/// are taken: at the media time its `tfdt` gives (the offset then carries the priming), or
/// from 0 and shortened by the priming (FFmpeg's). Then `@codecs` against the sample entry
/// (RFC 6381), `@audioSamplingRate` and `AudioChannelConfiguration` against the
/// AudioSpecificConfig, `@mediaPresentationDuration` against the presented length, `@bandwidth`
/// with `@minBufferTime` as 5.3.5.2 defines them (delivered at that rate, every segment is in
/// before it has played), and, in an Adaptation Set with `segmentAlignment`, the same segment
/// times in every Representation.
public enum DASHValidation {
    /// The findings for the MPD at `path`.
    ///
    /// - Throws: ``PipelineError`` when the file cannot be read, or not as an MPD.
    public static func findings(forManifest path: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let source: FileByteSource
        do { source = try FileByteSource(path: path.string) } catch { throw .stream(error) }
        guard source.byteCount <= 64 << 20 else { throw .unsupported("\(path): \(source.byteCount) bytes is not an MPD") }
        let bytes: [UInt8]
        do { bytes = try source.read(at: 0, count: Int(source.byteCount)) } catch { throw .stream(error) }
        let manifest: DASHManifest
        do { manifest = try DASHManifest(text: String(decoding: bytes, as: UTF8.self)) } catch { throw .unsupported("\(path): \(error)") }
        var findings: [ValidationFinding] = []
        for (periodIndex, period) in manifest.periods.enumerated() {
            for (setIndex, set) in period.adaptationSets.enumerated() {
                var timelines: [(id: String, segments: [DASHManifest.Segment])] = []
                var tracks: [(id: String, track: SegmentSequenceValidation.TrackSummary)] = []
                for representation in set.representations {
                    let location = "Period \(period.id ?? String(periodIndex)) AdaptationSet \(set.id ?? String(setIndex)) Representation \(representation.id) (line \(representation.line))"
                    let check = RepresentationCheck(manifest: manifest, period: period, set: set, representation: representation, path: path, location: location)
                    findings += check.findings
                    if let segments = check.segments { timelines.append((representation.id, segments)) }
                    if let track = check.track { tracks.append((representation.id, track)) }
                }
                let location = "Period \(period.id ?? String(periodIndex)) AdaptationSet \(set.id ?? String(setIndex)) (line \(set.line))"
                if set.segmentAlignment, let first = timelines.first {
                    for other in timelines.dropFirst() where other.segments.map({ [$0.time, $0.duration] }) != first.segments.map({ [$0.time, $0.duration] }) {
                        findings.append(ValidationFinding(.error, file: path.string, location: location, rule: "segmentAlignment: the same segment times",
                                                          expected: "Representation \(other.id)'s segments at Representation \(first.id)'s times",
                                                          found: "different ones"))
                    }
                }
                if let first = tracks.first {
                    for other in tracks.dropFirst() {
                        let a = first.track, b = other.track
                        if a.sampleRate != b.sampleRate || a.channelCount != b.channelCount || a.audioObjectType != b.audioObjectType || a.sampleEntryType != b.sampleEntryType {
                            findings.append(ValidationFinding(.warning, file: path.string, location: location, rule: "the Representations' audio configuration (a switch without a glitch)",
                                                              expected: "\(a.sampleEntryType) object type \(a.audioObjectType ?? 0), \(a.sampleRate ?? 0) Hz, \(a.channelCount ?? 0) channels (Representation \(first.id))",
                                                              found: "\(b.sampleEntryType) object type \(b.audioObjectType ?? 0), \(b.sampleRate ?? 0) Hz, \(b.channelCount ?? 0) channels (Representation \(other.id))"))
                        }
                    }
                }
            }
        }
        return findings
    }

    /// One Representation checked.
    struct RepresentationCheck {
        var findings: [ValidationFinding] = []
        var segments: [DASHManifest.Segment]?
        var track: SegmentSequenceValidation.TrackSummary?

        init(manifest: DASHManifest, period: DASHManifest.Period, set: DASHManifest.AdaptationSet, representation: DASHManifest.Representation,
             path: FilePath, location: String) {
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
            let segments: [DASHManifest.Segment]
            do { segments = try manifest.segments(of: representation, in: period) } catch {
                add(.error, "SegmentTimeline", expected: "segments that can be listed", found: "\(error)")
                return
            }
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
                return HLSValidation.resolve(expanded, against: directory.appending("manifest"))
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
            if let duration = manifest.mediaPresentationDuration, manifest.periods.count == 1, let frame = track.frameDuration {
                let total = (0..<segments.count).compactMap { media.timing($0)?.duration }.reduce(Int64(0), +)
                let presented = track.validLength ?? (total - track.priming)
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

        /// `S@t`/`S@d` against `tfdt`, the `trun`s and the edit.
        private static func timelineFindings(_ segments: [DASHManifest.Segment], media: ManifestMedia, template: DASHManifest.SegmentTemplate,
                                             track: SegmentSequenceValidation.TrackSummary, name: String, location: String) -> [ValidationFinding] {
            var findings: [ValidationFinding] = []
            func add(_ severity: ValidationFinding.Severity, _ rule: String, _ expected: String, _ found: String, _ at: String?) {
                findings.append(ValidationFinding(severity, file: name, location: at.map { "\(location) \($0)" } ?? location, rule: rule,
                                                  expected: expected, found: found))
            }
            let scale = Double(template.timescale) / Double(track.timescale)
            func mpdUnits(_ media: Int64) -> Int64 { Int64(saturating: (Double(media) * scale).rounded()) }
            let skip = mpdUnits(track.priming)
            var offsets: [Int64] = []
            var checked: [(index: Int, segment: DASHManifest.Segment, start: Int64, duration: Int64)] = []
            for (index, segment) in segments.enumerated() {
                guard let timing = media.timing(index), let decode = timing.firstDecodeTime else { continue }
                let start = mpdUnits(decode).saturatingSubtracting(skip)
                let duration = mpdUnits(timing.duration)
                checked.append((index, segment, start, duration))
                // The first segment written from 0, shortened by the priming (FFmpeg's way).
                let clampedFirst = start < 0 && segment.time.saturatingSubtracting(template.presentationTimeOffset) == 0
                    && segment.duration == duration.saturatingAdding(start)
                if !clampedFirst { offsets.append(segment.time.saturatingSubtracting(template.presentationTimeOffset).saturatingSubtracting(start)) }
            }
            // One offset for every segment: the presentationTimeOffset disagrees with the edit.
            let tolerance: Int64 = template.timescale == Int64(track.timescale) ? 0 : 1
            if let offset = offsets.first, abs(offset) > tolerance, offsets.allSatisfy({ abs($0 - offset) <= tolerance }) {
                add(.error, "presentationTimeOffset against the init's edit (23009-1 5.3.9.2)",
                    "\(template.presentationTimeOffset + offset) (S@t less it is the segments' tfdt less the edit's media_time \(track.priming))",
                    "\(template.presentationTimeOffset)", nil)
            } else {
                for entry in checked {
                    let mpdStart = entry.segment.time.saturatingSubtracting(template.presentationTimeOffset)
                    let clampedFirst = entry.start < 0 && mpdStart == 0 && entry.segment.duration == entry.duration.saturatingAdding(entry.start)
                    if !clampedFirst && abs(mpdStart - entry.start) > tolerance {
                        add(.error, "S@t against tfdt and the edit (23009-1 5.3.9.6)",
                            "t=\(entry.start.saturatingAdding(template.presentationTimeOffset)) (tfdt less the edit's media_time, plus presentationTimeOffset)",
                            "t=\(entry.segment.time)", "segment \(entry.index + 1) (number \(entry.segment.number))")
                    }
                }
            }
            for entry in checked {
                let mpdStart = entry.segment.time.saturatingSubtracting(template.presentationTimeOffset)
                let clampedFirst = entry.start < 0 && mpdStart == 0 && entry.segment.duration == entry.duration.saturatingAdding(entry.start)
                if !clampedFirst && abs(entry.segment.duration - entry.duration) > tolerance {
                    add(.error, "S@d against the trun sample durations (23009-1 5.3.9.6)",
                        "d=\(entry.duration)", "d=\(entry.segment.duration)", "segment \(entry.index + 1) (number \(entry.segment.number))")
                }
            }
            return findings
        }
    }
}
