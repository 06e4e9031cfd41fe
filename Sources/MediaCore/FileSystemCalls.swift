#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#else
#error("FileSystemCalls needs rename(2), unlink(2) and fsync(2) from the platform C library")
#endif
package import SystemPackage

/// The system's words for an `errno` value (`Connection refused`, `Address already in use`), as
/// `strerror(3)` gives them: how a socket's or a file's failure is told to a user, everywhere.
package func systemErrorWords(_ code: CInt) -> String {
    String(cString: strerror(code))
}

// The platform C library's calls, named apart from the Swift wrappers below so that a wrapper
// never resolves to itself. Each returns what the C call returns: 0, or -1 with errno set.

private func system_rename(_ source: UnsafePointer<CChar>, _ destination: UnsafePointer<CChar>) -> CInt {
    rename(source, destination)
}

private func system_unlink(_ path: UnsafePointer<CChar>) -> CInt {
    unlink(path)
}

private func system_mkdir(_ path: UnsafePointer<CChar>, _ mode: mode_t) -> CInt {
    mkdir(path, mode)
}

private func system_rmdir(_ path: UnsafePointer<CChar>) -> CInt {
    rmdir(path)
}

private func system_sync() {
    sync()
}

private func system_fsync(_ descriptor: CInt) -> CInt {
    fsync(descriptor)
}

private func system_fstat(_ descriptor: CInt, _ status: UnsafeMutablePointer<stat>) -> CInt {
    fstat(descriptor, status)
}

private func system_stat(_ path: UnsafePointer<CChar>, _ status: UnsafeMutablePointer<stat>) -> CInt {
    stat(path, status)
}

private func system_lstat(_ path: UnsafePointer<CChar>, _ status: UnsafeMutablePointer<stat>) -> CInt {
    lstat(path, status)
}

private func system_readlink(_ path: UnsafePointer<CChar>, _ buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> Int {
    readlink(path, buffer, size)
}

private func system_fchmod(_ descriptor: CInt, _ mode: mode_t) -> CInt {
    fchmod(descriptor, mode)
}

private func system_fchown(_ descriptor: CInt, _ owner: uid_t, _ group: gid_t) -> CInt {
    fchown(descriptor, owner, group)
}

#if os(Linux)
/// Linux's `sync_file_range(2)`, which glibc declares only under `_GNU_SOURCE` (so Swift's Glibc
/// module does not import it): looked up once in the C library already loaded, with its C type.
/// `nil` if the C library has no such symbol (then writeback is simply not started early).
private let system_sync_file_range: (@convention(c) (CInt, Int64, Int64, CUnsignedInt) -> CInt)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (CInt, Int64, Int64, CUnsignedInt) -> CInt).self)
}()

/// Linux's `syncfs(2)`, declared by glibc only under `_GNU_SOURCE`: looked up like
/// `sync_file_range`; `nil` without it (then `sync(2)` does the work).
private let system_syncfs: (@convention(c) (CInt) -> CInt)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syncfs") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (CInt) -> CInt).self)
}()
#endif

/// The file-system calls swift-system 1.8 does not wrap — `rename(2)`, `unlink(2)`, `fsync(2)`,
/// `fstat(2)` and Linux's `sync_file_range(2)` — as thin wrappers that throw `Errno`, the way swift-system's own do. This file is
/// MediaCore's only use of the platform C library.
package enum FileSystemCalls {
    /// `rename(2)`: gives `source` the name `destination` in one step. An existing file at
    /// `destination` is replaced atomically: every observer sees either it or `source`'s file,
    /// never neither (POSIX.1-2017, rename()). Both must be on the same file system.
    static func rename(_ source: FilePath, to destination: FilePath) throws(Errno) {
        try nothingOrErrno(retryOnInterrupt: false) {
            source.withPlatformString { source in
                destination.withPlatformString { destination in system_rename(source, destination) }
            }
        }
    }

    /// `unlink(2)`: removes the name `path` (a file, not a directory).
    package static func unlink(_ path: FilePath) throws(Errno) {
        try nothingOrErrno(retryOnInterrupt: false) {
            path.withPlatformString { system_unlink($0) }
        }
    }

    /// `mkdir(2)` with mode 0755 (less the umask); an existing directory is not an error.
    package static func makeDirectory(_ path: FilePath) throws(Errno) {
        do throws(Errno) {
            try nothingOrErrno(retryOnInterrupt: false) { path.withPlatformString { system_mkdir($0, 0o755) } }
        } catch where error == .fileExists {
            return
        }
    }

    /// `mkdir -p`: `path` and the directories above it that are missing (mode 0755 each).
    package static func makeDirectories(_ path: FilePath) throws(Errno) {
        guard !path.isEmpty, !isDirectory(path) else { return }
        try makeDirectories(path.removingLastComponent())
        try makeDirectory(path)
    }

    /// `mkdtemp(3)`: a new directory, private to the user (mode 0700), named `prefix` and six
    /// random characters under `TMPDIR` (`/tmp` when it is not set).
    package static func makeTemporaryDirectory(prefix: String) throws(Errno) -> FilePath {
        var template = Array(temporaryDirectory.appending(prefix + "XXXXXX").string.utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> FilePath? in
            guard let name = mkdtemp(buffer.baseAddress!) else { return nil }
            return FilePath(platformString: name)
        }
        guard let made else { throw Errno(rawValue: errno) }
        return made
    }

    /// Where temporary files go: `TMPDIR`, or `/tmp` when it is not set.
    package static var temporaryDirectory: FilePath {
        FilePath(getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp")
    }

    /// The regular files under `directory`, as paths relative to it (`64k/index.m3u8`), sorted;
    /// directories are walked, anything else (a link, a FIFO, a device) is left out and never
    /// followed.
    package static func regularFiles(under directory: FilePath) throws(Errno) -> [String] {
        var found: [String] = []
        for name in try entries(of: directory) {
            let path = directory.appending(name)
            guard let kind = kind(of: path) else { continue }
            switch kind {
            case S_IFDIR: found += try regularFiles(under: path).map { name + "/" + $0 }
            case S_IFREG: found.append(name)
            default: continue
            }
        }
        return found
    }

    /// What `path` itself is (`S_IFDIR`, `S_IFREG`, `S_IFLNK`, …; `lstat(2)`, so a link is
    /// not followed), or `nil` when it cannot be looked at.
    private static func kind(of path: FilePath) -> mode_t? {
        var status = stat()
        guard path.withPlatformString({ lstat($0, &status) }) == 0 else { return nil }
        return status.st_mode & S_IFMT
    }

    /// Removes `directory` and everything under it that this process may remove (regular files,
    /// links and the directories they were in), deepest first; what cannot be removed stays.
    package static func removeTree(_ directory: FilePath) {
        for name in (try? entries(of: directory)) ?? [] {
            let path = directory.appending(name)
            if kind(of: path) == S_IFDIR { removeTree(path) } else { try? unlink(path) }
        }
        try? removeDirectory(directory)
    }

    /// `rmdir(2)`: removes the empty directory `path`.
    package static func removeDirectory(_ path: FilePath) throws(Errno) {
        try nothingOrErrno(retryOnInterrupt: false) { path.withPlatformString { system_rmdir($0) } }
    }

    /// Writes back everything written to the file system that holds `directory` (`syncfs(2)`;
    /// `sync(2)` where there is no `syncfs`), and the directory itself: one call for many files
    /// committed without syncing.
    package static func syncFileSystem(containing directory: FilePath) throws(Errno) {
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(directory, .readOnly) } catch { throw error as? Errno ?? .ioError }
        defer { try? descriptor.close() }
        #if os(Linux)
        if let syncfs = system_syncfs {
            try nothingOrErrno(retryOnInterrupt: true) { syncfs(descriptor.rawValue) }
            return
        }
        #endif
        system_sync()
        try Self.sync(descriptor)
    }

    /// Whether something is at `path` (`lstat(2)` succeeds: a file of any kind, or a symbolic
    /// link, even one that names nothing). Nothing is opened, so a FIFO is neither waited on
    /// nor has its writer woken.
    package static func exists(_ path: FilePath) -> Bool {
        var status = stat()
        return path.withPlatformString { system_lstat($0, &status) } == 0
    }

    /// Whether `path` names a directory (`stat(2)`, following symbolic links).
    package static func isDirectory(_ path: FilePath) -> Bool {
        var status = stat()
        let result = path.withPlatformString { stat($0, &status) }
        return result == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// The names in `directory` (`opendir(3)`/`readdir(3)`), without `.` and `..`, sorted.
    package static func entries(of directory: FilePath) throws(Errno) -> [String] {
        guard let handle = directory.withPlatformString({ opendir($0) }) else { throw Errno(rawValue: errno) }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// `fstat(2)`: the size in bytes of the open file, when it is a regular file (`nil` for a
    /// directory, pipe, device or socket). Reads no file position, so any thread may ask.
    static func regularFileSize(_ descriptor: FileDescriptor) -> Int64? {
        var status = stat()
        guard (try? nothingOrErrno(retryOnInterrupt: true, { system_fstat(descriptor.rawValue, &status) })) != nil,
              status.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(status.st_size)
    }

    /// `realpath(3)`: `path` with every symbolic link, `.` and `..` resolved, absolute; `nil`
    /// when something along it does not exist.
    package static func resolvedPath(_ path: FilePath) -> FilePath? {
        path.withPlatformString { name -> FilePath? in
            guard let resolved = realpath(name, nil) else { return nil }
            defer { free(resolved) }
            return FilePath(platformString: resolved)
        }
    }

    /// `fstat(2)`: whether the open file is a directory.
    static func isDirectory(_ descriptor: FileDescriptor) -> Bool {
        var status = stat()
        guard (try? nothingOrErrno(retryOnInterrupt: true, { system_fstat(descriptor.rawValue, &status) })) != nil else { return false }
        return status.st_mode & S_IFMT == S_IFDIR
    }

    /// `fstat(2)`: when the open file's data last changed (`st_mtim`), in seconds and
    /// nanoseconds since 1970-01-01 UTC; `nil` when it cannot be asked.
    static func modificationTime(_ descriptor: FileDescriptor) -> (seconds: Int64, nanoseconds: Int64)? {
        var status = stat()
        guard (try? nothingOrErrno(retryOnInterrupt: true, { system_fstat(descriptor.rawValue, &status) })) != nil else { return nil }
        return (Int64(status.st_mtim.tv_sec), Int64(status.st_mtim.tv_nsec))
    }

    /// `fsync(2)`: returns once the file's data and metadata are on stable storage.
    static func sync(_ descriptor: FileDescriptor) throws(Errno) {
        try nothingOrErrno(retryOnInterrupt: true) { system_fsync(descriptor.rawValue) }
    }

    /// Starts writing `count` bytes of the file from `offset` to storage without waiting for
    /// them: `sync_file_range(2)` with `SYNC_FILE_RANGE_WRITE` (Linux). A later `fsync(2)` then
    /// has only the rest to write, and the device works while the caller goes on; it promises
    /// nothing about durability by itself. Elsewhere, and where the call fails (a file system
    /// without it, a pipe), nothing happens: this is an optimisation, never an error.
    static func startWriteback(_ descriptor: FileDescriptor, offset: Int64, count: Int64) {
        #if os(Linux)
        let syncFileRangeWrite: CUnsignedInt = 2   // SYNC_FILE_RANGE_WRITE, <linux/fs.h>
        _ = system_sync_file_range?(descriptor.rawValue, offset, count, syncFileRangeWrite)
        #endif
    }

    /// Makes the directory entries of `directory` durable: opens it (`O_RDONLY | O_DIRECTORY`,
    /// through swift-system) and `fsync(2)`s it, so that a file just created or renamed in it
    /// survives a power cut under its name. A file system that cannot sync a directory
    /// (`EINVAL`, as POSIX allows) has nothing more to offer and is not an error.
    static func syncDirectory(_ directory: FilePath) throws(Errno) {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(directory, .readOnly, options: [.directory, .closeOnExec])
        } catch {
            throw error as? Errno ?? .ioError   // swift-system throws only Errno
        }
        defer { try? descriptor.close() }
        do throws(Errno) { try sync(descriptor) } catch where error == .invalidArgument {
            return
        }
    }

    /// The one place a C result becomes a Swift error: -1 throws the thread's `errno`; `EINTR`
    /// is retried when asked.
    private static func nothingOrErrno(retryOnInterrupt: Bool, _ call: () -> CInt) throws(Errno) {
        while true {
            if call() != -1 { return }
            let failure = Errno(rawValue: errno)
            if retryOnInterrupt, failure == .interrupted { continue }
            throw failure
        }
    }
}

extension FileSystemCalls {
    /// What an output replaces: a regular file's permission bits and owner, kept by the file
    /// that takes its place (an atomic output is a new file, renamed over the old one).
    struct ReplacedFile: Sendable, Hashable {
        /// The permission bits, set-id and sticky bits included (`st_mode & 07777`).
        var permissions: UInt32
        /// The owner and group.
        var owner: UInt32
        var group: UInt32
    }

    /// The regular file at `path` (not following a symbolic link), `nil` when there is none
    /// or it is something else.
    static func regularFile(at path: FilePath) -> ReplacedFile? {
        var status = stat()
        let result = path.withPlatformString { system_lstat($0, &status) }
        guard result == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return ReplacedFile(permissions: UInt32(status.st_mode & 0o7777), owner: UInt32(status.st_uid), group: UInt32(status.st_gid))
    }

    /// `path` with its symbolic links followed, so that an output written through a link
    /// replaces the link's target and the link stays: each link's target read with
    /// `readlink(2)`, relative targets taken from the link's directory, at most 40 links (Linux's
    /// `MAXSYMLINKS`; more is `ELOOP`). Only links this process's user owns are followed (the
    /// rule `fs.protected_symlinks` applies in sticky directories, here everywhere): a link
    /// someone else planted is replaced itself, not what it names. A path that is not a link,
    /// or does not exist, is returned as it is; only the last component is followed (a
    /// directory on the way is the kernel's to resolve).
    static func followingSymbolicLinks(_ path: FilePath) throws(Errno) -> FilePath {
        var current = path
        for _ in 0..<40 {
            var status = stat()
            let result = current.withPlatformString { system_lstat($0, &status) }
            guard result == 0, status.st_mode & S_IFMT == S_IFLNK, status.st_uid == geteuid() else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = current.withPlatformString { name in buffer.withUnsafeMutableBufferPointer { system_readlink(name, $0.baseAddress!, $0.count - 1) } }
            guard length > 0 else { throw Errno(rawValue: errno) }
            buffer[length] = 0
            let target = buffer.withUnsafeBufferPointer { FilePath(platformString: $0.baseAddress!) }
            current = target.isAbsolute ? target : current.removingLastComponent().pushing(target)
        }
        throw .tooManySymbolicLinkLevels
    }

    /// What is at `path` (not following a link) when it is something an output must never
    /// replace: "a directory", "a character device", "a block device", "a FIFO", "a socket";
    /// `nil` for a regular file, a symbolic link, or nothing.
    static func kindOtherThanRegularFile(at path: FilePath) -> String? {
        var status = stat()
        guard path.withPlatformString({ system_lstat($0, &status) }) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFREG, S_IFLNK: return nil
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        default: return "a file that is not a regular file"
        }
    }

    /// Gives the file open as `descriptor` the permission bits of `replaced`, and its owner
    /// and group where this process may (`fchown(2)` by an unprivileged process may give only
    /// the group, and only one it is in: then the group is kept if it can be). Best effort, as
    /// `cp -p` is: a file system without modes (some FUSE and CIFS mounts) still gets the
    /// output, and the set-user-ID and set-group-ID bits are kept only with the owner they
    /// belonged to.
    static func keep(_ replaced: ReplacedFile, on descriptor: FileDescriptor) {
        let ownerKept = system_fchown(descriptor.rawValue, uid_t(replaced.owner), gid_t(replaced.group)) == 0
        if !ownerKept { _ = system_fchown(descriptor.rawValue, uid_t.max, gid_t(replaced.group)) }
        // After fchown, which may clear the set-id bits.
        _ = system_fchmod(descriptor.rawValue, mode_t(ownerKept ? replaced.permissions : replaced.permissions & 0o1777))
    }
}

extension FileSystemCalls {
    /// Whether `a` and `b` name the same file: the same device and inode once symbolic links
    /// are followed (`stat(2)`), so a link or a hard link to a file is that file. `false` when
    /// either does not exist.
    package static func sameFile(_ a: FilePath, _ b: FilePath) -> Bool {
        guard let first = identity(at: a), let second = identity(at: b) else { return false }
        return first == second
    }

    /// `fstat(2)`: the open file's device and inode.
    static func identity(of descriptor: FileDescriptor) -> InputFiles.Identity? {
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0 else { return nil }
        return InputFiles.Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// `stat(2)`: whether `path` (its links followed) is a regular file.
    package static func isRegularFile(at path: FilePath) -> Bool {
        var status = stat()
        return path.withPlatformString({ stat($0, &status) }) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// `stat(2)`: the device and inode of the file at `path`, its links followed; `nil` when
    /// nothing is there.
    static func identity(at path: FilePath) -> InputFiles.Identity? {
        var status = stat()
        guard path.withPlatformString({ stat($0, &status) }) == 0 else { return nil }
        return InputFiles.Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }
}
