public import MediaCore

extension NowPlaying {
    /// The ID3v2.4 tag that carries it (ID3v2.4.0-frames 4.2.1 `TIT2`, 4.2.2 `TPE1`, 4.2.1
    /// `TALB`, 4.3.2 `WXXX`), as Apple's "Timed Metadata for HTTP Live Streaming" and AOM's
    /// ID3-in-CMAF carry it.
    public var id3Tag: ID3v2Tag {
        var frames: [ID3v2Tag.Frame] = []
        if let title { frames.append(.text(id: "TIT2", values: [title])) }
        if let artist { frames.append(.text(id: "TPE1", values: [artist])) }
        if let album { frames.append(.text(id: "TALB", values: [album])) }
        if let url { frames.append(.userURL(description: "", url: url)) }
        return ID3v2Tag(frames: frames)
    }

    /// What an ID3 tag says is playing (its first `TIT2`, `TPE1`, `TALB`, `WXXX` or `WOAS`);
    /// `nil` when it is no tag or says none of them.
    public init?(id3 bytes: [UInt8]) {
        guard let tag = try? ID3v2Tag(bytes: bytes) else { return nil }
        self.init()
        for frame in tag.frames {
            switch frame {
            case .text("TIT2", let values): title = title ?? values.first
            case .text("TPE1", let values): artist = artist ?? values.first
            case .text("TALB", let values): album = album ?? values.first
            case .userURL(_, let link), .url("WOAS", let link): url = url ?? link
            default: break
            }
        }
        guard title != nil || artist != nil || album != nil || url != nil else { return nil }
    }
}

extension TimedMetadata {
    /// `playing` from `time` on, as an ID3 tag (``NowPlaying/id3Tag``).
    public static func nowPlaying(_ playing: NowPlaying, at time: MediaTime) -> TimedMetadata {
        TimedMetadata(kind: .id3, time: time, payload: playing.id3Tag.bytes())
    }
}
