public import SystemPackage

/// `keyframe validate`'s checks of a file on disk (issue 21, its first part): the gapless
/// signals of an MP4/M4A/M4B (``/MP4/GaplessValidation``). CMAF segment sequences, HLS playlists
/// and DASH MPDs are not checked yet.
public enum FileValidation {
    /// The findings for the MP4 at `path`.
    ///
    /// - Throws: ``PipelineError`` when the file cannot be read, or not as MP4.
    public static func findings(for path: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let source: FileByteSource
        do { source = try FileByteSource(path: path.string) } catch { throw .stream(error) }
        let file: MP4File
        do { file = try MP4File(source: source) } catch { throw .container(error) }
        return GaplessValidation.findings(in: file, name: path.string)
    }
}
