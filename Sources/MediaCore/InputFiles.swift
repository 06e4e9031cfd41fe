#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif
import Synchronization
package import SystemPackage

/// The files this process is reading, by device and inode: what no output may write over.
/// Every ``FileByteSource`` holds a `Claim` on its file while it lives (a playlist's segment
/// source keeps its segment's claim while the job may read it again), and every
/// ``FileByteSink`` refuses a destination claimed here, so an output that is, or links to
/// (symbolically or hard), an input of the job is refused before anything is written,
/// whichever writer opens it.
///
/// One entry per distinct file, counted (a playlist naming one segment 200,000 times holds one);
/// an entry goes when its last claim does, so an identity here always names a file that is
/// still open, never an inode a deleted file has left for reuse.
package enum InputFiles {
    /// A file's identity: `st_dev` and `st_ino`.
    struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// A hold on an open file's identity, released when the last reference to it goes.
    package final class Claim: Sendable {
        private let identity: Identity

        /// Claims the file open as `descriptor`; `nil` when `fstat(2)` cannot say what it is.
        init?(_ descriptor: FileDescriptor) {
            guard let identity = FileSystemCalls.identity(of: descriptor) else { return nil }
            self.identity = identity
            InputFiles.counts.withLock { $0[identity, default: 0] += 1 }
        }

        deinit {
            InputFiles.counts.withLock { counts in
                if let count = counts[identity], count > 1 { counts[identity] = count - 1 } else { counts[identity] = nil }
            }
        }
    }

    private static let counts = Mutex<[Identity: Int]>([:])

    /// Whether `path` (its links followed) is a file this process is reading.
    package static func contains(_ path: FilePath) -> Bool {
        guard let identity = FileSystemCalls.identity(at: path) else { return false }
        return counts.withLock { $0[identity] != nil }
    }
}

/// The temporary files of atomic outputs (``FileByteSink``) not yet committed nor removed:
/// what a process that must end at once (a stop signal while a read is blocked on a FIFO or a
/// network) removes first, so that ending early leaves nothing behind, as a cancelled job does.
package enum UncommittedFiles {
    private static let paths = Mutex<Set<FilePath>>([])
    private static let trees = Mutex<Set<FilePath>>([])

    static func insert(_ path: FilePath) { _ = paths.withLock { $0.insert(path) } }
    static func remove(_ path: FilePath) { _ = paths.withLock { $0.remove(path) } }

    /// A private directory whose whole tree goes with the uncommitted files (a package staged
    /// before it is put into an object store), until ``removeTree(_:)``.
    package static func insertTree(_ path: FilePath) { _ = trees.withLock { $0.insert(path) } }
    /// The tree at `path` removed, and no longer listed.
    package static func removeTree(_ path: FilePath) {
        _ = trees.withLock { $0.remove(path) }
        FileSystemCalls.removeTree(path)
    }

    /// Unlinks every temporary file still uncommitted, and every staging tree. A sink whose file
    /// is removed here fails its next write or its commit; the caller is about to end the process.
    package static func removeAll() {
        for path in paths.withLock({ paths in defer { paths.removeAll() }; return paths }) {
            try? FileSystemCalls.unlink(path)
        }
        for path in trees.withLock({ trees in defer { trees.removeAll() }; return trees }) {
            FileSystemCalls.removeTree(path)
        }
    }
}
