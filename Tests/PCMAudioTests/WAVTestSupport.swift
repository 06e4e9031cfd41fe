import Foundation
import MediaCore
import PCMAudio
import SystemPackage
import Testing
import TestSupport

/// Hand-built RIFF/WAVE files: chunks are assembled from their fields, so a test can lie in any
/// one of them.
enum WAVBytes {
    static func le(_ value: UInt64, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64($0 * 8)) }
    }

    static func le16(_ value: Int) -> [UInt8] { le(UInt64(truncatingIfNeeded: value), 2) }
    static func le32(_ value: Int) -> [UInt8] { le(UInt64(truncatingIfNeeded: value), 4) }

    /// A chunk: id, size (the payload's unless given), payload, and a pad byte after odd payloads.
    static func chunk(_ id: String, _ payload: [UInt8], size: Int? = nil, pad: Bool = true) -> [UInt8] {
        Array(id.utf8) + le32(size ?? payload.count) + payload + (pad && payload.count % 2 == 1 ? [0] : [])
    }

    /// A 16-byte WAVEFORMATEX body.
    static func fmt(tag: Int = 1, channels: Int = 2, rate: Int = 44100, bits: Int = 16,
                    blockAlign: Int? = nil, byteRate: Int? = nil) -> [UInt8] {
        let align = blockAlign ?? channels * ((bits + 7) / 8)
        return le16(tag) + le16(channels) + le32(rate) + le32(byteRate ?? rate * align) + le16(align) + le16(bits)
    }

    /// A 40-byte WAVEFORMATEXTENSIBLE body.
    static func extensible(subFormat: Int = 1, channels: Int = 2, rate: Int = 48000, bits: Int = 24, validBits: Int = 24,
                           mask: UInt32 = 3, cbSize: Int = 22, guidTail: [UInt8]? = nil) -> [UInt8] {
        fmt(tag: 0xFFFE, channels: channels, rate: rate, bits: bits) + le16(cbSize) + le16(validBits) + le32(Int(mask))
            + le32(subFormat) + (guidTail ?? [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
    }

    /// `RIFF` size `WAVE` followed by `chunks`.
    static func riff(_ chunks: [UInt8]..., size: Int? = nil, form: String = "WAVE") -> [UInt8] {
        let body = Array(form.utf8) + chunks.flatMap { $0 }
        return Array("RIFF".utf8) + le32(size ?? body.count) + body
    }

    /// A plain WAV file: fmt, then data holding `data`.
    static func simple(format fmtBody: [UInt8] = fmt(), data: [UInt8], dataSize: Int? = nil) -> [UInt8] {
        riff(chunk("fmt ", fmtBody), chunk("data", data, size: dataSize))
    }

    /// Deterministic bytes that look like nothing in particular.
    static func noise(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }
}

/// Reads every frame of a WAV or raw PCM stream.
enum PCMRead {
    struct Result {
        var format: PCMFormat
        var frameCount: Int64?
        var bytes: [UInt8]
        var warnings: [DamageEvent]
        var reader: WAVReader<ArrayByteSource>?
    }

    static func wav(_ bytes: [UInt8], maxFrames: Int = 4096) throws(WAVError) -> Result {
        var reader = try WAVReader(source: ArrayByteSource(bytes))
        var data: [UInt8] = []
        while let chunk = try reader.read(maxFrames: maxFrames) { data += chunk }
        return Result(format: reader.format, frameCount: reader.frameCount, bytes: data, warnings: reader.warnings, reader: reader)
    }

    static func wavFile(_ path: String, maxFrames: Int = 4096) throws -> (reader: WAVReader<FileByteSource>, bytes: [UInt8]) {
        var reader = try WAVReader(source: try FileByteSource(path: FilePath(path)))
        var data: [UInt8] = []
        while let chunk = try reader.read(maxFrames: maxFrames) { data += chunk }
        return (reader, data)
    }

    /// The error `body` throws, or `nil` (recorded as an issue) if it does not throw.
    static func error<T>(_ body: () throws(WAVError) -> T, sourceLocation: SourceLocation = #_sourceLocation) -> WAVError? {
        do {
            _ = try body()
            Issue.record("expected a WAVError", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }
}

/// Runs ffmpeg, ffprobe and mediainfo. A missing tool is a failure, not a skip: `make test`
/// installs them.
enum Tool {
    typealias Result = Subprocess.Result
    typealias Failure = Subprocess.Failure

    /// The executable `name` on PATH, or a thrown ``Failure``.
    static func path(of name: String) throws -> String { try Subprocess.path(of: name) }

    /// Runs `name` with `arguments`.
    static func run(_ name: String, _ arguments: [String]) throws -> Result { try Subprocess.run(name, arguments) }

    /// Runs a tool that must succeed.
    @discardableResult
    static func succeed(_ name: String, _ arguments: [String]) throws -> Result { try Subprocess.succeed(name, arguments) }

    /// A new empty directory for one test's files.
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pcmaudio-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// ffprobe's view of the first audio stream, and what it printed at `-v warning`.
    struct ProbedStream {
        var codecName: String
        var sampleFormat: String
        var sampleRate: Int
        var channels: Int
        var durationTS: Int64
        var channelLayout: String?
        var warnings: String
    }

    static func ffprobe(_ file: String) throws -> ProbedStream {
        let result = try succeed("ffprobe", ["-v", "warning", "-show_entries",
                                             "stream=codec_name,sample_fmt,sample_rate,channels,duration_ts,channel_layout",
                                             "-of", "json", file])
        let object = try JSONSerialization.jsonObject(with: result.outputData) as? [String: Any]
        guard let stream = (object?["streams"] as? [[String: Any]])?.first else {
            throw Failure(description: "ffprobe found no stream in \(file): \(result.standardOutput)")
        }
        return ProbedStream(codecName: stream["codec_name"] as? String ?? "", sampleFormat: stream["sample_fmt"] as? String ?? "",
                            sampleRate: Int(stream["sample_rate"] as? String ?? "") ?? -1, channels: stream["channels"] as? Int ?? -1,
                            durationTS: (stream["duration_ts"] as? NSNumber)?.int64Value ?? -1,
                            channelLayout: stream["channel_layout"] as? String, warnings: result.standardError)
    }
}

/// FFmpeg's names for each sample format.
extension PCMSampleFormat {
    /// The encoder (`-c:a`) and codec name.
    var ffmpegCodec: String {
        switch self {
        case .uint8: "pcm_u8"
        case .int16: "pcm_s16le"
        case .int24: "pcm_s24le"
        case .int32: "pcm_s32le"
        case .float32: "pcm_f32le"
        case .float64: "pcm_f64le"
        }
    }

    /// The raw muxer (`-f`) for the same bytes.
    var ffmpegRawFormat: String {
        switch self {
        case .uint8: "u8"
        case .int16: "s16le"
        case .int24: "s24le"
        case .int32: "s32le"
        case .float32: "f32le"
        case .float64: "f64le"
        }
    }

    /// ffprobe's `sample_fmt` (24-bit PCM decodes to s32).
    var ffprobeSampleFormat: String {
        switch self {
        case .uint8: "u8"
        case .int16: "s16"
        case .int24, .int32: "s32"
        case .float32: "flt"
        case .float64: "dbl"
        }
    }
}

extension WAVError {
    /// The absolute byte offset an error names, if it names one.
    var offset: Int64? {
        switch self {
        case .notRIFF(_, let offset), .notWAVE(_, let offset), .truncated(_, let offset, _, _), .missingChunk(_, let offset, _),
             .invalidField(_, _, _, let offset, _), .unsupportedFormatTag(_, let offset), .unsupportedBitDepth(_, _, let offset),
             .blockAlignMismatch(_, _, _, let offset), .dataBeyondFile(_, _, let offset), .partialFrame(_, _, let offset):
            offset
        case .unsupportedFormat, .partialFrameWrite, .writerFinished, .stream:
            nil
        }
    }
}
