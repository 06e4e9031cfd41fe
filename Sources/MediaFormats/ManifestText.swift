internal import SystemPackage

/// The text of a playlist or an MPD on disk, read whole: a manifest is small, so a file over
/// 64 MiB is refused rather than read.
package enum ManifestText {
    /// The largest manifest read.
    package static let maximumSize: Int64 = 64 << 20

    /// The text at `path` (UTF-8), `what` naming the kind in the error for a file too big.
    package static func read(_ path: FilePath, what: String) throws(PipelineError) -> String {
        let source: FileByteSource
        do { source = try FileByteSource(regularFileAt: path) } catch { throw .stream(error) }
        guard source.byteCount <= maximumSize else { throw .unsupported("\(path): \(source.byteCount) bytes is not \(what)") }
        let bytes: [UInt8]
        do { bytes = try source.read(at: 0, count: Int(source.byteCount)) } catch { throw .stream(error) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
