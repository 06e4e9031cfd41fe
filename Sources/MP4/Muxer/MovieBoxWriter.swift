internal import MediaCore
internal import AACBitstream
internal import VideoBitstream

/// Writes `ftyp` and `moov` for the muxer (ISO/IEC 14496-12 8.2–8.7, 14496-14 for `mp4a`/`esds`,
/// 14496-15 for `avc1`/`hvc1`), and the `roll` sample groups and iTunes tags of gapless AAC.
struct MovieBoxWriter {
    let tracks: [MuxerTrack]
    let movieTimescale: Int32
    let transform: TrackTransform
    let encoderName: String
    /// Added to every chunk offset (the bytes a faststart layout puts before `mdat`).
    var chunkOffsetShift: Int64 = 0
    /// Write `mvex` and empty sample tables (fragmented files). Fragmented movies use 64-bit
    /// fields throughout, so that the moov written first can be rewritten in place, with the same
    /// size, once the durations are known.
    var fragmented = false
    /// Fragmented: the durations known so far (0 while recording), per track id, in media units.
    var fragmentedMediaDurations: [UInt32: Int64] = [:]
    /// A CMAF header (ISO/IEC 23000-19 7.3): with ``fragmented``, every duration is 0 (the
    /// gapless edit's `segment_duration` too: the priming skipped, then to the end), while
    /// iTunSMPB still gives the valid length from ``fragmentedMediaDurations``.
    var openEnded = false
    /// No iTunSMPB in `udta` (a DASH CMAF header: the first segment's `moof` carries it).
    var omitsGaplessTag = false
    /// The tags written into `ilst` after the encoder tag.
    var metadata = ITunesMetadata()
    /// Each track's measured loudness, written in its `udta` as a `ludt` (ISO/IEC 14496-12
    /// 12.2.7).
    var loudness: [UInt32: StreamLoudness] = [:]
    /// Chapters: a `chpl` in `udta` and a chapter track whose samples are at ``chapterDataOffset``.
    var chapters: [MovieChapter] = []
    /// Where the chapter track's samples lie (before ``chunkOffsetShift``).
    var chapterDataOffset: Int64?

    static let one16: UInt32 = 0x0001_0000

    init(tracks: [MuxerTrack], movieTimescale: Int32, transform: TrackTransform, encoderName: String) {
        self.tracks = tracks
        self.movieTimescale = movieTimescale
        self.transform = transform
        self.encoderName = encoderName
    }

    init(tracks: [MuxerTrack], movieTimescale: Int32, configuration: MuxerConfiguration) {
        self.init(tracks: tracks, movieTimescale: movieTimescale, transform: configuration.preferredTransform,
                  encoderName: configuration.encoderName)
    }

    init(context: MuxerContext, configuration: MuxerConfiguration) {
        self.init(tracks: context.tracks, movieTimescale: context.movieTimescale, configuration: configuration)
        metadata = context.metadata
        if let offset = context.chapterDataOffset, !context.chapters.isEmpty {
            chapters = context.chapters
            chapterDataOffset = offset
        }
    }

    /// The chapters written, as the movie carries them, and the chapter track's ID.
    private var writtenChapters: (chapters: [MovieChapter], trackID: UInt32)? {
        guard chapterDataOffset != nil, !fragmented else { return nil }
        let duration = tracks.map(movieDuration).max() ?? 0
        let list = chapters.normalized(duration: MediaTime(value: Int64(clamping: duration), timescale: movieTimescale))
        return list.isEmpty ? nil : (list, (tracks.map(\.id).max() ?? 0) + 1)
    }

    /// `ftyp` for `tracks` (the `avc1` brand only with an H.264 track).
    static func fileType(tracks: [MuxerTrack], configuration: MuxerConfiguration, fragmented: Bool) -> [UInt8] {
        let hasH264 = tracks.contains { if case .video(let video) = $0.format { video.codec == .h264 } else { false } }
        return fileType(hasVideo: configuration.mediaTypes.contains(.video) || tracks.contains { $0.mediaType == .video },
                        fragmented: fragmented, hasH264: hasH264, audiobook: configuration.isAudiobook)
    }

    static func fileType(hasVideo: Bool, fragmented: Bool, hasH264: Bool = false, audiobook: Bool = false) -> [UInt8] {
        var box = BoxWriter()
        box.box("ftyp") { b in
            if hasVideo || fragmented {
                b.fourCC("isom"); b.u32(512)
                for brand: FourCharacterCode in (fragmented ? ["isom", "iso6", "iso2", "mp41"] : ["isom", "iso2", "mp41"]) { b.fourCC(brand) }
                if hasH264 { b.fourCC("avc1") }
            } else {
                // An audiobook (.m4b) is `M4B ` (Apple's players file it under books), also `M4A `.
                b.fourCC(audiobook ? "M4B " : "M4A "); b.u32(512)
                for brand: FourCharacterCode in (audiobook ? ["M4B ", "M4A ", "isom", "iso2"] : ["M4A ", "isom", "iso2"]) { b.fourCC(brand) }
            }
        }
        return box.bytes
    }

    /// Whether a chunk offset needs `co64`.
    func needsLargeOffsets() -> Bool {
        tracks.contains { track in track.chunkOffsets.contains { Int64($0) + chunkOffsetShift > Int64(UInt32.max) } }
            || (chapterDataOffset.map { $0 + chunkOffsetShift > Int64(UInt32.max) } ?? false)
    }

    /// A track's duration in movie timescale units: its edit when it has one, else its media.
    func movieDuration(of track: MuxerTrack) -> UInt64 {
        if openEnded { return 0 }
        if fragmented {
            let media = fragmentedMediaDurations[track.id] ?? 0
            guard media > 0 else { return 0 }
            let valid = track.gapless.map { $0.validFrameCount > 0 ? $0.validFrameCount : media - Int64($0.priming) } ?? media
            return UInt64(max(0, Int64(saturating: Double(valid) * Double(movieTimescale) / Double(track.timescale))))
        }
        if let gapless = track.gapless {
            return UInt64(max(0, Int64(saturating: Double(gapless.validFrameCount) * Double(movieTimescale) / Double(track.timescale))))
        }
        if let segments = track.segments {
            return segments.reduce(UInt64(0)) { $0 + editDuration(of: $1, track: track) }
        }
        return UInt64(max(0, Int64(saturating: Double(track.mediaDuration) * Double(movieTimescale) / Double(track.timescale))))
    }

    /// A range of media samples as an edit's `segment_duration` in the movie timescale.
    func editDuration(of range: Range<Int64>, track: MuxerTrack) -> UInt64 {
        UInt64(max(0, Int64(saturating: (Double(range.count) * Double(movieTimescale) / Double(track.timescale)).rounded())))
    }

    func movie() -> [UInt8] {
        let large = needsLargeOffsets()
        var box = BoxWriter()
        box.box("moov") { moov in
            let duration = tracks.map(movieDuration).max() ?? 0
            moov.fullBox("mvhd", version: duration > UInt64(UInt32.max) || fragmented ? 1 : 0) { b in
                if duration > UInt64(UInt32.max) || fragmented {
                    b.u64(0); b.u64(0); b.u32(UInt32(movieTimescale)); b.u64(duration)
                } else {
                    b.u32(0); b.u32(0); b.u32(UInt32(movieTimescale)); b.u32(UInt32(duration))
                }
                b.u32(Self.one16); b.u16(0x0100); b.zeros(10)
                for value in TrackTransform.identity.matrix { b.i32(value) }
                b.zeros(24)
                b.u32((tracks.map(\.id).max() ?? 0) + (writtenChapters == nil ? 1 : 2))
            }
            for track in tracks { writeTrack(track, into: &moov, largeOffsets: large) }
            if let written = writtenChapters, let offset = chapterDataOffset {
                moov.raw(ChapterTrack.track(chapters: written.chapters, trackID: written.trackID, timescale: UInt32(movieTimescale),
                                            duration: duration, chunkOffset: UInt64(offset + chunkOffsetShift), wideOffset: large))
            }
            if fragmented {
                moov.box("mvex") { mvex in
                    mvex.fullBox("mehd", version: 1) { b in b.u64(duration) }
                    for track in tracks {
                        mvex.fullBox("trex") { b in
                            b.u32(track.id); b.u32(1); b.u32(0); b.u32(0); b.u32(0)
                        }
                    }
                }
            }
            writeUserData(into: &moov)
        }
        return box.bytes
    }

    private func writeTrack(_ track: MuxerTrack, into moov: inout BoxWriter, largeOffsets: Bool) {
        let isVideo = track.mediaType == .video
        moov.box("trak") { trak in
            let duration = movieDuration(of: track)
            let wide = duration > UInt64(UInt32.max) || fragmented
            trak.fullBox("tkhd", version: wide ? 1 : 0, flags: 3) { b in
                if wide { b.u64(0); b.u64(0) } else { b.u32(0); b.u32(0) }
                b.u32(track.id); b.u32(0)
                if wide { b.u64(duration) } else { b.u32(UInt32(duration)) }
                b.zeros(8); b.u16(0); b.u16(isVideo ? 0 : 1); b.u16(isVideo ? 0 : 0x0100); b.u16(0)
                for value in (isVideo ? transform : .identity).matrix { b.i32(value) }
                if case .video(let video) = track.format {
                    b.u32(UInt32(video.width) << 16); b.u32(UInt32(video.height) << 16)
                } else {
                    b.u32(0); b.u32(0)
                }
            }
            if let written = writtenChapters, track.id == (tracks.first { $0.mediaType == .audio } ?? tracks.first)?.id {
                trak.raw(ChapterTrack.reference(to: written.trackID))
            }
            if let segments = track.segments, !fragmented {
                // A join: one edit per part, each skipping that part's priming and padding.
                // 64-bit fields when any duration or media_time needs them (a join past 2^31 samples).
                let wideEdits = wide || segments.contains { $0.lowerBound > Int64(Int32.max) || editDuration(of: $0, track: track) > UInt64(UInt32.max) }
                trak.box("edts") { edts in
                    edts.fullBox("elst", version: wideEdits ? 1 : 0) { b in
                        b.u32(UInt32(segments.count))
                        for range in segments {
                            let length = editDuration(of: range, track: track)
                            if wideEdits { b.u64(length); b.u64(UInt64(range.lowerBound)) } else {
                                b.u32(UInt32(clamping: length)); b.i32(Int32(clamping: range.lowerBound))
                            }
                            b.u32(Self.one16)
                        }
                    }
                }
            }
            if track.gapless == nil, track.segments == nil, !fragmented, let delay = track.earliestPresentation, delay > 0 {
                // Reordered video: present from the first picture shown, not the first decoded.
                trak.box("edts") { edts in
                    edts.fullBox("elst") { b in
                        // Presentation runs from `delay` for the whole media duration.
                        let shown = UInt64(max(0, Int64(saturating: Double(track.mediaDuration) * Double(movieTimescale) / Double(track.timescale))))
                        b.u32(1); b.u32(UInt32(clamping: shown)); b.i32(Int32(clamping: delay)); b.u32(Self.one16)
                    }
                }
            }
            if let gapless = track.gapless {
                trak.box("edts") { edts in
                    edts.fullBox("elst", version: wide ? 1 : 0) { b in
                        b.u32(1)
                        if wide { b.u64(duration); b.u64(UInt64(gapless.priming)) } else {
                            b.u32(UInt32(clamping: duration)); b.i32(Int32(clamping: gapless.priming))
                        }
                        b.u32(Self.one16)
                    }
                }
            }
            trak.box("mdia") { mdia in
                let mediaDuration = openEnded ? 0 : UInt64(max(0, fragmented ? fragmentedMediaDurations[track.id] ?? 0 : track.mediaDuration))
                let wideMedia = mediaDuration > UInt64(UInt32.max) || fragmented
                mdia.fullBox("mdhd", version: wideMedia ? 1 : 0) { b in
                    if wideMedia { b.u64(0); b.u64(0); b.u32(UInt32(track.timescale)); b.u64(mediaDuration) } else {
                        b.u32(0); b.u32(0); b.u32(UInt32(track.timescale)); b.u32(UInt32(mediaDuration))
                    }
                    b.u16(0x55C4); b.u16(0)   // "und"
                }
                mdia.fullBox("hdlr") { b in
                    b.u32(0); b.fourCC(isVideo ? "vide" : "soun"); b.zeros(12)
                    b.raw(Array((isVideo ? "VideoHandler" : "SoundHandler").utf8)); b.u8(0)
                }
                mdia.box("minf") { minf in
                    if isVideo {
                        minf.fullBox("vmhd", flags: 1) { b in b.zeros(8) }
                    } else {
                        minf.fullBox("smhd") { b in b.zeros(4) }
                    }
                    minf.box("dinf") { dinf in
                        dinf.fullBox("dref") { b in
                            b.u32(1)
                            b.fullBox("url ", flags: 1) { _ in }
                        }
                    }
                    writeSampleTable(track, into: &minf, largeOffsets: largeOffsets)
                }
            }
            if let measured = loudness[track.id] {
                trak.box("udta") { udta in udta.raw(LoudnessBox.bytes(measured)) }
            }
        }
    }

    private func writeSampleTable(_ track: MuxerTrack, into minf: inout BoxWriter, largeOffsets: Bool) {
        minf.box("stbl") { stbl in
            stbl.fullBox("stsd") { b in
                b.u32(1)
                writeSampleEntry(track, into: &b)
            }
            let entries = fragmented ? [] : track.timeToSample
            stbl.fullBox("stts") { b in
                b.u32(UInt32(entries.count))
                for entry in entries { b.u32(entry.count); b.u32(entry.delta) }
            }
            if track.hasCompositionOffsets && !fragmented {
                let signed = track.compositionOffsets.contains { $0.offset < 0 }
                stbl.fullBox("ctts", version: signed ? 1 : 0) { b in
                    b.u32(UInt32(track.compositionOffsets.count))
                    for entry in track.compositionOffsets { b.u32(entry.count); b.i32(entry.offset) }
                }
            }
            if !track.allSync && !fragmented {
                stbl.fullBox("stss") { b in
                    b.u32(UInt32(track.syncSamples.count))
                    for number in track.syncSamples { b.u32(number) }
                }
            }
            let chunks = fragmented ? [] : track.sampleToChunk
            stbl.fullBox("stsc") { b in
                b.u32(UInt32(chunks.count))
                for entry in chunks { b.u32(entry.firstChunk); b.u32(entry.samplesPerChunk); b.u32(entry.sampleDescriptionIndex) }
            }
            let sizes = fragmented ? [] : track.sampleSizes
            stbl.fullBox("stsz") { b in
                b.u32(0); b.u32(UInt32(sizes.count))
                for size in sizes { b.u32(size) }
            }
            let offsets = fragmented ? [] : track.chunkOffsets
            stbl.fullBox(largeOffsets ? "co64" : "stco") { b in
                b.u32(UInt32(offsets.count))
                for offset in offsets {
                    let shifted = UInt64(Int64(offset) + chunkOffsetShift)
                    if largeOffsets { b.u64(shifted) } else { b.u32(UInt32(shifted)) }
                }
            }
            if case .audio(let audio) = track.format, let roll = track.audioCodec?.roll(audio), roll != 0,
               track.sampleCount > 0 || fragmented {
                // The codec's roll (AAC's -1, as FFmpeg and Apple write it: every sample needs the one before).
                stbl.fullBox("sgpd", version: 1) { b in
                    b.fourCC("roll"); b.u32(2); b.u32(1); b.u16(UInt16(bitPattern: Int16(clamping: roll)))
                }
                if !fragmented {
                    stbl.fullBox("sbgp") { b in
                        b.fourCC("roll"); b.u32(1); b.u32(UInt32(track.sampleCount)); b.u32(1)
                    }
                }
            }
        }
    }

    private func writeSampleEntry(_ track: MuxerTrack, into b: inout BoxWriter) {
        switch track.format {
        case .audio(let audio):
            guard let description = track.audioCodec else { return }
            let seconds = Double(track.mediaDuration) / Double(track.timescale)
            let average = seconds > 0 ? Int(clamping: Int64(saturating: Double(track.totalBytes) * 8 / seconds)) : 0
            let figures = AudioSampleEntry.TrackFigures(trackID: track.id, largestPacket: Int(track.maxSampleSize),
                                                        averageBitrate: average, peakBitrate: Int(peakBitrate(track)))
            let sampleEntry = description.sampleEntry(audio, figures)
            b.box(description.sampleEntryType) { entry in
                // AudioSampleEntry (14496-12 12.2.3): reserved, data_reference_index 1, reserved,
                // channelcount, samplesize, pre_defined, reserved, samplerate as 16.16.
                entry.zeros(6); entry.u16(1); entry.zeros(8)
                entry.u16(UInt16(clamping: sampleEntry.channelCount)); entry.u16(UInt16(clamping: sampleEntry.sampleSize))
                entry.u16(0); entry.u16(0)
                entry.u32(sampleEntry.sampleRate <= 65535 ? UInt32(sampleEntry.sampleRate) << 16 : 0)
                for box in sampleEntry.boxes {
                    entry.box(box.type) { e in e.raw(box.payload) }
                }
            }
        case .video(let video):
            let isHEVC = video.codec == .hevc
            b.box(isHEVC ? "hvc1" : "avc1") { entry in
                entry.zeros(6); entry.u16(1); entry.zeros(16)
                entry.u16(UInt16(clamping: video.width)); entry.u16(UInt16(clamping: video.height))
                entry.u32(0x0048_0000); entry.u32(0x0048_0000); entry.u32(0); entry.u16(1)
                entry.zeros(32); entry.u16(0x0018); entry.u16(0xFFFF)
                entry.box(isHEVC ? "hvcC" : "avcC") { c in c.raw((try? Self.configurationRecord(video)) ?? []) }
            }
        case .pcm:
            break
        }
    }

    /// The avcC/hvcC payload: the format's record, or an avcC built from its SPS and PPS.
    static func configurationRecord(_ video: VideoFormat) throws(MP4Error) -> [UInt8] {
        if !video.configurationRecord.isEmpty { return video.configurationRecord }
        let sps = video.parameterSets.filter { ($0.first ?? 0) & 0x1F == 7 }
        let pps = video.parameterSets.filter { ($0.first ?? 0) & 0x1F == 8 }
        guard video.codec == .h264, let first = sps.first, first.count >= 4, !pps.isEmpty else {
            throw .unsupportedCodec(trackID: 0, codec: video.codec.description, reason: "no configuration record, and no SPS and PPS to build one")
        }
        do {
            return try AVCDecoderConfigurationRecord(profileIndication: first[1], profileCompatibility: first[2], levelIndication: first[3],
                                                     sequenceParameterSets: sps, pictureParameterSets: pps).serialized()
        } catch {
            throw .videoBitstream(path: BoxPath(components: ["avcC"]), error)
        }
    }

    /// The largest bitrate over any one-second window of the track's samples.
    private func peakBitrate(_ track: MuxerTrack) -> UInt32 {
        guard case .audio(let audio) = track.format else { return 0 }
        let frames = audio.framesPerPacket > 0 ? audio.framesPerPacket : track.audioCodec?.fixedPacketDuration(audio) ?? 0
        guard frames > 0 else { return 0 }
        let perSecond = max(1, Int((Double(track.timescale) / Double(frames)).rounded(.up)))
        var window: Int64 = 0
        var peak: Int64 = 0
        for (index, size) in track.sampleSizes.enumerated() {
            window += Int64(size)
            if index >= perSecond { window -= Int64(track.sampleSizes[index - perSecond]) }
            peak = max(peak, window)
        }
        return UInt32(clamping: peak * 8)
    }

    /// The `----:com.apple.iTunes:iTunSMPB` item of an `ilst`.
    static func writeGaplessItem(_ info: ITunesGaplessInfo, into ilst: inout BoxWriter) {
        ilst.box("----") { item in
            item.fullBox("mean") { d in d.raw(Array("com.apple.iTunes".utf8)) }
            item.fullBox("name") { d in d.raw(Array("iTunSMPB".utf8)) }
            item.fullBox("data", flags: 1) { d in d.u32(0); d.raw(Array(info.text.utf8)) }
        }
    }

    /// A `udta` holding only `meta` (`hdlr` `mdir`) with an `ilst` of `info`'s iTunSMPB.
    static func gaplessUserData(_ info: ITunesGaplessInfo) -> [UInt8] {
        var box = BoxWriter()
        box.box("udta") { udta in
            udta.fullBox("meta") { meta in
                meta.fullBox("hdlr") { b in
                    b.u32(0); b.fourCC("mdir"); b.fourCC("appl"); b.zeros(8); b.u8(0)
                }
                meta.box("ilst") { ilst in writeGaplessItem(info, into: &ilst) }
            }
        }
        return box.bytes
    }

    private func writeUserData(into moov: inout BoxWriter) {
        moov.box("udta") { udta in
            udta.fullBox("meta") { meta in
                meta.fullBox("hdlr") { b in
                    b.u32(0); b.fourCC("mdir"); b.fourCC("appl"); b.zeros(8); b.u8(0)
                }
                meta.box("ilst") { ilst in
                    ilst.box(FourCharacterCode(rawValue: 0xA974_6F6F)) { item in   // ©too
                        item.fullBox("data", flags: 1) { d in d.u32(0); d.raw(Array(encoderName.utf8)) }
                    }
                    // FFmpeg's MP4 reader gives iTunSMPB's priming to the stream it made last, and
                    // a cover makes one (an attached picture). A fragmented file's empty sample
                    // table leaves the priming to that tag, so there the cover follows it.
                    var items = metadata
                    let trailingCover = fragmented ? items.artwork : nil
                    if fragmented { items.artwork = nil }
                    items.write(into: &ilst)
                    // A live CMAF header does not know the valid length yet: no iTunSMPB then.
                    // HE-AAC: iTunSMPB in the core's samples (iTunes's convention; the edit list
                    // stays in the media timescale, the output rate).
                    if !omitsGaplessTag, let audio = tracks.first(where: { $0.gapless != nil }), let gapless = audio.gapless,
                       !(openEnded && gapless.validFrameCount == 0),
                       let info = audio.gaplessTag(mediaDuration: fragmented ? fragmentedMediaDurations[audio.id] ?? 0 : audio.mediaDuration) {
                        Self.writeGaplessItem(info, into: &ilst)
                    }
                    if let trailingCover {
                        var cover = ITunesMetadata()
                        cover.artwork = trailingCover
                        cover.write(into: &ilst)
                    }
                }
            }
            if let written = writtenChapters { udta.raw(ChapterListBox(chapters: written.chapters).box) }
        }
    }
}
