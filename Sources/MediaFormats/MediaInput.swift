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
        try open(path, segments: RunLengthArray(segments))
    }

    /// `path`, then each of `segments`, end to end, as the form that takes an array does: a
    /// segment named again and again in a row is measured once and kept once.
    public static func open(_ path: FilePath, segments: RunLengthArray<FilePath>) throws(PipelineError) -> Source {
        var parts: [(part: FileSegmentSource, repeats: Int)] = []
        parts.reserveCapacity(1 + segments.runs.count)
        let files = FileSegmentSource.OpenFiles()
        do {
            parts.append((try FileSegmentSource(path: path, files: files), 1))
            for run in segments.runs { parts.append((try FileSegmentSource(path: run.element, files: files), run.count)) }
        } catch { throw .stream(error) }
        return ConcatenatedByteSource(runs: parts)
    }
}
