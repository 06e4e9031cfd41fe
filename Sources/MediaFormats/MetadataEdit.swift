public import SystemPackage

/// A change to a file's tags, cover and chapters, in no container's terms: the tags by their
/// generic names (`title`, `artist`, `track`; any other name is kept as it is, an ID3 `TXXX` or
/// a Vorbis field of that name), what a ``MediaFormatRegistry`` entry's
/// ``MetadataEditor`` writes into its own structure.
public struct MetadataEdit: Sendable {
    /// Tags set: each replaces every value of its name.
    public var sets: [(key: String, value: String)]
    /// Tags removed, by name.
    public var removals: [String]
    /// What happens to the cover.
    public var cover: Cover?
    /// The chapters that replace the file's (an empty array removes them); `nil` leaves them.
    public var chapters: [StreamMetadata.Chapter]?

    /// A change of the cover.
    public enum Cover: Sendable, Hashable {
        /// The cover becomes this image (a JPEG or PNG file's bytes).
        case set([UInt8])
        /// The cover is removed.
        case remove
    }

    /// An edit; by default one that changes nothing.
    public init(sets: [(key: String, value: String)] = [], removals: [String] = [], cover: Cover? = nil,
                chapters: [StreamMetadata.Chapter]? = nil) {
        self.sets = sets
        self.removals = removals
        self.cover = cover
        self.chapters = chapters
    }

    /// `metadata` with the edit applied.
    public func applied(to metadata: StreamMetadata) -> StreamMetadata {
        var result = metadata
        let replaced = Set((sets.map(\.key) + removals).map { $0.lowercased() })
        result.tags.removeAll { replaced.contains($0.key.lowercased()) }
        result.tags += sets.map { (key: $0.key.lowercased(), value: $0.value) }
        switch cover {
        case .set(let image): result.coverArt = image
        case .remove: result.coverArt = nil
        case nil: break
        }
        if let chapters { result.chapters = chapters }
        return result
    }
}

/// How a format's tags are read and rewritten without touching its audio: what `keyframe tag`
/// and `keyframe chapters` use for a file that is not an MP4.
public struct MetadataEditor: Sendable {
    /// What a rewrite did.
    public struct Result: Sendable, Hashable {
        /// Whether only the tag's bytes changed, in place (else the file was rewritten and
        /// renamed into place).
        public var inPlace: Bool
        /// Bytes written.
        public var bytesWritten: Int64
        /// The tags now in the file.
        public var tagCount: Int

        /// A result.
        public init(inPlace: Bool, bytesWritten: Int64, tagCount: Int) {
            self.inPlace = inPlace
            self.bytesWritten = bytesWritten
            self.tagCount = tagCount
        }
    }

    /// The file's tags, cover and chapters, as its own structure holds them.
    public var read: @Sendable (FilePath) throws(PipelineError) -> StreamMetadata
    /// Applies an edit to the file: in place when the new structure fits where the old one and
    /// its padding were, else by a rewrite committed with one rename.
    public var write: @Sendable (MetadataEdit, FilePath) throws(PipelineError) -> Result

    /// An editor of these two operations.
    public init(read: @escaping @Sendable (FilePath) throws(PipelineError) -> StreamMetadata,
                write: @escaping @Sendable (MetadataEdit, FilePath) throws(PipelineError) -> Result) {
        self.read = read
        self.write = write
    }
}
