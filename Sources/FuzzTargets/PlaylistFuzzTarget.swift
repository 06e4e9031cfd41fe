#if canImport(Glibc)
import Glibc
#endif
import MediaCore
import MediaFormats
import MediaStreaming
import MediaValidation
import MP4
import SystemPackage

/// The playlist-to-segments path over a folder of the input's making: what a hostile playlist
/// can name, in a file system held in memory (a folder on tmpfs, `/dev/shm`, made afresh for
/// each input): regular files, directories, symbolic links (to each other, in loops, to `/`),
/// FIFOs with no writer, and names that are missing.
///
/// The input: a count byte (at most 8 entries), then each entry as `kind` (one byte: 0 file,
/// 1 directory, 2 symbolic link, 3 FIFO, 4 nothing), a name (a length byte, then the name; `/`
/// and NUL become `_`), and a body (a little-endian 16-bit length, then the bytes: a file's
/// contents, a link's target); what follows is the playlist, `index.m3u8`.
///
/// Each input goes through ``HLSMediaPlaylist/files(of:)``, ``MediaInput/open(_:segments:)``
/// and a demuxer that pulls every sample, and through ``HLSValidation/findings(forPlaylist:)``:
/// each ends with a result or a typed error, never a trap, and never waits (a FIFO that any of
/// them opened to read would hang the run, which libFuzzer reports). A demuxed sample lies
/// inside the segments' bytes.
enum PlaylistFuzzTarget {
    struct Entry {
        enum Kind: UInt8 { case file, directory, symbolicLink, fifo, nothing }
        var kind: Kind
        var name: String
        var body: [UInt8]
    }

    /// The entries and the playlist an input describes.
    static func entries(of data: [UInt8]) -> (entries: [Entry], playlist: [UInt8]) {
        var index = 0
        func byte() -> UInt8? {
            guard index < data.count else { return nil }
            defer { index += 1 }
            return data[index]
        }
        func bytes(_ count: Int) -> [UInt8] {
            let end = min(data.count, index + count)
            defer { index = end }
            return Array(data[index..<end])
        }
        var entries: [Entry] = []
        let count = Int(byte() ?? 0) % 9
        for _ in 0..<count {
            guard let kind = byte(), let nameLength = byte() else { break }
            var name = String(decoding: bytes(Int(nameLength)).map { $0 == UInt8(ascii: "/") || $0 == 0 ? UInt8(ascii: "_") : $0 },
                              as: UTF8.self)
            if name.isEmpty || name == "." || name == ".." || name == "index.m3u8" { name = "entry-\(entries.count)" }
            let length = Int(byte() ?? 0) | Int(byte() ?? 0) << 8
            entries.append(Entry(kind: Entry.Kind(rawValue: kind % 5) ?? .nothing, name: name, body: bytes(length)))
        }
        return (entries, Array(data[min(index, data.count)...]))
    }

    /// The folder this process fuzzes in, emptied before each input.
    nonisolated(unsafe) private static var folder: FilePath?
    nonisolated(unsafe) private static var made: [(name: String, isDirectory: Bool)] = []

    static func run(_ data: [UInt8]) {
        let folder = prepare()
        let (entries, playlist) = entries(of: data)
        for entry in entries where !made.contains(where: { $0.name == entry.name }) {
            let path = folder.appending(entry.name)
            let made: Bool = path.withPlatformString { name in
                switch entry.kind {
                case .file:
                    let descriptor = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                    guard descriptor >= 0 else { return false }
                    _ = entry.body.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                    close(descriptor)
                    return true
                case .directory: return mkdir(name, 0o755) == 0
                case .symbolicLink:
                    let target = String(decoding: entry.body.prefix(255).map { $0 == 0 ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
                    return symlink(target, name) == 0
                case .fifo: return mkfifo(name, 0o644) == 0
                case .nothing: return false
                }
            }
            if made { self.made.append((entry.name, entry.kind == .directory)) }
        }
        let index = folder.appending("index.m3u8")
        let written: Bool = index.withPlatformString { name in
            let descriptor = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { return false }
            _ = playlist.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
            return true
        }
        precondition(written, "the fuzz folder takes no playlist")
        self.made.append(("index.m3u8", false))

        if let files = try? HLSMediaPlaylist.files(of: index), let source = try? MediaInput.open(files.initSegment, segments: files.segments) {
            let demuxer = MP4Demuxer(source: source)
            var pulled = 0
            while pulled < 100_000, let sample = try? demuxer.nextAudioSample() {
                precondition(sample.data.count <= source.byteCount, "a sample larger than the segments")
                pulled += 1
            }
        }
        _ = try? HLSValidation.findings(forPlaylist: index)
    }

    /// Removes what the last input made in `folder`.
    private static func empty(_ folder: FilePath) {
        for entry in made.reversed() {
            _ = folder.appending(entry.name).withPlatformString { entry.isDirectory ? rmdir($0) : unlink($0) }
        }
        made.removeAll()
    }

    /// Empties and removes the fuzz folder.
    private static func removeFolder() {
        guard let folder else { return }
        empty(folder)
        _ = folder.withPlatformString { rmdir($0) }
    }

    /// The fuzz folder, emptied of what the last input made.
    private static func prepare() -> FilePath {
        let folder = Self.folder ?? {
            let made = FilePath("/dev/shm/keyframe-fuzz-playlist-\(getpid())")
            _ = made.withPlatformString { mkdir($0, 0o755) }
            Self.folder = made
            // libFuzzer and the replays end with exit(3): the folder goes with the process.
            atexit { PlaylistFuzzTarget.removeFolder() }
            return made
        }()
        empty(folder)
        return folder
    }
}
