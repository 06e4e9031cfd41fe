import Foundation
import MediaCore
@testable import MP4
import Testing
import TestSupport

/// Runs ffmpeg, ffprobe and mediainfo as subprocesses for the interop tests. A missing tool is a
/// failure, not a skip.
enum MediaTool {
    typealias Failure = Subprocess.Failure

    /// Runs `executable` and returns its standard output; a non-zero exit is an error carrying
    /// its standard error.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Data {
        try Subprocess.succeed(executable, arguments).outputData
    }

    static func path(of executable: String) throws -> String { try Subprocess.path(of: executable) }

    /// `ffmpeg -v error -y ARGS`.
    static func ffmpeg(_ arguments: [String]) throws {
        try run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    /// ffprobe's JSON output, decoded.
    static func ffprobeJSON(_ arguments: [String]) throws -> [String: Any] {
        let data = try run("ffprobe", ["-v", "error", "-of", "json"] + arguments)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure(description: "ffprobe printed no JSON object")
        }
        return object
    }

    /// A new empty directory for one test's files (removed by the caller).
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mp4tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }
}

/// The corpus of files nobody on this project made (`../shared/corpus/` from the package root).
enum Corpus {
    static var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus/androidx-media")
    }

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    static func bytes(_ name: String) throws -> [UInt8] { try MediaTool.bytes(url(name)) }

    /// Every `.mp4`/`.m4a` of the corpus.
    static func mp4Files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".mp4") || $0.hasSuffix(".m4a") }.sorted()
    }
}

/// A test-only walk of an MP4 file with ``BoxIterator``: top level → moov → trak → mdia → minf →
/// stbl → stsd → visual sample entry → avcC/hvcC, plus the tables needed to cut samples
/// (stsz, stco/co64, stsc, stss) and the udta boxes. Independent of the module's demuxer.
struct WalkedTrack {
    var trackID: UInt32 = 0
    var matrix: [Int32] = []
    var handler = ""
    var entryType = ""
    var entryWidth = 0
    var entryHeight = 0
    /// The avcC/hvcC box type and payload.
    var configuration: (type: String, payload: ByteReader)?
    var sampleSizes: [Int] = []
    var chunkOffsets: [Int64] = []
    var sampleToChunk: [(firstChunk: Int, samplesPerChunk: Int)] = []
    /// 1-based sync sample numbers; nil when every sample is a sync sample.
    var syncSamples: Set<Int>?
    var userData: (payload: ByteReader, path: BoxPath)?

    /// Byte ranges of the samples in file order of their numbers.
    func sampleRanges() -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var sample = 0
        for (index, entry) in sampleToChunk.enumerated() {
            let lastChunk = index + 1 < sampleToChunk.count ? sampleToChunk[index + 1].firstChunk - 1 : chunkOffsets.count
            guard entry.firstChunk >= 1, lastChunk >= entry.firstChunk else { continue }
            for chunk in entry.firstChunk...lastChunk {
                var offset = Int(chunkOffsets[chunk - 1])
                for _ in 0..<entry.samplesPerChunk where sample < sampleSizes.count {
                    ranges.append(offset..<(offset + sampleSizes[sample]))
                    offset += sampleSizes[sample]
                    sample += 1
                }
            }
        }
        return ranges
    }

    func isSync(_ index: Int) -> Bool { syncSamples?.contains(index + 1) ?? true }
}

struct WalkedFile {
    var tracks: [WalkedTrack] = []
    var userData: (payload: ByteReader, path: BoxPath)?

    init(_ bytes: [UInt8]) throws {
        var top = try BoxIterator(ByteReader(bytes), path: .root)
        while true {
            // A damaged box after moov (an mdat that claims more than the file has) ends the walk.
            let next: (header: BoxHeader, path: BoxPath, payload: ByteReader)?
            do { next = try top.next() } catch { if tracks.isEmpty { throw error } else { break } }
            guard let box = next else { break }
            guard box.header.type == "moov" else { continue }
            var moov = try BoxIterator(box.payload, path: box.path)
            while let child = try moov.next() {
                if child.header.type == "trak" { tracks.append(try Self.track(child.payload, path: child.path)) }
                if child.header.type == "udta" { userData = (child.payload, child.path) }
            }
        }
    }

    var videoTrack: WalkedTrack? { tracks.first { $0.handler == "vide" } }

    private static func track(_ payload: ByteReader, path: BoxPath) throws -> WalkedTrack {
        var track = WalkedTrack()
        var boxes = try BoxIterator(payload, path: path)
        while let box = try boxes.next() {
            switch box.header.type {
            case "tkhd":
                var reader = box.payload
                let version = try reader.readUInt8()
                try reader.skip(3)
                try reader.skip(version == 1 ? 16 : 8)
                track.trackID = try reader.readUInt32()
                try reader.skip(4 + (version == 1 ? 8 : 4) + 8 + 8)
                for _ in 0..<9 { track.matrix.append(Int32(bitPattern: try reader.readUInt32())) }
            case "udta":
                track.userData = (box.payload, box.path)
            case "mdia":
                try media(box.payload, path: box.path, into: &track)
            default:
                break
            }
        }
        return track
    }

    private static func media(_ payload: ByteReader, path: BoxPath, into track: inout WalkedTrack) throws {
        var boxes = try BoxIterator(payload, path: path)
        while let box = try boxes.next() {
            if box.header.type == "hdlr" {
                var reader = box.payload
                try reader.skip(8)
                track.handler = FourCharacterCode(rawValue: try reader.readUInt32()).description
            } else if box.header.type == "minf" {
                var minf = try BoxIterator(box.payload, path: box.path)
                while let child = try minf.next() {
                    if child.header.type == "stbl" { try sampleTable(child.payload, path: child.path, into: &track) }
                }
            }
        }
    }

    private static func sampleTable(_ payload: ByteReader, path: BoxPath, into track: inout WalkedTrack) throws {
        var boxes = try BoxIterator(payload, path: path)
        while let box = try boxes.next() {
            var reader = box.payload
            switch box.header.type {
            case "stsd":
                try reader.skip(4)
                let count = try reader.readUInt32()
                var entries = try BoxIterator(reader, path: box.path)
                if count >= 1, let entry = try entries.next() {
                    track.entryType = entry.header.type.description
                    var fields = entry.payload
                    guard ["avc1", "avc3", "hvc1", "hev1"].contains(track.entryType) else { break }
                    try fields.skip(24)
                    track.entryWidth = Int(try fields.readUInt16())
                    track.entryHeight = Int(try fields.readUInt16())
                    try fields.skip(78 - 28)
                    var children = try BoxIterator(fields, path: entry.path)
                    while let child = try children.next() {
                        if ["avcC", "hvcC"].contains(child.header.type.description) {
                            track.configuration = (child.header.type.description, child.payload)
                        }
                    }
                }
            case "stsz":
                try reader.skip(4)
                let size = try reader.readUInt32()
                let count = Int(try reader.readUInt32())
                track.sampleSizes = size != 0 ? Array(repeating: Int(size), count: count)
                    : try (0..<count).map { _ in Int(try reader.readUInt32()) }
            case "stco", "co64":
                try reader.skip(4)
                let count = Int(try reader.readUInt32())
                let wide = box.header.type == "co64"
                track.chunkOffsets = try (0..<count).map { _ in wide ? Int64(try reader.readUInt64()) : Int64(try reader.readUInt32()) }
            case "stsc":
                try reader.skip(4)
                let count = Int(try reader.readUInt32())
                track.sampleToChunk = try (0..<count).map { _ in
                    let first = Int(try reader.readUInt32())
                    let perChunk = Int(try reader.readUInt32())
                    try reader.skip(4)
                    return (first, perChunk)
                }
            case "stss":
                try reader.skip(4)
                let count = Int(try reader.readUInt32())
                track.syncSamples = Set(try (0..<count).map { _ in Int(try reader.readUInt32()) })
            default:
                break
            }
        }
    }
}

