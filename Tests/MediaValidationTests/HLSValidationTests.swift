import Foundation
import MediaValidation
import SystemPackage
import Testing

/// The validation rules on their own (MediaValidation links no C library): a playlist read as a
/// document, and its findings against the files it names.
@Suite struct HLSValidationTests {
    static let media = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:6\n#EXT-X-MAP:URI=\"init.mp4\"\n"
        + "#EXTINF:6.0,\nsegment-00001.m4s\n#EXTINF:4.5,\nsegment-00002.m4s\n#EXT-X-ENDLIST\n"

    @Test func aMediaPlaylistReadsAsItsSegments() {
        let document = HLSPlaylistDocument(text: Self.media)
        #expect(!document.isMaster)
        #expect(document.problems.isEmpty)
        #expect(document.segments.count == 2)
        #expect(abs(document.totalDuration - 10.5) < 1e-9)
        #expect(document.tags(named: "EXT-X-TARGETDURATION").first?.value == "6")
    }

    @Test func aMasterPlaylistReadsAsItsVariants() {
        let document = HLSPlaylistDocument(text: "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=140000,CODECS=\"mp4a.40.2\"\n128k/index.m3u8\n")
        #expect(document.isMaster)
        #expect(document.variants.count == 1)
    }

    @Test func aSegmentThatIsNotThereIsAnError() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("validation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        let playlist = url.appendingPathComponent("index.m3u8")
        try Data(Self.media.utf8).write(to: playlist)
        let findings = try HLSValidation.findings(forPlaylist: FilePath(playlist.path))
        #expect(findings.contains { $0.severity == .error && "\($0)".contains("init.mp4") }, "\(findings)")
    }

    @Test func aTargetDurationThatIsNotAnIntegerIsAnInvalidValueOnItsLine() {
        let document = HLSPlaylistDocument(text: "#EXTM3U\n#EXT-X-TARGETDURATION:six\n#EXTINF:6.0,\nsegment-00001.m4s\n")
        #expect(document.problems.contains { $0.kind == .invalidValue && $0.tag == "EXT-X-TARGETDURATION" && $0.line == 2 },
                "\(document.problems)")
    }
}
