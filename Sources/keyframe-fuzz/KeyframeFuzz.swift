// keyframe-fuzz: drives the parsers in `FuzzTargets` with libFuzzer, or replays saved inputs.
//
//   keyframe-fuzz TARGET [libFuzzer flags] [CORPUS_DIR ...]   built with -sanitize=fuzzer -DFUZZING
//   keyframe-fuzz TARGET FILE_OR_DIR ...                      any other build: replay, no libFuzzer
//
// TARGET is one of `FuzzTarget.allCases` (adts, asc, esds, wav, mp4, h264, hevc, annexb, ics, ilst, chapters, mpd, rtmp, ts). When
// the first argument is not a target name, `KEYFRAME_FUZZ_TARGET` names it: libFuzzer's -fork/-jobs modes re-run this binary
// with the arguments it was given, which no longer hold the target name, so the fuzzing build puts
// the name in the environment its children inherit.

import FuzzTargets

#if FUZZING
import CLibFuzzer
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

@main
enum KeyframeFuzz {
    /// The target the libFuzzer callback runs. Written once in `main`, before libFuzzer starts.
    nonisolated(unsafe) static var target: FuzzTarget = .adts

    static let targetVariable = "KEYFRAME_FUZZ_TARGET"

    static func main() {
        var arguments = CommandLine.arguments
        let program = arguments.isEmpty ? "keyframe-fuzz" : arguments.removeFirst()
        if let first = arguments.first, let named = FuzzTarget(rawValue: first) {
            target = named
            arguments.removeFirst()
        } else if let value = getenv(targetVariable), let named = FuzzTarget(rawValue: String(cString: value)) {
            target = named
        } else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            printError("usage: \(program) \(names) [FILE_OR_DIR ...]  (or libFuzzer flags in a -DFUZZING build)")
            if let first = arguments.first { printError("error: unknown fuzz target '\(first)'") }
            exit(2)
        }
        #if FUZZING
        runLibFuzzer(program: program, arguments: arguments)
        #else
        replay(arguments)
        #endif
    }

    #if FUZZING
    /// Hands the remaining arguments to libFuzzer's driver; it exits the process itself on a finding.
    static func runLibFuzzer(program: String, arguments: [String]) -> Never {
        setenv(targetVariable, target.rawValue, 1)
        // argv for libFuzzer: the program, then everything after the target name, then NULL.
        // Kept alive for the whole run: libFuzzer holds on to these pointers.
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) }
        argv.append(nil)
        var argc = Int32(argv.count - 1)
        let storage = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: argv.count)
        storage.initialize(from: argv, count: argv.count)
        var argvPointer: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = storage
        let status = LLVMFuzzerRunDriver(&argc, &argvPointer) { data, size in
            KeyframeFuzz.runOne(data, size)
        }
        exit(status)
    }

    /// One libFuzzer input through the selected target.
    static func runOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        target.run(bytes)
        return 0
    }
    #else
    /// Runs every file named, and every file in every directory named, through the target.
    static func replay(_ paths: [String]) -> Never {
        var count = 0
        for path in paths {
            do {
                for file in try inputFiles(at: path) {
                    target.run(try readFile(file))
                    count += 1
                }
            } catch {
                printError("error: \(error)")
                exit(1)
            }
        }
        print("\(count) inputs replayed")
        exit(0)
    }

    struct ReplayError: Error, CustomStringConvertible {
        let description: String
    }

    /// `path` itself if it is a file; the files under it (recursively, sorted, no dot files) if it
    /// is a directory.
    static func inputFiles(at path: String) throws -> [String] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ReplayError(description: "\(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { return [path] }
        guard let directory = opendir(path) else {
            throw ReplayError(description: "\(path): \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return try names.sorted().flatMap { try inputFiles(at: path + "/" + $0) }
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw ReplayError(description: "\(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if n > 0 { bytes += buffer[0..<n] }
            if n < buffer.count {
                if ferror(file) != 0 { throw ReplayError(description: "\(path): read error") }
                break
            }
        }
        return bytes
    }
    #endif

    static func printError(_ message: String) {
        var line = message + "\n"
        line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}

#if FUZZING
/// `-sanitize=fuzzer` links all of libFuzzer, its `main` included, and that `main` needs this
/// symbol to link. Our `main` (above) wins and drives libFuzzer through `LLVMFuzzerRunDriver`;
/// this only has to exist, and does the same as the callback.
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    KeyframeFuzz.runOne(data, size)
}
#endif
