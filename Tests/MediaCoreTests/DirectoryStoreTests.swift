import Foundation
import MediaCore
import SystemPackage
import Testing

/// ``DirectoryStore``: objects are files under the directory, put whole, named by relative paths.
@Suite struct DirectoryStoreTests {
    @Test func putsNestedObjectsWholeAndRemovesThem() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("DirectoryStoreTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = DirectoryStore(directory: FilePath(root.path).appending("made/by/put"))
        #expect(try !store.contains("64k/index.m3u8"))
        try store.put("64k/index.m3u8", Array("#EXTM3U\n".utf8))
        try store.put("64k/index.m3u8", Array("#EXTM3U\n#EXT-X-ENDLIST\n".utf8))
        #expect(try store.contains("64k/index.m3u8"))
        let path = root.appendingPathComponent("made/by/put/64k/index.m3u8").path
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "#EXTM3U\n#EXT-X-ENDLIST\n")
        // Only the object itself: no temporary file stays beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("made/by/put/64k").path) == ["index.m3u8"])
        try store.remove("64k/index.m3u8")
        try store.remove("64k/index.m3u8")
        #expect(try !store.contains("64k/index.m3u8"))
    }

    @Test(arguments: ["", "/up", "../up", "a/../up", "a//b", "./a", "a/", "a\u{0}b"])
    func namesThatAreNotRelativePathsAreRefused(name: String) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("DirectoryStoreTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let inside = root.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
        let store = DirectoryStore(directory: FilePath(inside.path))
        #expect(throws: PipelineError.self) { try store.put(name, [1]) }
        #expect(throws: PipelineError.self) { try store.contains(name) }
        #expect(try FileManager.default.subpathsOfDirectory(atPath: root.path) == ["store"], "nothing written, inside or beside")
    }

    @Test func removingTheLastObjectOfASubdirectoryRemovesTheSubdirectoryNotTheStore() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("DirectoryStoreTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = DirectoryStore(directory: FilePath(root.path))
        try store.put("64k/a/init.mp4", [1])
        try store.remove("64k/a/init.mp4")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
    }
}
