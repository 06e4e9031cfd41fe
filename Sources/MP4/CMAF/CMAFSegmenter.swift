public import MediaCore
public import AACBitstream

/// One CMAF segment (ISO/IEC 23000-19 7.3.3: a `styp`, then one fragment, `moof` + `mdat`) of
/// whole audio packets.
public struct CMAFSegment: Sendable {
    /// `styp` `moof` `mdat`.
    public var bytes: [UInt8]
    /// The fragment's `mfhd` sequence number, from 1.
    public var sequenceNumber: UInt32
    /// The `tfdt` base media decode time, in media units: the previous segment's plus its duration.
    public var baseDecodeTime: Int64
    /// The packets' durations added up, in media units.
    public var duration: Int64
    /// Packets in the segment.
    public var sampleCount: Int
    /// The media timescale.
    public var timescale: Int32

    /// The duration in seconds.
    public var seconds: Double { Double(duration) / Double(max(timescale, 1)) }

    /// A segment of `bytes`: another format's (a packed-audio segment) kept in the same terms.
    public init(bytes: [UInt8], sequenceNumber: UInt32, baseDecodeTime: Int64, duration: Int64, sampleCount: Int, timescale: Int32) {
        self.bytes = bytes
        self.sequenceNumber = sequenceNumber
        self.baseDecodeTime = baseDecodeTime
        self.duration = duration
        self.sampleCount = sampleCount
        self.timescale = timescale
    }
}

/// Writes one audio track as CMAF (ISO/IEC 23000-19): a header (the init segment: `ftyp` and a
/// `moov` with `mvex` and empty sample tables) and segments of whole packets, each one fragment
/// whose `tfdt` continues the previous one's. The encoder's priming is one edit in the header,
/// `segment_duration` 0 and `media_time` the priming (ISO/IEC 14496-12 8.6.6; Apple's HLS
/// authoring guidance and CMAF 7.5.13 both ask for it), and iTunSMPB there says the valid length
/// when it is known.
///
/// Samples go in with ``append(_:)``; ``cutSegment(userData:)`` writes what was appended as one segment.
/// The caller decides where segments end. Not `Sendable`: one thread at a time appends.
public final class CMAFSegmenter {
    private let track: MuxerTrack
    private var sequence: UInt32 = 0
    /// The decode time, in media units, of the fragment being built: the previous fragment's
    /// plus its duration.
    public private(set) var nextDecodeTime: Int64 = 0
    private var data: [UInt8] = []
    /// Packets appended since the last cut.
    public var pendingSampleCount: Int { track.fragmentEntries.count }
    /// Media units appended since the last cut.
    public private(set) var pendingDuration: Int64 = 0
    /// The media timescale (the sample rate for AAC).
    public var timescale: Int32 { track.timescale }
    /// The stream's tags and cover, written in the header's `moov/udta/meta/ilst` (after the
    /// encoder's `©too`; the cover after iTunSMPB, and not in a header without it); empty by
    /// default.
    public var metadata = ITunesMetadata()
    /// Whether the header's `ftyp` lists the `aid3` brand (AOM, Carriage of ID3 Timed Metadata
    /// in CMAF, 3: the track's segments may carry ID3 in `emsg` boxes); `false` by default.
    public var carriesTimedMetadata = false
    /// The track's measured loudness, written in the header as `trak/udta/ludt` (ISO/IEC
    /// 14496-12 12.2.7; ``LoudnessBox``); none by default.
    public var loudness: StreamLoudness?

    /// A segmenter for packets of `format` whose first `priming` decoded samples are the
    /// encoder's, its codec described by the first of `audioCodecs` that describes it (by
    /// default AAC's; a codec registry's descriptions for others).
    ///
    /// - Throws: ``MP4Error/unsupportedCodec(trackID:codec:reason:)`` for a format the muxer
    ///   cannot describe.
    public init(format: FormatDescription, priming: Int, audioCodecs: [AudioCodecDescription] = [.aac]) throws(MP4Error) {
        let description = try MuxerTrack.check(format, audioCodecs: audioCodecs)
        track = MuxerTrack(id: 1, format: format, audioCodec: description)
        track.gapless = (max(0, priming), 0)
    }

    /// The header (init segment): `ftyp` (`cmfc`, `iso6`) and the `moov`, its `ilst` holding
    /// ``metadata`` (a player names the stream from it). With `validFrameCount`
    /// (known once the media is), iTunSMPB gives the samples presented after the priming; without
    /// it (a live stream) there is no iTunSMPB.
    ///
    /// Without `gaplessTag` the header has no iTunSMPB even then: a DASH header, whose first
    /// segment carries the tag instead (``gaplessUserData(validFrameCount:mediaDuration:)``),
    /// because a reader that parses the header again before every segment (FFmpeg 5.1's DASH
    /// demuxer) would skip the priming at every segment boundary.
    public func header(validFrameCount: Int64? = nil, mediaDuration: Int64? = nil, gaplessTag: Bool = true) -> [UInt8] {
        if let validFrameCount { track.gapless = (track.gapless?.priming ?? 0, validFrameCount) }
        var writer = MovieBoxWriter(tracks: [track], movieTimescale: track.timescale, transform: .identity, encoderName: "KeyFrameKit")
        writer.fragmented = true
        writer.openEnded = true
        writer.omitsGaplessTag = !gaplessTag
        // A DASH header has no cover: its iTunSMPB comes with the first segment, after the
        // header's streams are made, and FFmpeg gives it to the last one, the cover's.
        var items = metadata
        if !gaplessTag { items.artwork = nil }
        writer.metadata = items
        if let loudness { writer.loudness = [track.id: loudness] }
        if let mediaDuration { writer.fragmentedMediaDurations = [track.id: mediaDuration] }
        var box = BoxWriter()
        box.box("ftyp") { b in
            b.fourCC("cmfc"); b.u32(0)
            for brand: FourCharacterCode in ["cmfc", "iso6", "isom", "mp41"] { b.fourCC(brand) }
            if carriesTimedMetadata { b.fourCC("aid3") }
        }
        return box.bytes + writer.movie()
    }

    /// Adds a packet to the segment being built. Its duration (in the track's timescale) is
    /// the sample's own: a stream's last packet may say less than a frame, up to the last
    /// presented sample (the `trun` tail FFmpeg writes too), and the segment's duration with it.
    public func append(_ sample: MediaSample) {
        let duration = max(0, (try? sample.duration.converted(to: track.timescale, rounding: .nearest).value) ?? 0)
        if track.fragmentEntries.isEmpty { track.fragmentStartDecodeTime = nextDecodeTime }
        track.fragmentEntries.append((UInt32(clamping: sample.data.count), UInt32(clamping: duration), 0x0200_0000, 0))
        data += sample.data
        pendingDuration += duration
    }

    /// Adds the packets of a run.
    public func append(run: MediaSampleRun) {
        if track.fragmentEntries.isEmpty { track.fragmentStartDecodeTime = nextDecodeTime }
        for entry in run.entries {
            track.fragmentEntries.append((UInt32(clamping: entry.size), entry.duration, 0x0200_0000, 0))
            pendingDuration += Int64(entry.duration)
        }
        data += run.data
    }

    /// The `styp` that starts every segment (ISO/IEC 23000-19 7.3.3: CMAF segment and fragment
    /// brands, and DASH's `msdh`/`msix`).
    public static var segmentType: [UInt8] {
        var styp = BoxWriter()
        styp.box("styp") { b in
            b.fourCC("msdh"); b.u32(0)
            for brand: FourCharacterCode in ["msdh", "msix", "cmfs", "cmff", "cmfc"] { b.fourCC(brand) }
        }
        return styp.bytes
    }

    /// A `udta` (ISO/IEC 14496-12 8.10.1, allowed in a `moof`) whose `meta`/`ilst` holds only
    /// iTunSMPB with the numbers given. Its size does not depend on the values (the tag's fields
    /// have fixed widths): with zeros, the placeholder a first segment is written with.
    public static func gaplessUserData(priming: Int, padding: Int, validFrameCount: Int64) -> [UInt8] {
        MovieBoxWriter.gaplessUserData(ITunesGaplessInfo(priming: priming, padding: padding, originalSampleCount: validFrameCount))
    }

    /// The first segment's `udta` with the same iTunSMPB as ``header(validFrameCount:mediaDuration:gaplessTag:)``
    /// writes for `validFrameCount` and `mediaDuration` (for HE-AAC in the core's samples, as
    /// FFmpeg reads it).
    ///
    /// A reader that parses the first `moof` before it starts (FFmpeg's HLS and DASH demuxers,
    /// which cannot seek) takes this tag over the header's, so the two say the same; a DASH
    /// header has none, because FFmpeg's DASH demuxer parses the header again before every
    /// segment and would skip the priming at each.
    public func gaplessUserData(validFrameCount: Int64, mediaDuration: Int64) -> [UInt8] {
        track.gapless = (track.gapless?.priming ?? 0, validFrameCount)
        let info = track.gaplessTag(mediaDuration: mediaDuration) ?? ITunesGaplessInfo(priming: 0, padding: 0, originalSampleCount: validFrameCount)
        return MovieBoxWriter.gaplessUserData(info)
    }

    /// The packets appended since the last cut, as a segment (`styp`, `messages`, and one
    /// fragment, whose `moof` ends with `userData` when given); `nil` when there are none.
    public func cutSegment(userData: [UInt8] = [], messages: [EventMessage] = []) -> CMAFSegment? {
        guard var chunk = cutChunk(userData: userData, messages: messages) else { return nil }
        chunk.bytes = Self.segmentType + chunk.bytes
        return chunk
    }

    /// The packets appended since the last cut as one CMAF chunk (a fragment, `moof` + `mdat`,
    /// without `styp`): a low-latency HLS part, several of which, after a `styp`, make a segment.
    /// `userData`, a whole `udta` box, ends the `moof`; `messages` (`emsg` boxes) precede it
    /// (ISO/IEC 23000-19 7.4.5: an event message comes before the `moof` of the fragment its
    /// time falls in).
    public func cutChunk(userData: [UInt8] = [], messages: [EventMessage] = []) -> CMAFSegment? {
        guard !track.fragmentEntries.isEmpty else { return nil }
        sequence += 1
        let headerSize = FragmentedLayoutWriter.movieFragment(sequence: sequence, tracks: [track], dataOffsets: [0], userData: userData).count
        let moof = FragmentedLayoutWriter.movieFragment(sequence: sequence, tracks: [track], dataOffsets: [Int32(clamping: headerSize + 8)],
                                                        userData: userData)
        let bytes = messages.flatMap(\.bytes) + moof + BoxWriterBytes.u32(UInt32(clamping: 8 + data.count)) + Array("mdat".utf8) + data
        let segment = CMAFSegment(bytes: bytes, sequenceNumber: sequence, baseDecodeTime: nextDecodeTime, duration: pendingDuration,
                                  sampleCount: track.fragmentEntries.count, timescale: track.timescale)
        nextDecodeTime += pendingDuration
        pendingDuration = 0
        data.removeAll(keepingCapacity: true)
        track.fragmentEntries.removeAll(keepingCapacity: true)
        return segment
    }
}

/// Not `Sendable`: appending mutates the segment being built.
@available(*, unavailable)
extension CMAFSegmenter: Sendable {}
