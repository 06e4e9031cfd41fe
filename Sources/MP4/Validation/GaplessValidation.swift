public import MediaCore

/// The gapless signals of an MP4/M4A/M4B, checked against each other (the first part of issue
/// 21's `keyframe validate`): for each AAC track,
///
/// - the edit list (ISO/IEC 14496-12 8.6.6) against iTunSMPB: the priming (`media_time` against
///   the tag's second field) and the valid length (the edit's duration, in media units, against
///   the tag's fourth field) agree — an error when they do not, since players that read one or
///   the other then start or end at different samples;
/// - the encoder's priming as far as the file tells it: an AAC track whose edit starts at 0 (or
///   which has no edit) and which has no iTunSMPB gets a warning that its priming will be heard;
/// - a last sample shorter than a frame (a trimmed tail, as Chromium and FFmpeg read it) ends
///   where the valid length says: the edit's end, or for a joined file (a media edit per part,
///   which iTunSMPB cannot describe and is not checked against) the last part's.
public enum GaplessValidation {
    /// The findings for `file`, named `name` in them.
    public static func findings(in file: MP4File, name: String) -> [ValidationFinding] {
        var findings: [ValidationFinding] = []
        let movieTags = file.userData.flatMap { try? MetadataTags.parse(udta: $0, path: BoxPath(components: ["moov", "udta"])) }
        for (index, track) in file.tracks.enumerated() where track.mediaType == .audio && track.audioCodec == .aac {
            let trak = "moov/trak[\(index + 1)]"
            let trackTags = track.userData.flatMap { try? MetadataTags.parse(udta: $0, path: track.path) }
            let gapless = trackTags?.gapless ?? movieTags?.gapless
            guard let config = try? track.audioSpecificConfig(), case .audio(let audio)? = try? config.formatDescription(),
                  audio.sampleRate > 0, track.timescale > 0 else { continue }
            // Media units per output sample (1 when the timescale is the rate).
            let unitsPerSample = Double(track.timescale) / Double(audio.sampleRate)
            // Samples to media units, `nil` when the file's values are past what an Int64 holds.
            func units(_ samples: Int64) -> Int64? { Int64(exactly: (Double(samples) * unitsPerSample).rounded()) }
            // iTunSMPB counts samples at the rate iTunes writes: the core's for HE-AAC (half the
            // output rate), else the output rate.
            let tagUnitsPerSample = Double(track.timescale) / Double(config.sbrPresent ? config.samplingFrequency : audio.sampleRate)
            func tagUnits(_ samples: Int64) -> Int64? { Int64(exactly: (Double(samples) * tagUnitsPerSample).rounded()) }
            let tick = max(1, Int64(exactly: (Double(track.timescale) / Double(max(file.movieTimescale, 1))).rounded(.up)) ?? 1)
            guard let frame = units(Int64(audio.framesPerPacket)) else { continue }
            let edit = track.mediaEdit
            if let edit, let gapless, track.editedMediaRanges(movieTimescale: file.movieTimescale) == nil {
                if let priming = tagUnits(Int64(gapless.priming)), edit.mediaTime != priming {
                    findings.append(ValidationFinding(.error, file: name, location: "\(trak)/edts/elst", rule: "elst against iTunSMPB: priming",
                                                      expected: "media_time \(priming) (iTunSMPB's \(gapless.priming))",
                                                      found: "media_time \(edit.mediaTime)"))
                }
                if let length = track.editedMediaDuration(movieTimescale: file.movieTimescale), gapless.originalSampleCount > 0,
                   let tagged = tagUnits(gapless.originalSampleCount) {
                    // One tag sample is two media units for HE-AAC: an odd length rounds.
                    let tagTick = tagUnitsPerSample == unitsPerSample ? tick : max(tick, Int64(tagUnitsPerSample.rounded(.up)))
                    let difference = length.saturatingSubtracting(tagged)
                    if difference >= tagTick || difference <= -tagTick {
                        findings.append(ValidationFinding(.error, file: name, location: "\(trak)/edts/elst", rule: "elst against iTunSMPB: valid length",
                                                          expected: "\(tagged) media units (iTunSMPB's \(gapless.originalSampleCount) samples)",
                                                          found: "\(length) media units"))
                    }
                }
            }
            if (edit == nil || edit?.mediaTime == 0), gapless == nil || gapless?.priming == 0 {
                findings.append(ValidationFinding(.warning, file: name, location: edit == nil ? trak : "\(trak)/edts/elst",
                                                  rule: "encoder priming not signalled",
                                                  expected: "an edit whose media_time skips the encoder's priming, or iTunSMPB",
                                                  found: edit == nil ? "no edit list and no iTunSMPB" : "media_time 0 and no iTunSMPB priming: the priming will be heard"))
            }
            // A short last sample trims the tail; it must end where the valid length does.
            let stts = track.sampleTable.timeToSample
            // Every other sample one frame long: a decoder plays the frames back to back, so a
            // table that jitters or skips (a muxer writing timestamps) tells another timeline.
            let tolerance = Self.frameTolerance(audio, timescale: track.timescale)
            func isFrame(_ delta: UInt32) -> Bool { abs(Int64(delta) - frame) <= tolerance }
            if track.fragments.runCount == 0, let odd = stts.dropLast().first(where: { !isFrame($0.delta) })
                ?? (stts.last.map { Int64($0.delta) > frame + tolerance } == true ? stts.last : nil) {
                let count = stts.dropLast().filter { !isFrame($0.delta) }.reduce(0) { $0 + Int($1.count) }
                    + (stts.last.map { Int64($0.delta) > frame + tolerance ? Int($0.count) : 0 } ?? 0)
                findings.append(ValidationFinding(.warning, file: name, location: "\(trak)/mdia/minf/stbl/stts", rule: "whole frames: a sample lasts one frame (but the last)",
                                                  expected: "\(frame) (decoders play the frames back to back)",
                                                  found: "\(odd.delta) (\(count) samples not one frame long)"))
            }
            // The presented end: the last media edit's (a joined file has one per part).
            let presentedEnd: Int64? = if let ranges = track.editedMediaRanges(movieTimescale: file.movieTimescale) {
                ranges.last?.upperBound
            } else if let edit, let length = track.editedMediaDuration(movieTimescale: file.movieTimescale) {
                edit.mediaTime.saturatingAdding(length)
            } else {
                nil
            }
            if track.fragments.runCount == 0, let last = stts.last, last.count == 1, stts.count > 1, Int64(last.delta) < frame,
               let end = presentedEnd {
                let difference = track.mediaDuration.saturatingSubtracting(end)
                if difference >= tick || difference <= -tick {
                    findings.append(ValidationFinding(.error, file: name, location: "\(trak)/mdia/minf/stbl/stts", rule: "short last sample against the valid length",
                                                      expected: "the samples to end at \(end) media units (the edit's end)",
                                                      found: "\(track.mediaDuration)"))
                }
            }
        }
        findings += opusPreSkipFindings(in: file, name: name)
        return findings
    }

    /// For each Opus track (Encapsulation of Opus in ISO Base Media File Format, 4.2): the
    /// edit's `media_time` against `dOps`' pre-skip (in the track's timescale: the pre-skip
    /// counts 48 kHz samples), an error when they differ, since players trim one or the other; a
    /// pre-skip without an edit is a warning, as it will be heard.
    static func opusPreSkipFindings(in file: MP4File, name: String) -> [ValidationFinding] {
        var findings: [ValidationFinding] = []
        for (index, track) in file.tracks.enumerated() where track.mediaType == .audio && track.audioCodec == .opus && track.timescale > 0 {
            // dOps: version, channel count, then the pre-skip (16 bits).
            guard let dOps = track.sampleEntry?.configurationBoxes["dOps"], dOps.count >= 4 else { continue }
            let preSkip = Int64(dOps[2]) << 8 | Int64(dOps[3])
            let expected = (preSkip * Int64(track.timescale) + 24000) / 48000
            let trak = "moov/trak[\(index + 1)]"
            if let edit = track.mediaEdit {
                if edit.mediaTime != expected {
                    findings.append(ValidationFinding(.error, file: name, location: "\(trak)/edts/elst", rule: "elst against dOps: pre-skip",
                                                      expected: "media_time \(expected) (dOps' pre-skip \(preSkip))", found: "media_time \(edit.mediaTime)"))
                }
            } else if preSkip > 0 {
                findings.append(ValidationFinding(.warning, file: name, location: trak, rule: "pre-skip not trimmed",
                                                  expected: "an edit whose media_time is dOps' pre-skip \(preSkip)", found: "no edit list"))
            }
        }
        return findings
    }

    /// How far a sample's duration may be from one frame's, in media units: 1 where a frame is
    /// no whole number of the timescale's units (2089 and 2090 for 44.1 kHz in a 90-kHz
    /// timescale), else 0.
    static func frameTolerance(_ audio: EncodedAudioFormat, timescale: Int) -> Int64 {
        guard audio.sampleRate > 0 else { return 0 }
        return (Int64(audio.framesPerPacket) * Int64(timescale)) % Int64(audio.sampleRate) == 0 ? 0 : 1
    }

}
