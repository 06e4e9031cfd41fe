import Foundation
import KeyFrameKit
import SystemPackage

// A container that KeyFrameKit does not have, written against the public API alone:
//
//     "REV1", codec name (u8 length, UTF-8), sample rate (u32 LE), channels (u8),
//     frames per packet (u32 LE), decoder configuration (u8 length, bytes),
//     then per packet: frames (u32 LE), bytes (u32 LE), the bytes.

extension MediaFileFormat {
    /// The `.rev` container.
    static let rev = MediaFileFormat(
        name: "rev", description: "REV", fileExtensions: ["rev"], contents: .audioPackets, mimeType: "application/x-rev",
        recognizes: { head in head.starts(with: Array("REV1".utf8)) })
}

extension MediaFormatRegistry.Entry {
    /// The `.rev` container's reader and writer.
    static let rev = MediaFormatRegistry.Entry(format: .rev, packetSource: { path, _ throws(PipelineError) in
        try RevReader(path: path)
    }, packetSink: { path, _ throws(PipelineError) in
        RevWriter(path: path)
    })
}

/// The packets of a `.rev` file.
struct RevReader: PacketFileSource {
    let path: FilePath
    var format: MediaFileFormat { .rev }
    let audioFormat: EncodedAudioFormat?
    var trim: GaplessTrim { .none }
    var metadata: StreamMetadata { StreamMetadata() }
    private let bytes: [UInt8]
    private var offset: Int
    private var time: Int64 = 0

    init(path: FilePath) throws(PipelineError) {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path.string) else {
            throw .unsupported("\(path): cannot be read", path: path)
        }
        let bytes = [UInt8](data)
        var cursor = 4
        func take(_ count: Int) throws(PipelineError) -> ArraySlice<UInt8> {
            guard count >= 0, bytes.count - cursor >= count else { throw .unsupported("\(path): cut short at \(cursor)", path: path) }
            defer { cursor += count }
            return bytes[cursor..<cursor + count]
        }
        func u32() throws(PipelineError) -> Int { try take(4).reversed().reduce(0) { $0 << 8 | Int($1) } }
        guard bytes.starts(with: Array("REV1".utf8)) else { throw .unsupported("\(path): not a REV file", path: path) }
        let codec = String(decoding: try take(Int(try take(1).first!)), as: UTF8.self)
        let rate = try u32()
        let channels = Int(try take(1).first!)
        let framesPerPacket = try u32()
        let configuration = Array(try take(Int(try take(1).first!)))
        audioFormat = EncodedAudioFormat(codec: AudioCodecID(codec), sampleRate: rate, channelCount: channels,
                                         framesPerPacket: framesPerPacket, decoderConfiguration: configuration)
        self.bytes = bytes
        offset = cursor
    }

    mutating func next() throws(PipelineError) -> MediaSample? {
        guard offset < bytes.count, let audioFormat else { return nil }
        guard bytes.count - offset >= 8 else { throw .unsupported("\(path): a packet header cut short at \(offset)", path: path) }
        func u32(_ at: Int) -> Int { bytes[at..<at + 4].reversed().reduce(0) { $0 << 8 | Int($1) } }
        let frames = u32(offset), count = u32(offset + 4)
        guard bytes.count - offset - 8 >= count else { throw .unsupported("\(path): a packet cut short at \(offset)", path: path) }
        let scale = Int32(audioFormat.sampleRate)
        let sample = MediaSample(data: Array(bytes[offset + 8..<offset + 8 + count]),
                                 presentationTime: MediaTime(value: time, timescale: scale),
                                 duration: MediaTime(value: Int64(frames), timescale: scale), format: .audio(audioFormat))
        offset += 8 + count
        time += Int64(frames)
        return sample
    }
}

/// Writes a `.rev` file, under its name only when complete.
struct RevWriter: PacketFileSink {
    let path: FilePath
    var format: MediaFileFormat { .rev }
    private var bytes: [UInt8] = []

    init(path: FilePath) { self.path = path }

    mutating func write(_ packet: MediaSample) throws(PipelineError) {
        guard case .audio(let stream) = packet.format else { throw .unsupported("\(path): REV holds audio packets", path: path) }
        func u32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        if bytes.isEmpty {
            bytes = Array("REV1".utf8)
            bytes.append(UInt8(stream.codec.name.utf8.count))
            bytes += Array(stream.codec.name.utf8)
            bytes += u32(stream.sampleRate)
            bytes.append(UInt8(stream.channelCount))
            bytes += u32(stream.framesPerPacket)
            bytes.append(UInt8(stream.decoderConfiguration.count))
            bytes += stream.decoderConfiguration
        }
        let frames = stream.sampleRate * Int(packet.duration.value) / Int(packet.duration.timescale)
        bytes += u32(frames) + u32(packet.data.count) + packet.data
    }

    mutating func finish() throws(PipelineError) {
        do { try Data(bytes).write(to: URL(fileURLWithPath: path.string), options: .atomic) } catch {
            throw .unsupported("\(path): \(error)", path: path)
        }
    }

    mutating func cancel() { bytes = [] }
}
