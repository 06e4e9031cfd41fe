// commit-probe: drives MediaCore's FileByteSink for the atomic-commit tests, which kill it
// (InteropTests/AtomicCommitTests.swift).
//
//   commit-probe loop PATH SIZE FIRST   commits PATH again and again, generation FIRST, FIRST+1, …,
//                                       each SIZE bytes (see `content`); prints "ready" after the
//                                       first commit and runs until killed
//   commit-probe commit PATH TEXT       commits TEXT to PATH once; on failure prints
//                                       "OPERATION<tab>PATH<tab>ERRNO" to stderr and exits 1
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import MediaCore
import SystemPackage

/// The bytes of generation `generation`: the generation (8 bytes, little-endian), then a
/// pattern derived from it and the offset, so that any truncation or mix of two generations
/// shows. The tests compute the same bytes.
func content(generation: UInt64, size: Int) -> [UInt8] {
    var bytes = (0..<8).map { UInt8(truncatingIfNeeded: generation >> (8 * UInt64($0))) }
    bytes.reserveCapacity(size)
    for offset in 8..<max(8, size) {
        bytes.append(UInt8(truncatingIfNeeded: generation &* 131 &+ UInt64(offset) &* 7 &+ UInt64(offset >> 8)))
    }
    return bytes
}

func say(_ text: String, to descriptor: FileDescriptor) {
    _ = try? descriptor.writeAll(Array(text.utf8))
}

func fail(_ error: ByteStreamError) -> Never {
    switch error {
    case .system(let operation, let path, let errno):
        say("\(operation)\t\(path)\t\(errno.rawValue)\n", to: .standardError)
    case .refused(let path, let reason):
        say("refused\t\(path)\t\(reason)\n", to: .standardError)
    }
    exit(1)
}

let arguments = CommandLine.arguments
switch arguments.count > 1 ? arguments[1] : "" {
case "loop" where arguments.count == 5:
    guard let size = Int(arguments[3]), size >= 8, var generation = UInt64(arguments[4]) else { exit(2) }
    var announced = false
    while true {
        do throws(ByteStreamError) {
            let sink = try FileByteSink(path: FilePath(arguments[2]))
            try sink.write(content(generation: generation, size: size))
            try sink.commit()
        } catch {
            fail(error)
        }
        if !announced {
            say("ready\n", to: .standardOutput)
            announced = true
        }
        generation += 1
    }
case "commit" where arguments.count == 4:
    do throws(ByteStreamError) {
        let sink = try FileByteSink(path: FilePath(arguments[2]))
        try sink.write(Array(arguments[3].utf8))
        try sink.commit()
    } catch {
        fail(error)
    }
default:
    say("usage: commit-probe loop PATH SIZE FIRST | commit PATH TEXT\n", to: .standardError)
    exit(2)
}
