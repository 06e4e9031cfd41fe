#if canImport(Glibc)
import Glibc
#endif
import MediaCore
import MediaFormats
import SystemPackage

/// The frame readers of native files, which read a path (``MP3FrameInput``, ``OggOpusPacketInput``,
/// ``FLACFrameInput``), over the input written to a file on tmpfs (`/dev/shm`, one per process,
/// written again for each input): each reads to its end or a typed error, never traps or runs
/// on, and steps over damage to the next frame or page it can read. What it gives lies inside
/// the file: no more packets than bytes, no packet longer than the file, times that only grow.
enum NativeFileFuzzTarget {
    nonisolated(unsafe) private static var path: FilePath?

    /// Reads every packet of `data` as a file of `format`.
    static func read(_ data: [UInt8], as format: MediaFileFormat) {
        guard let path = store(data) else { return }
        var input: any PacketFileSource
        do throws(PipelineError) {
            switch format {
            case .mp3: input = try MP3FrameInput(path: path)
            case .oggOpus: input = try OggOpusPacketInput(path: path)
            case .flac: input = try FLACFrameInput(path: path)
            default: return
            }
        } catch { return }
        var packets = 0
        var lastTime: MediaTime?
        while let packet = try? input.next() {
            packets += 1
            precondition(packets <= data.count, "more packets than bytes")
            precondition(packet.data.count <= data.count, "a packet longer than the file")
            if let lastTime { precondition(packet.presentationTime >= lastTime, "packet times went back") }
            lastTime = packet.presentationTime
            _ = input.takeDamage()
        }
        _ = input.takeDamage()
    }

    /// `data` as the fuzz file; `nil` when it cannot be written.
    private static func store(_ data: [UInt8]) -> FilePath? {
        let path = Self.path ?? {
            let made = FilePath("/dev/shm/keyframe-fuzz-native-\(getpid())")
            Self.path = made
            // libFuzzer and the replays end with exit(3): the file goes with the process.
            atexit { _ = NativeFileFuzzTarget.path?.withPlatformString { unlink($0) } }
            return made
        }()
        let descriptor = path.withPlatformString { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var written = 0
        while written < data.count {
            let count = data.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            guard count > 0 else { return nil }
            written += count
        }
        return path
    }
}
