public import MediaCore
public import AACBitstream

/// One track of an MP4/MOV file (ISO/IEC 14496-12, 8.3 `trak`): its headers, sample entries,
/// edit list, sample tables and fragment runs. A track whose boxes are broken is kept with its
/// ``damage`` so the rest of the file still plays.
public struct MP4Track: Sendable {
    /// `track_ID`.
    public var id: UInt32
    /// Where the track's `trak` box is.
    public var path: BoxPath
    /// `hdlr` handler type: `soun`, `vide`, …
    public var handlerType: FourCharacterCode
    /// `tkhd`.
    public var trackHeader: TrackHeaderBox
    /// `mdhd`.
    public var mediaHeader: MediaHeaderBox
    /// `stsd` entries.
    public var sampleEntries: [SampleEntry]
    /// `edts/elst` entries (empty when there is no edit list).
    public var editList: [EditListEntry]
    /// `stbl` tables.
    public var sampleTable: SampleTable
    /// What the track's movie fragments hold, counted (the runs themselves are read when the
    /// samples are: ``MP4File/fragmentRuns(trackID:in:)``).
    public var fragments: FragmentTotals
    /// `tref` references by type (`chap`, `hint`, …): the track IDs each points to.
    public var references: [FourCharacterCode: [UInt32]] = [:]
    /// `trak/udta` payload, when present.
    public var userData: ByteReader?
    /// Why the track cannot be read, when it cannot (a missing `stsd`, tables that disagree):
    /// an event of kind ``/MediaCore/DamageEvent/Kind/unreadableTrack(id:)`` whose message is the error.
    public var damage: DamageEvent?

    /// Audio, video, or neither.
    public var mediaType: MediaType? {
        switch handlerType {
        case "soun": .audio
        case "vide": .video
        default: nil
        }
    }

    /// `"audio"`, `"video"`, or the handler type.
    public var typeName: String {
        switch handlerType {
        case "soun": "audio"
        case "vide": "video"
        default: handlerType.description
        }
    }

    /// The first sample entry.
    public var sampleEntry: SampleEntry? { sampleEntries.first }

    /// The codec's short name (`aac`, `h264`, `hevc`, `opus`, `ac3`, …).
    public var codecName: String { sampleEntry?.codecName ?? "none" }
    /// The audio codec of the sample entry (``SampleEntry/audioCodec``), `nil` for none.
    public var audioCodec: AudioCodecID? { sampleEntry?.audioCodec }
    /// The video codec of the sample entry (``SampleEntry/videoCodec``), `nil` for none.
    public var videoCodec: VideoCodec? { sampleEntry?.videoCodec }

    /// Samples in the tables and the fragments.
    public var sampleCount: Int {
        sampleTable.sampleCount &+ fragments.sampleCount
    }

    /// Media timescale (units per second of sample times).
    public var timescale: Int { Int(mediaHeader.timescale) }

    /// The sum of sample durations in media timescale units.
    public var mediaDuration: Int64 {
        sampleTable.totalDuration.saturatingAdding(fragments.duration)
    }

    /// The AudioSpecificConfig of an AAC track.
    public func audioSpecificConfig() throws(MP4Error) -> AudioSpecificConfig? {
        try sampleEntry?.audioSpecificConfig()
    }

    /// The length of the edit's media in media timescale units, or `nil` for an open-ended edit.
    ///
    /// Writers that keep the movie timescale coarse round `segment_duration` to a tick: FFmpeg
    /// (1000) mostly down, sometimes up; GStreamer (1800 for `mp4mux`) up. When the media that
    /// follows `media_time` differs from the edit by less than one movie tick either way, the
    /// media's own end is the exact one (a player cannot present samples the media lacks).
    public func editedMediaDuration(movieTimescale: Int) -> Int64? {
        guard let edit = mediaEdit, edit.segmentDuration > 0, movieTimescale > 0 else { return nil }
        let fromEdit = Int64(saturating: Double(edit.segmentDuration) * Double(timescale) / Double(movieTimescale))
        let media = mediaDuration.saturatingSubtracting(edit.mediaTime)
        let tick = Int64((Double(timescale) / Double(movieTimescale)).rounded(.up))
        let difference = media.saturatingSubtracting(fromEdit)
        if media >= 0, difference > -max(tick, 1), difference < max(tick, 1) { return media }
        return fromEdit
    }

    /// The media ranges an edit list of several media edits presents, one after another, in
    /// media timescale units (empty edits skipped); `nil` unless there are at least two media
    /// edits at normal rate. A gapless join writes one per part.
    public func editedMediaRanges(movieTimescale: Int) -> [Range<Int64>]? {
        let edits = editList.filter { $0.mediaTime >= 0 }
        guard edits.count >= 2, movieTimescale > 0, edits.allSatisfy({ $0.mediaRate == 1 && $0.segmentDuration > 0 }) else { return nil }
        let scale = Double(timescale) / Double(movieTimescale)
        return edits.map { edit in
            let length = Int64(saturating: (Double(edit.segmentDuration) * scale).rounded())
            return edit.mediaTime..<edit.mediaTime.saturatingAdding(length)
        }
    }

    /// The track's edit, read the way players read an audio edit list: an optional empty edit,
    /// then one media edit. `nil` when there is no edit list or it has another shape.
    public var mediaEdit: (emptyDuration: UInt64, mediaTime: Int64, segmentDuration: UInt64)? {
        var entries = editList[...]
        var empty: UInt64 = 0
        while let first = entries.first, first.mediaTime == -1 {
            empty = empty.addingReportingOverflow(first.segmentDuration).overflow ? .max : empty + first.segmentDuration
            entries = entries.dropFirst()
        }
        guard let edit = entries.first, edit.mediaTime >= 0 else { return nil }
        return (empty, edit.mediaTime, edit.segmentDuration)
    }
}
