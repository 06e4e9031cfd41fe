public import SystemPackage

extension MP3InfoTag {
    /// The tag of the MP3 at `path`: its first frame after any ID3v2 tag and zero padding;
    /// `nil` when the file is not one or its first frame has no tag.
    public init?(path: FilePath) {
        guard let source = FileByteSource.regularFile(at: path) else { return nil }
        self.init(source: source)
    }

    /// The tag of the MP3 whose bytes `source` holds, read as ``init(path:)`` reads a file's:
    /// at most its first 8 KiB after any ID3v2 tag.
    public init?(source: some RandomAccessByteSource) {
        guard let head = try? source.read(at: 0, count: MediaFileFormat.sniffLength), head.count >= 4 else { return nil }
        let start = MediaFileFormat.id3v2TagEnd(head) ?? 0
        guard let after = try? source.read(at: start, count: 8192), let first = after.firstIndex(where: { $0 != 0 }) else { return nil }
        self.init(frame: Array(after[first...]))
    }
}
