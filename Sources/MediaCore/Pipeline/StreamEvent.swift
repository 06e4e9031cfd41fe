/// What travels down a pipeline besides the data, in order with it, as GStreamer's events do
/// beside its buffers: what a sink must know that no single element says.
///
/// The format travels on every element (``MediaSample/format``, ``PCMBuffer/format``); a change
/// of format is the first element in the new one. Events carry the rest:
/// - ``gapless(_:)``: the encoder delay (priming) before the first presented frame, and, once
///   the stream has ended, the valid length and padding (ISO/IEC 14496-12, 8.6.6: an edit
///   list's `media_time` and `segment_duration`; Apple's iTunSMPB);
/// - ``metadata(_:)``: tags and chapters;
/// - ``timedMetadata(_:)``: metadata of one moment (an ID3 frame, an `emsg`, a SCTE-35 section,
///   a now-playing title), of a kind KeyFrameKit names or one a program adds;
/// - ``marker(_:)``: a named point (an ad break's start or return, a chapter mark, a cue);
/// - ``loudness(_:)``: the loudness measured, once the stream has ended;
/// - ``codecConfiguration(_:)``: the codec's configuration as the encoder left it once flushed
///   (FLAC's STREAMINFO with the stream's length and MD5), for a sink that rewrites its header.
///
/// A sink handles the kinds it can carry and ignores the rest, so a new kind of event touches
/// only the sinks that carry it.
///
/// End of stream is a source's `next()` returning `nil`, which the pump turns into the sink's
/// `finish()`; a tee sends it down every branch.
///
/// Delivery order is the stream's order. A source returns events from
/// ``MediaSource/takeEvents()``: those it has after `next()` returned an element precede that
/// element; those it has after `next()` returned `nil` come before the sink's `finish()`. The
/// pump hands them to ``MediaSink/receive(_:)`` in that order. A transform sees each upstream
/// event first (``MediaTransform/transform(event:)``: it passes it on, replaces it or drops it)
/// and adds its own (``MediaTransform/takeEvents()``): those it has after
/// ``MediaTransform/finish()`` follow the outputs `finish()` returns (an encoder's final gapless
/// numbers come after its last packet), while the events an upstream tells at its own end come
/// before those flushed outputs (a transformed source and a transforming sink agree on this). A
/// later event of a kind replaces an earlier one: the final ``gapless(_:)`` is the one a muxer
/// keeps.
public enum StreamEvent: Sendable, Hashable {
    /// The gapless numbers of the packets (or PCM) that flow: priming from the start, the valid
    /// length once known.
    case gapless(GaplessInfo)
    /// Tags and chapters of the stream.
    case metadata(StreamMetadata)
    /// Metadata of one moment of the stream.
    case timedMetadata(TimedMetadata)
    /// A named point of the stream.
    case marker(StreamMarker)
    /// The stream's loudness as measured (ITU-R BS.1770), once it has ended: a sink whose
    /// header carries it writes it (an init segment's `ludt`), the others ignore it.
    case loudness(StreamLoudness)
    /// The packets' format with the decoder configuration as it stands at the stream's end
    /// (FLAC's STREAMINFO, RFC 9639 8.2, whose length and MD5 an encoder knows only once
    /// flushed); a sink whose header holds the configuration rewrites it, the others ignore it.
    case codecConfiguration(EncodedAudioFormat)
}

/// A stream's measured loudness (ITU-R BS.1770-4, EBU R 128).
public struct StreamLoudness: Sendable, Hashable {
    /// Integrated loudness, LUFS.
    public var integrated: Double
    /// True peak, dBTP, when measured.
    public var truePeak: Double?
    /// Sample peak, dBFS, when measured.
    public var samplePeak: Double?
    /// Loudness range, LU, when measured.
    public var range: Double?

    /// A measurement.
    public init(integrated: Double, truePeak: Double? = nil, samplePeak: Double? = nil, range: Double? = nil) {
        self.integrated = integrated
        self.truePeak = truePeak
        self.samplePeak = samplePeak
        self.range = range
    }
}

/// The gapless numbers of a stream, in frames at its output sample rate (ISO/IEC 14496-12,
/// 8.6.6; Apple's iTunSMPB): the decoder output begins with ``priming`` frames of encoder delay,
/// then ``validLength`` frames of the source, then ``padding``.
public struct GaplessInfo: Sendable, Hashable {
    /// Frames of encoder delay at the start of the decoded output.
    public var priming: Int64
    /// Frames of the source after the priming; `nil` until the stream has ended (a live
    /// encoder knows it only then).
    public var validLength: Int64?
    /// Frames after the source's end in the decoded output, when known.
    public var padding: Int64?

    /// Gapless numbers: `priming` now, `validLength` and `padding` when known.
    public init(priming: Int64, validLength: Int64? = nil, padding: Int64? = nil) {
        self.priming = priming
        self.validLength = validLength
        self.padding = padding
    }

    /// Whether the valid length is known (the stream has ended, or a file said it).
    public var isComplete: Bool { validLength != nil }
}

/// Tags and chapters of a stream, as its source found them or a job set them, in no container's
/// terms: a muxer maps them to its own (iTunes `ilst` atoms, ID3 frames).
public struct StreamMetadata: Sendable, Hashable {
    /// A chapter: where it starts and its title, and where ID3v2's `CHAP` frame (ID3v2 Chapter
    /// Frame Addendum) or Nero's `chpl` says more, where it ends and what it links to.
    public struct Chapter: Sendable, Hashable {
        /// The start, on the presentation timeline (after priming).
        public var start: MediaTime
        /// The title.
        public var title: String
        /// The end, when the source says it (else the next chapter's start, or the stream's end).
        public var end: MediaTime?
        /// A URL the chapter links to (an ID3 `WXXX` frame inside `CHAP`).
        public var url: String?

        /// A chapter starting at `start`.
        public init(start: MediaTime, title: String, end: MediaTime? = nil, url: String? = nil) {
            self.start = start
            self.title = title
            self.end = end
            self.url = url
        }
    }

    /// Tags by their common names (`title`, `artist`, `album`, `date`, `genre`, `comment`,
    /// `track`, …), in the order found.
    public var tags: [(key: String, value: String)]
    /// Cover art: the image file's bytes (JPEG or PNG).
    public var coverArt: [UInt8]?
    /// Chapters, in order.
    public var chapters: [Chapter]

    /// Metadata with the given tags, cover and chapters.
    public init(tags: [(key: String, value: String)] = [], coverArt: [UInt8]? = nil, chapters: [Chapter] = []) {
        self.tags = tags
        self.coverArt = coverArt
        self.chapters = chapters
    }

    /// The first value of `key`.
    public subscript(key: String) -> String? { tags.first { $0.key == key }?.value }

    /// Equal when tags (in order), cover and chapters are.
    public static func == (lhs: StreamMetadata, rhs: StreamMetadata) -> Bool {
        lhs.tags.elementsEqual(rhs.tags) { $0.key == $1.key && $0.value == $1.value } && lhs.coverArt == rhs.coverArt && lhs.chapters == rhs.chapters
    }

    /// Hashes the tags, cover and chapters.
    public func hash(into hasher: inout Hasher) {
        for tag in tags {
            hasher.combine(tag.key)
            hasher.combine(tag.value)
        }
        hasher.combine(coverArt)
        hasher.combine(chapters)
    }
}
