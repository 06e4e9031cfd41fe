import Foundation
import MediaCore
@testable import MP4
import Testing
import TestSupport

@Suite("tkhd matrix", .blocking)
struct TrackTransformTests {
    static let one: Int32 = 0x1_0000

    @Test func handCheckedMatrices() throws {
        #expect(TrackTransform.identity.rotation == 0 && !TrackTransform.identity.isMirrored)
        #expect(TrackTransform.identity.description == "identity")
        #expect(TrackTransform.identity.displayMatrixRotation == 0)
        // An iPhone portrait video: 0 1 -1 0 with the picture height as x translation.
        let portrait = TrackTransform(a: 0, b: Self.one, u: 0, c: -Self.one, d: 0, v: 0, x: 1080 << 16, y: 0, w: 0x4000_0000)
        #expect(portrait.rotation == 90 && !portrait.isMirrored && portrait.description == "rotate 90")
        #expect(portrait.displayMatrixRotation == -90)
        #expect(portrait.displaySize(width: 1920, height: 1080) == (1080, 1920))
        let upsideDown = TrackTransform(a: -Self.one, b: 0, u: 0, c: 0, d: -Self.one, v: 0, x: 0, y: 0, w: 0x4000_0000)
        #expect(upsideDown.rotation == 180 && upsideDown.description == "rotate 180")
        #expect(upsideDown.displaySize(width: 640, height: 480) == (640, 480))
        // Mirrors: a horizontal flip is "rotate 180, mirrored" (ffprobe: -180), a vertical one "mirrored" at 0.
        let hflip = TrackTransform(a: -Self.one, b: 0, u: 0, c: 0, d: Self.one, v: 0, x: 0, y: 0, w: 0x4000_0000)
        #expect(hflip.isMirrored && hflip.rotation == 180 && hflip.description == "rotate 180, mirrored")
        #expect(hflip.displayMatrixRotation == -180)
        let vflip = TrackTransform(a: Self.one, b: 0, u: 0, c: 0, d: -Self.one, v: 0, x: 0, y: 0, w: 0x4000_0000)
        #expect(vflip.isMirrored && vflip.rotation == 0 && vflip.description == "rotate 0, mirrored")
        // Scaled 2x: still a rotation; the display size scales.
        let scaled = TrackTransform(a: 2 * Self.one, b: 0, u: 0, c: 0, d: 2 * Self.one, v: 0, x: 0, y: 0, w: 0x4000_0000)
        #expect(scaled.rotation == 0 && scaled.displaySize(width: 100, height: 50) == (200, 100))
        // 30°: no right-angle rotation; ffprobe's angle and the bounding box.
        let cos30 = Int32((0.8660254037844386 * 65536).rounded()), sin30 = Int32(32768)
        let tilted = TrackTransform(a: cos30, b: sin30, u: 0, c: -sin30, d: cos30, v: 0, x: 0, y: 0, w: 0x4000_0000)
        #expect(tilted.rotation == nil)
        #expect(abs((tilted.displayMatrixRotation ?? 0) + 30) < 1e-3)
        #expect(tilted.displaySize(width: 100, height: 100) == (137, 137))
        #expect(tilted.description.hasPrefix("matrix [56756, 32768, 0, -32768"))
        // Degenerate and projective matrices.
        let zero = try #require(TrackTransform(matrix: [Int32](repeating: 0, count: 9)))
        #expect(zero.rotation == nil && zero.displayMatrixRotation == nil && zero.displaySize(width: 10, height: 10) == (0, 0))
        let projective = TrackTransform(a: Self.one, b: 0, u: 5, c: 0, d: Self.one, v: 0, x: 0, y: 0, w: 0x4000_0000)
        #expect(projective.rotation == nil)
        #expect(TrackTransform(matrix: [1, 2, 3]) == nil)
        let huge = TrackTransform(a: Int32.max, b: Int32.min, u: 0, c: Int32.min, d: Int32.max, v: 0, x: 0, y: 0, w: 0)
        #expect(huge.displaySize(width: Int.max, height: Int.max) == (Int(Int32.max), Int(Int32.max)))
    }

    @Test func readsTheMatrixAndConcatenatesLikeFFmpeg() throws {
        var bytes: [UInt8] = []
        for value in [0, Self.one, 0, -Self.one, 0, 0, 0, 0, 0x4000_0000] as [Int32] {
            let raw = UInt32(bitPattern: value)
            bytes += [UInt8(raw >> 24), UInt8(raw >> 16 & 0xFF), UInt8(raw >> 8 & 0xFF), UInt8(raw & 0xFF)]
        }
        var reader = ByteReader(bytes)
        let transform = try TrackTransform(from: &reader, path: BoxPath(components: ["moov", "trak[1]", "tkhd"]))
        #expect(transform.rotation == 90)
        #expect(transform.concatenating(movie: .identity) == transform)
        #expect(transform.concatenating(movie: transform).rotation == 180)
        var short = ByteReader(Array(bytes.prefix(35)))
        #expect(throws: MP4Error.self) { try TrackTransform(from: &short, path: .root) }
    }

    /// ffprobe's Display Matrix rotation, and mediainfo's Rotation, of the first video stream.
    static func peers(_ url: URL) throws -> (ffprobe: Int?, mediainfo: Double?) {
        let object = try MediaTool.ffprobeJSON(["-select_streams", "v:0", "-show_streams", url.path])
        let stream = (object["streams"] as? [[String: Any]])?.first
        let sideData = stream?["side_data_list"] as? [[String: Any]]
        let rotation = sideData?.first { $0["side_data_type"] as? String == "Display Matrix" }?["rotation"] as? Int
        let info = String(decoding: try MediaTool.run("mediainfo", ["--Inform=Video;%Rotation%", url.path]), as: UTF8.self)
        return (rotation, Double(info.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    static func check(_ url: URL, rotation expected: Int?, mirrored: Bool, description: String) throws {
        let track = try #require(WalkedFile(try MediaTool.bytes(url)).videoTrack)
        let transform = try #require(TrackTransform(matrix: track.matrix))
        let (ffprobe, mediainfo) = try peers(url)
        #expect(transform.rotation == expected, "\(url.lastPathComponent) \(track.matrix)")
        #expect(transform.isMirrored == mirrored)
        #expect(transform.description == description)
        // ffprobe prints the counter-clockwise angle truncated to an integer; identity has no side data.
        if transform.isIdentity {
            #expect(ffprobe == nil)
        } else {
            #expect(ffprobe == transform.displayMatrixRotation.map { Int($0) }, "\(url.lastPathComponent)")
        }
        if let expected {
            #expect(ffprobe.map { (360 - $0) % 360 } ?? 0 == expected)
            #expect(mediainfo.map { Int($0) } ?? 0 == expected, "\(url.lastPathComponent): mediainfo \(String(describing: mediainfo))")
            let size = transform.displaySize(width: track.entryWidth, height: track.entryHeight)
            #expect(expected % 180 == 0 ? size == (track.entryWidth, track.entryHeight) : size == (track.entryHeight, track.entryWidth))
        }
    }

    @Test(arguments: [(0, "identity"), (90, "rotate 270"), (180, "rotate 180"), (270, "rotate 90"), (45, "matrix [46340, -46340, 0, 46340, 46340, 0, 0, 0, 1073741824]")])
    func ffmpegRotateTag(_ tag: Int, _ description: String) throws {
        // FFmpeg 5.1 writes `rotate=N` as a counter-clockwise rotation by N: ffprobe reports +N
        // and mediainfo (clockwise) 360 - N.
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = directory.appendingPathComponent("plain.mp4")
        let rotated = directory.appendingPathComponent("rotated.mp4")
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "0.2", "-c:v", "libx264", plain.path])
        try MediaTool.ffmpeg(["-i", plain.path, "-c", "copy", "-metadata:s:v", "rotate=\(tag)", rotated.path])
        let expected: Int? = tag % 90 == 0 ? (360 - tag) % 360 : nil
        try Self.check(rotated, rotation: expected, mirrored: false, description: description)
        if tag == 45 {
            let track = try #require(WalkedFile(try MediaTool.bytes(rotated)).videoTrack)
            let transform = try #require(TrackTransform(matrix: track.matrix))
            #expect(transform.displaySize(width: 320, height: 240) == (396, 396))
        }
    }

    @Test func corpusRotatedAndReflected() throws {
        // 0 1 1 0: a transpose. ffprobe -90, mediainfo 90: rotate 90 (clockwise), mirrored.
        try Self.check(Corpus.url("mp4_sample_rotate_and_reflect.mp4"), rotation: 90, mirrored: true, description: "rotate 90, mirrored")
        try Self.check(Corpus.url("mp4_sample.mp4"), rotation: 0, mirrored: false, description: "identity")
    }
}
