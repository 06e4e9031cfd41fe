public import SystemPackage

/// Opens the input of a container job: one file, or a CMAF init segment followed by its media
/// segments, read as one stream.
public enum MediaInput {
    /// What the jobs read: the files end to end, a few of them open at a time.
    public typealias Source = ConcatenatedByteSource<FileSegmentSource>

    /// `path`, then each of `segments`, end to end: regular files only (a directory, FIFO or
    /// device a playlist names is refused, naming it), a few open at once whatever their
    /// number (``/MediaCore/FileSegmentSource``).
    public static func open(_ path: FilePath, segments: [FilePath] = []) throws(PipelineError) -> Source {
        var parts: [FileSegmentSource] = []
        parts.reserveCapacity(1 + segments.count)
        let files = FileSegmentSource.OpenFiles()
        do {
            parts.append(try FileSegmentSource(path: path, files: files))
            for segment in segments { parts.append(try FileSegmentSource(path: segment, files: files)) }
        } catch { throw .stream(error) }
        return ConcatenatedByteSource(parts)
    }
}
