import Foundation
import MediaCore
import SystemPackage
import Testing

/// ``FileByteSink``'s commit: one rename onto the destination, nothing left behind, and an
/// existing file untouched until the commit succeeds.
@Suite struct FileCommitTests {
    /// A new empty directory, removed by `body`'s end.
    private func withScratchDirectory(_ body: (String) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-commit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(path)
    }

    private func inode(_ path: String) throws -> UInt64 {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
    }

    private func contents(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map(Array.init)
    }

    private func names(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    @Test func commitReplacesAnExistingFileWithANewOne() throws {
        try withScratchDirectory { directory in
            let path = directory + "/out.aac"
            #expect(FileManager.default.createFile(atPath: path, contents: Data("old".utf8)))
            let oldInode = try inode(path)
            let sink = try FileByteSink(path: FilePath(path))
            try sink.write(Array("new bytes".utf8))
            #expect(contents(path) == Array("old".utf8), "the old file is untouched until the commit")
            try sink.commit()
            #expect(contents(path) == Array("new bytes".utf8))
            #expect(try inode(path) != oldInode, "renamed onto, not rewritten in place")
            #expect(try names(in: directory) == ["out.aac"], "no temporary file is left")
        }
    }

    /// Pieces of every size — buffered, written through, across several 4 MiB writeback strides
    /// (`sync_file_range` starts each one) — commit to exactly the bytes written, in order.
    @Test func piecesOfEverySizePastSeveralWritebackStridesCommitExactly() throws {
        try withScratchDirectory { directory in
            let path = directory + "/big.bin"
            let sink = try FileByteSink(path: FilePath(path))
            var expected: [UInt8] = []
            // Fixed sizes (reproducible): around the 64 KiB write-through and 256 KiB buffer
            // limits, and enough bytes (~10 MB) for two writeback strides.
            let sizes = [1, 7, 65_535, 65_536, 300_000, 3, 262_144, 1_000_000, 12]
                + (0..<40).map { ($0 * 7_919_113) % 400_001 }
            for (index, size) in sizes.enumerated() {
                let piece = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
                try sink.write(piece)
                expected += piece
            }
            #expect(sink.byteCount == Int64(expected.count))
            try sink.overwrite([0xAB, 0xCD], at: 5)
            expected.replaceSubrange(5..<7, with: [0xAB, 0xCD])
            try sink.commit()
            #expect(contents(path) == expected)
            #expect(try names(in: directory) == ["big.bin"])
        }
    }

    @Test func anExistingFileSurvivesACancelledADiscardedAndAnAbandonedSink() throws {
        try withScratchDirectory { directory in
            let path = directory + "/out.m4a"
            #expect(FileManager.default.createFile(atPath: path, contents: Data("old".utf8)))
            let oldInode = try inode(path)

            let cancelled = try FileByteSink(path: FilePath(path))
            try cancelled.write(Array(repeating: 1, count: 300_000))   // more than the buffer: on disk
            cancelled.cancel()
            let discarded = try FileByteSink(path: FilePath(path))
            try discarded.write(Array("discarded".utf8))
            discarded.discard()
            do {   // a job that failed and dropped its sink without committing
                let abandoned = try FileByteSink(path: FilePath(path))
                try abandoned.write(Array("abandoned".utf8))
            }

            #expect(contents(path) == Array("old".utf8))
            #expect(try inode(path) == oldInode)
            #expect(try names(in: directory) == ["out.m4a"], "no temporary file is left")
        }
    }

    @Test func aNewFileIsReadableByAllAndWritableByItsOwner() throws {
        // The process's umask (Linux reports it in /proc/self/status) still applies.
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let umaskLine = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        let umask = try #require(UInt16(umaskLine.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
        try withScratchDirectory { directory in
            for atomic in [true, false] {
                let path = directory + "/new-\(atomic).wav"
                let sink = try FileByteSink(path: FilePath(path), atomic: atomic)
                try sink.write(Array("RIFF".utf8))
                try sink.commit()
                let mode = try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
                #expect(mode == Int(0o644 & ~umask), "mode \(String(mode, radix: 8)), atomic: \(atomic)")
            }
        }
    }

    @Test func aSinkWrittenInPlaceKeepsItsFileAndCommitsIt() throws {
        try withScratchDirectory { directory in
            let path = directory + "/recording.aac"
            let sink = try FileByteSink(path: FilePath(path), atomic: false)
            #expect(sink.temporaryPath == FilePath(path))
            try sink.write(Array("first second".utf8))
            try sink.flush()
            #expect(contents(path) == Array("first second".utf8), "written in place: readable before the commit")
            try sink.write(Array(" third".utf8))
            try sink.commit()
            #expect(contents(path) == Array("first second third".utf8))
            #expect(try names(in: directory) == ["recording.aac"])
        }
    }

    @Test func aFailedRenameNamesTheOutputAndLeavesNothingBehind() throws {
        try withScratchDirectory { directory in
            // A non-empty directory appears where the output goes after the sink opened (a
            // directory there at open is refused then): rename(2) cannot replace it.
            let path = directory + "/out.mp4"
            let sink = try FileByteSink(path: FilePath(path))
            try sink.write(Array("new".utf8))
            try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
            #expect {
                try sink.commit()
            } throws: { error in
                guard case .system(let operation, let failedPath, let errno) = error as? ByteStreamError else { return false }
                return operation == "rename into place" && failedPath == FilePath(path) && [.isDirectory, .directoryNotEmpty].contains(errno)
            }
            #expect(try names(in: directory) == ["out.mp4"], "the temporary file is removed")
            #expect(try names(in: path) == ["inside"], "what was there is untouched")
        }
    }

    @Test func aDirectoryWhereTheOutputGoesIsRefusedBeforeAnythingIsWritten() throws {
        try withScratchDirectory { directory in
            let path = directory + "/out.mp4"
            try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
            #expect(throws: ByteStreamError.refused(path: FilePath(path),
                                                    reason: "a directory, not a regular file: an output is written only as a regular file")) {
                _ = try FileByteSink(path: FilePath(path))
            }
            #expect(try names(in: directory) == ["out.mp4"], "no temporary file")
            #expect(try names(in: path) == ["inside"], "what was there is untouched")
        }
    }

    @Test func aMissingDirectoryIsATypedErrorNamingTheOutput() throws {
        try withScratchDirectory { directory in
            let path = directory + "/no-such-directory/out.aac"
            #expect(throws: ByteStreamError.system(operation: "create", path: FilePath(path), errno: .noSuchFileOrDirectory)) {
                _ = try FileByteSink(path: FilePath(path))
            }
        }
    }
}

/// Issue 36: a crash-safe (in-place) output never writes over an existing file, and nothing
/// that is not a regular file is written or replaced.
@Suite struct InPlaceOutputTests {
    static func scratch() throws -> FilePath {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("keyframe-inplace-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return FilePath(path)
    }

    static func contents(_ path: FilePath) -> [UInt8]? {
        guard let source = try? FileByteSource(path: path) else { return nil }
        return try? source.read(at: 0, count: 1 << 20)
    }

    @Test func anExistingOutputIsReplacedOnlyWhenTheWriteFinishes() throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory.string) }
        let output = directory.appending("take.m4a")
        let old = try FileByteSink(path: output)
        try old.write([1, 2, 3])
        try old.commit()
        // A recording over it: written beside, under a name a player opens.
        let sink = try FileByteSink(path: output, atomic: false)
        #expect(sink.temporaryPath == directory.appending("take.partial.m4a"))
        try sink.write([9, 9, 9, 9])
        try sink.flush()
        #expect(Self.contents(output) == [1, 2, 3], "the old output is as it was while the new one is written")
        // A second one at once takes the next free name.
        let second = try FileByteSink(path: output, atomic: false)
        #expect(second.temporaryPath == directory.appending("take.partial-2.m4a"))
        second.discard()
        // Killed (cancelled): the old output and the partial both remain.
        sink.cancel()
        #expect(Self.contents(output) == [1, 2, 3])
        #expect(Self.contents(directory.appending("take.partial.m4a")) == [9, 9, 9, 9])
        // Finished: the new file replaces the old in one rename.
        let third = try FileByteSink(path: output, atomic: false)
        try third.write([7, 7])
        try third.commit()
        #expect(Self.contents(output) == [7, 7])
        // Nothing there: written under its own name from the start.
        let fresh = directory.appending("new.aac")
        let direct = try FileByteSink(path: fresh, atomic: false)
        #expect(direct.temporaryPath == fresh)
        try direct.write([5])
        try direct.commit()
        #expect(Self.contents(fresh) == [5])
    }

    @Test(arguments: [false, true])
    func aDeviceNodeIsNeverWrittenNorReplaced(atomic: Bool) throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory.string) }
        // A node of /dev/full (1, 7), made here, never the system's /dev.
        let node = directory.appending("node.m4a")
        try #require(node.withPlatformString { mknod($0, S_IFCHR | 0o644, dev_t((1 << 8) | 7)) } == 0, "mknod needs root, as CI runs")
        let link = directory.appending("link.aac")
        try #require(link.withPlatformString { target in node.withPlatformString { symlink($0, target) } } == 0)
        for path in [node, link] {
            #expect(throws: ByteStreamError.self) { _ = try FileByteSink(path: path, atomic: atomic) }
        }
        var status = stat()
        #expect(node.withPlatformString { lstat($0, &status) } == 0 && status.st_mode & S_IFMT == S_IFCHR, "the node is still a node")
    }

    /// Whichever writer opens it, an output that is an input of the process, by a hard link, a
    /// symbolic link or its own name, is refused before a byte is written: the input is whole.
    @Test(arguments: [false, true])
    func anOutputThatIsAnInputIsRefusedUnderEveryName(atomic: Bool) throws {
        let directory = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: directory.string) }
        let input = directory.appending("take.wav")
        try Data(repeating: 3, count: 1000).write(to: URL(fileURLWithPath: input.string))
        let hard = directory.appending("hard.m4a")
        let symbolic = directory.appending("symbolic.m4a")
        try #require(input.withPlatformString { source in hard.withPlatformString { link(source, $0) } } == 0)
        try #require(symbolic.withPlatformString { target in input.withPlatformString { symlink($0, target) } } == 0)
        let source = try FileByteSource(path: input)
        for path in [input, hard, symbolic] {
            #expect {
                _ = try FileByteSink(path: path, atomic: atomic)
            } throws: { error in
                guard case .refused(_, let reason) = error as? ByteStreamError else { return false }
                return reason.contains("an input of this job")
            }
        }
        #expect(try source.read(at: 0, count: 2000).count == 1000)
        #expect(Self.contents(input) == [UInt8](repeating: 3, count: 1000), "the input is whole")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.string).sorted() == ["hard.m4a", "symbolic.m4a", "take.wav"])
    }
}
