public import MediaCore
internal import AACBitstream

/// What an ``MP4Muxer`` writes: the layout of the file and the movie's settings.
public struct MuxerConfiguration: Sendable {
    /// How the boxes of the file are laid out (ISO/IEC 14496-12, 6.2.3 box order, 8.8 movie
    /// fragments). Each layout is a writer of its own behind ``MP4Muxer``.
    public enum Layout: Sendable, Hashable {
        /// `ftyp`, `mdat`, `moov`: media written as it arrives, the movie at the end. The
        /// cheapest to write; a player must read the end of the file before it can start.
        case progressive
        /// `ftyp`, `moov`, `mdat` (AVFoundation's `shouldOptimizeForNetworkUse`, FFmpeg's
        /// `+faststart`): written progressively, then the media is moved up inside the same
        /// output by the movie's size and the movie written in front of it. The output must be
        /// readable (``MP4OutputSink``).
        case fastStart
        /// `ftyp`, `moov` with `mvex`, then a `moof`+`mdat` every `fragmentDuration` (cut at a
        /// video sync sample when there is video): crash-safe, each fragment playable once
        /// written. With `defragmentOnFinish`, a clean finish rewrites the file as
        /// ``fastStart`` under the same name (needs an output made from a path).
        case fragmented(fragmentDuration: MediaTime, defragmentOnFinish: Bool = false)
    }

    /// The layout; ``Layout/fastStart`` by default.
    public var layout: Layout
    /// The kinds of track to expect when tracks are created from samples rather than by
    /// ``MP4Muxer/addTrack(_:)``: the muxer waits for a sample of each before interleaving by
    /// decode time.
    public var mediaTypes: MediaType
    /// The video track's display transform (`tkhd` matrix, ISO/IEC 14496-12 8.3.2).
    public var preferredTransform: TrackTransform
    /// The movie timescale; by default the audio sample rate (so an audio edit list is exact),
    /// or 1000 without audio.
    public var movieTimescale: Int32?
    /// The encoder tag (`©too`).
    public var encoderName: String
    /// An estimate of how many audio samples the file will hold (the room is sized for an
    /// audio track's tables: no `ctts` or `stss`), at most 16 Mi. With
    /// ``Layout/fastStart``, room for the movie box of that many samples is left in a `free` box
    /// before the media, and finishing writes the movie there instead of moving the media up
    /// (what FFmpeg's `-moov_size` asks for by hand). What the movie does not use stays a `free`
    /// box (room for tags); a movie that does not fit is written by the move, as without an
    /// estimate. `nil`: no room is left.
    public var expectedSampleCount: Int?
    /// The audio codecs the muxer can describe in a sample entry, the first of a codec taken
    /// (a codec registry's descriptions, `AudioCodecRegistry.descriptions`); by default AAC's.
    public var audioCodecs: [AudioCodecDescription] = [.aac]
    /// An audio-only file is an audiobook (`.m4b`): its major brand is `M4B ` instead of `M4A `.
    public var isAudiobook = false

    /// A configuration; by default faststart, audio only.
    public init(layout: Layout = .fastStart, mediaTypes: MediaType = .audio, preferredTransform: TrackTransform = .identity,
                movieTimescale: Int32? = nil, encoderName: String = "KeyFrameKit", expectedSampleCount: Int? = nil) {
        self.layout = layout
        self.mediaTypes = mediaTypes
        self.preferredTransform = preferredTransform
        self.movieTimescale = movieTimescale
        self.encoderName = encoderName
        self.expectedSampleCount = expectedSampleCount
    }

    /// The bytes left for the movie box before the media: 4 bytes per expected sample (`stsz`),
    /// 20 per chunk of at least 32 samples (`stco`/`co64` and a `stsc` entry), and 4 KiB for the
    /// rest; 0 unless the layout is ``Layout/fastStart`` and a count is expected.
    var reservedMovieSpace: Int {
        // At most 16 Mi samples (a 67 MB room): more is not worth leaving unused if the estimate is wrong.
        guard layout == .fastStart, let count = expectedSampleCount, count > 0, count <= 1 << 24 else { return 0 }
        return 4096 + count * 4 + (count / 32 + 1) * 20
    }

    /// Whether the layout writes fragments.
    public var isFragmented: Bool {
        if case .fragmented = layout { true } else { false }
    }
}

/// Where an ``MP4Muxer`` writes: a byte sink whose earlier bytes can be rewritten (box sizes,
/// the fragmented movie's durations) and read back (the faststart move), and which is committed
/// when complete. ``/MediaCore/FileByteSink`` and ``/MediaCore/ArrayByteSink`` are both.
public typealias MP4OutputSink = SeekableByteSink & CommittableByteSink & RandomAccessByteSource
