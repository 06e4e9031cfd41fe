import Foundation
import MediaCore
import SystemPackage
import Testing
import TestSupport
@testable import VideoBitstream

/// Runs ffmpeg and ffprobe as subprocesses. A missing tool is a failure, not a skip: `make test`
/// installs them.
enum Tool {
    typealias Failure = Subprocess.Failure

    /// Runs `name` and returns its standard output; a non-zero exit throws with its standard error.
    @discardableResult
    static func run(_ name: String, _ arguments: [String]) throws -> Data {
        try Subprocess.succeed(name, arguments).outputData
    }

    static func path(of name: String) throws -> String { try Subprocess.path(of: name) }

    /// `ffprobe -of json` output, decoded.
    static func probe(_ arguments: [String]) throws -> [String: Any] {
        let data = try run("ffprobe", ["-v", "error", "-of", "json"] + arguments)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure(description: "ffprobe printed no JSON object")
        }
        return object
    }

    /// A new empty directory for one test's files.
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vb-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// An elementary stream made by ffmpeg from lavfi's testsrc.
struct StreamFixture: CustomTestStringConvertible, Sendable {
    var name: String
    var codec: VideoCodec
    /// `-r` of the source and of ffmpeg's remux: "30" or "30000/1001".
    var rate: String
    var seconds: Double
    var size = "320x240"
    var pixelFormat = "yuv420p"
    /// Encoder arguments after `-c:v`.
    var encoder: [String]
    /// The composition delay in frames the GOP structure implies (x264 with `b-adapt` on may
    /// use fewer B-frames than allowed, so fixtures that need an exact structure turn it off).
    var expectedDelay: Int64
    /// The picture order count type of H.264 streams (nil for HEVC).
    var expectedPOCType: Int?

    var testDescription: String { name }

    var frameDuration: MediaTime {
        rate == "30000/1001" ? MediaTime(value: 1001, timescale: 30000) : MediaTime(value: 1, timescale: Int32(rate) ?? 30)
    }

    var fileExtension: String { codec == .h264 ? "h264" : "hevc" }

    /// Writes the stream into `directory` and returns its path.
    func make(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("\(name).\(fileExtension)").path
        try Tool.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=\(size):rate=\(rate)", "-t", "\(seconds)",
                                "-pix_fmt", pixelFormat] + encoder + ["-f", fileExtension, path])
        return path
    }

    static let all: [StreamFixture] = [
        StreamFixture(name: "x264-bf0", codec: .h264, rate: "30", seconds: 2, encoder: ["-c:v", "libx264", "-bf", "0"],
                      expectedDelay: 0, expectedPOCType: 2),
        StreamFixture(name: "x264-bf2-nopyramid-2997", codec: .h264, rate: "30000/1001", seconds: 2,
                      encoder: ["-c:v", "libx264", "-bf", "2", "-b-pyramid", "none"], expectedDelay: 1, expectedPOCType: 0),
        StreamFixture(name: "x264-bf3-pyramid-444", codec: .h264, rate: "30", seconds: 2, pixelFormat: "yuv444p",
                      encoder: ["-c:v", "libx264", "-bf", "3", "-b-pyramid", "normal"], expectedDelay: 2, expectedPOCType: 0),
        StreamFixture(name: "x264-bf2-gop12", codec: .h264, rate: "30", seconds: 3, size: "352x288",
                      encoder: ["-c:v", "libx264", "-bf", "2", "-g", "12", "-sc_threshold", "0", "-x264-params", "b-adapt=0"],
                      expectedDelay: 2, expectedPOCType: 0),
        StreamFixture(name: "x264-zerolatency-poc2", codec: .h264, rate: "30", seconds: 2, size: "200x120",
                      encoder: ["-c:v", "libx264", "-bf", "0", "-tune", "zerolatency"], expectedDelay: 0, expectedPOCType: 2),
        StreamFixture(name: "x265-bf0", codec: .hevc, rate: "30", seconds: 2,
                      encoder: ["-c:v", "libx265", "-x265-params", "bframes=0:log-level=error"], expectedDelay: 0, expectedPOCType: nil),
        StreamFixture(name: "x265-bf4-2997", codec: .hevc, rate: "30000/1001", seconds: 2,
                      encoder: ["-c:v", "libx265", "-x265-params", "bframes=4:log-level=error"], expectedDelay: 2, expectedPOCType: nil),
        StreamFixture(name: "x265-bf4-opengop-keyint20", codec: .hevc, rate: "30", seconds: 2, size: "208x120",
                      encoder: ["-c:v", "libx265", "-x265-params", "bframes=4:keyint=20:min-keyint=20:scenecut=0:log-level=error"],
                      expectedDelay: 2, expectedPOCType: nil),
        // Longer than the 64-unit reorder window in one coded video sequence: ranks come from
        // the window and the SPS's reorder bound, not from the next IDR.
        StreamFixture(name: "x264-defaults-150f", codec: .h264, rate: "30", seconds: 5, size: "160x96",
                      encoder: ["-c:v", "libx264"], expectedDelay: 2, expectedPOCType: 0),
        StreamFixture(name: "x265-defaults-120f", codec: .hevc, rate: "30", seconds: 4, size: "160x96",
                      encoder: ["-c:v", "libx265", "-x265-params", "log-level=error"], expectedDelay: 2, expectedPOCType: nil),
    ]
}

/// What ffprobe says about a raw stream: packets in decoding order, frames in output order.
struct ProbeReport {
    var width: Int
    var height: Int
    var hasBFrames: Int
    /// Byte positions of the packets, in decoding order.
    var packetPositions: [Int]
    /// Which packets are key frames, in decoding order.
    var keyPackets: [Bool]
    /// The decode indices of the decoded frames, in output order (mapped through `pkt_pos`).
    var outputOrder: [Int]

    init(path: String) throws {
        let stream = try Tool.probe(["-select_streams", "v:0", "-show_entries", "stream=width,height,has_b_frames", path])
        guard let info = (stream["streams"] as? [[String: Any]])?.first else { throw Tool.Failure(description: "no video stream in \(path)") }
        width = info["width"] as? Int ?? -1
        height = info["height"] as? Int ?? -1
        hasBFrames = info["has_b_frames"] as? Int ?? -1
        let packets = try Tool.probe(["-select_streams", "v:0", "-show_entries", "packet=pos,flags", path])["packets"] as? [[String: Any]] ?? []
        packetPositions = packets.map { Int($0["pos"] as? String ?? "") ?? -1 }
        keyPackets = packets.map { ($0["flags"] as? String ?? "").contains("K") }
        let frames = try Tool.probe(["-select_streams", "v:0", "-show_entries", "frame=pkt_pos", path])["frames"] as? [[String: Any]] ?? []
        var indexOfPosition: [Int: Int] = [:]
        for (index, position) in packetPositions.enumerated() { indexOfPosition[position] = index }
        outputOrder = frames.map { indexOfPosition[Int($0["pkt_pos"] as? String ?? "") ?? -2] ?? -1 }
    }
}

/// Reads every sample of the stream at `path`.
func readAllSamples(path: String, codec: VideoCodec, frameDuration: MediaTime?, chunkSize: Int = 64 * 1024,
                    reorderWindow: Int = 64) throws -> [MediaSample] {
    let source = try FileByteSource(path: FilePath(path))
    var reader = try AnnexBReader(source: source, codec: codec, frameDuration: frameDuration, chunkSize: chunkSize, reorderWindow: reorderWindow)
    var samples: [MediaSample] = []
    while let sample = try reader.nextSample() { samples.append(sample) }
    return samples
}

/// Reads every sample of `bytes`.
func readAllSamples(bytes: [UInt8], codec: VideoCodec, frameDuration: MediaTime? = MediaTime(value: 1, timescale: 30),
                    chunkSize: Int = 64 * 1024) throws(VideoBitstreamError) -> [MediaSample] {
    var reader = try AnnexBReader(source: ArrayByteSource(bytes), codec: codec, frameDuration: frameDuration, chunkSize: chunkSize)
    var samples: [MediaSample] = []
    while let sample = try reader.nextSample() { samples.append(sample) }
    return samples
}

/// The NAL units of an Annex B byte array.
func nalUnits(of bytes: [UInt8]) throws -> [NALUnit] {
    var reader = AnnexBNALUnitReader(source: ArrayByteSource(bytes))
    var units: [NALUnit] = []
    while let unit = try reader.next() { units.append(unit) }
    return units
}

/// An Annex B byte array of `units`, each behind a 4-byte start code.
func annexB(_ units: [[UInt8]]) -> [UInt8] {
    units.flatMap { [0, 0, 0, 1] + $0 }
}

/// The NAL units of a length-prefixed sample.
func sampleUnits(_ data: [UInt8]) -> [[UInt8]] {
    var units: [[UInt8]] = []
    var position = 0
    while position + 4 <= data.count {
        let length = data[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
        position += 4
        guard position + length <= data.count else { break }
        units.append(Array(data[position..<position + length]))
        position += length
    }
    return units
}
