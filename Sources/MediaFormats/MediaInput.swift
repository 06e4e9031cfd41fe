public import SystemPackage

/// Opens the input of a container job: one file, or a CMAF init segment followed by its media
/// segments, read as one stream.
public enum MediaInput {
    /// What the jobs read.
    public typealias Source = ConcatenatedByteSource<FileByteSource>

    /// `path`, then each of `segments`, end to end: regular files only (a directory, FIFO or
    /// device a playlist names is refused, naming it).
    public static func open(_ path: FilePath, segments: [FilePath] = []) throws(PipelineError) -> Source {
        var parts: [FileByteSource] = []
        for part in [path] + segments {
            do { parts.append(try FileByteSource(regularFileAt: part)) } catch { throw .stream(error) }
        }
        return ConcatenatedByteSource(parts)
    }
}
