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
        let files = FileSegmentSource.OpenFiles()
        for part in [path] + segments {
            do { parts.append(try FileSegmentSource(path: part, files: files)) } catch { throw .stream(error) }
        }
        return ConcatenatedByteSource(parts)
    }
}
