public import SystemPackage

/// Bytes written over part of an existing file, in place, and made durable (`fsync(2)`): the
/// in-place edits that change a file without moving anything in it (new tags in a movie's
/// padding). Unlike ``FileByteSink``'s commit this is not atomic: a crash in the middle can
/// leave part of the patch written.
public enum FilePatch {
    /// Writes `bytes` at `offset` of the existing file at `path`, then syncs the file.
    ///
    /// - Throws: ``ByteStreamError/system(operation:path:errno:)`` for an `open`, `pwrite` or
    ///   `fsync` that fails; a patch that would extend the file is refused.
    public static func apply(_ bytes: [UInt8], at offset: Int64, to path: FilePath) throws(ByteStreamError) {
        try apply([(offset, bytes)], to: path)
    }

    /// Writes each patch at its offset of the existing file at `path`, then syncs the file once.
    public static func apply(_ patches: [(offset: Int64, bytes: [UInt8])], to path: FilePath) throws(ByteStreamError) {
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(path, .writeOnly, options: [.closeOnExec]) } catch {
            throw .system(operation: "open", path: path, errno: error as? Errno ?? .ioError)
        }
        defer { try? descriptor.close() }
        let size: Int64
        do { size = try descriptor.seek(offset: 0, from: .end) } catch {
            throw .system(operation: "seek", path: path, errno: error as? Errno ?? .ioError)
        }
        for (offset, bytes) in patches {
            guard offset >= 0, offset + Int64(bytes.count) <= size else {
                throw .system(operation: "patch past the end of", path: path, errno: .invalidArgument)
            }
        }
        for (offset, bytes) in patches where !bytes.isEmpty {
            do { _ = try bytes.withUnsafeBytes { try descriptor.writeAll(toAbsoluteOffset: offset, $0) } } catch {
                throw .system(operation: "write", path: path, errno: error as? Errno ?? .ioError)
            }
        }
        do throws(Errno) { try FileSystemCalls.sync(descriptor) } catch {
            throw .system(operation: "sync", path: path, errno: error)
        }
    }
}
