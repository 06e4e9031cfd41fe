import Foundation
import MediaFormats
import Testing

// The format registry on its own (MediaFormats links no C library): entries, typed opening,
// the packet decoder hook, and what it refuses.

extension MediaFileFormat {
    /// A toy container: "TICK", then one byte per packet, each packet that byte repeated 4 times.
    static let tick = MediaFileFormat(name: "tick", description: "TICK", fileExtensions: ["tick"], contents: .audioPackets,
                                      mimeType: "application/x-tick", recognizes: { $0.starts(with: Array("TICK".utf8)) })
}

extension AudioCodecID {
    static let tick = AudioCodecID("tick")
}

/// The packets of a TICK file.
struct TickReader: PacketFileSource {
    let path: FilePath
    var format: MediaFileFormat { .tick }
    var audioFormat: EncodedAudioFormat? {
        EncodedAudioFormat(codec: .tick, sampleRate: 8000, channelCount: 1, framesPerPacket: 4, decoderConfiguration: [])
    }
    var trim: GaplessTrim { .none }
    var metadata: StreamMetadata { StreamMetadata() }
    private var bytes: ArraySlice<UInt8>
    private var index: Int64 = 0

    init(path: FilePath) throws(PipelineError) {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path.string), data.starts(with: Array("TICK".utf8)) else {
            throw .unsupported("\(path): not a TICK file", path: path)
        }
        bytes = [UInt8](data).dropFirst(4)
    }

    mutating func next() throws(PipelineError) -> MediaSample? {
        guard let byte = bytes.popFirst(), let audioFormat else { return nil }
        defer { index += 1 }
        return MediaSample(data: [UInt8](repeating: byte, count: 4), presentationTime: MediaTime(value: index * 4, timescale: 8000),
                           duration: MediaTime(value: 4, timescale: 8000), format: .audio(audioFormat))
    }
}

/// The PCM a TICK file decodes to: each packet's bytes as 8-bit samples.
struct TickPCM: MediaFormatRegistry.PCMFileSource {
    var packets: any PacketFileSource
    var readerName: String
    var metadata: StreamMetadata { packets.metadata }
    var pcmFormat: PCMFormat? { PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .uint8) }

    mutating func next() throws(PipelineError) -> PCMBuffer? {
        guard let packet = try packets.next(), let pcmFormat else { return nil }
        return PCMBuffer(format: pcmFormat, bytes: packet.data)
    }
}

@Suite struct MediaFormatRegistryTests {
    func inDirectory(_ body: (FilePath) throws -> Void) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("registry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        try body(FilePath(url.path))
    }

    func writeTick(_ path: FilePath, _ packets: [UInt8]) throws {
        try Data(Array("TICK".utf8) + packets).write(to: URL(fileURLWithPath: path.string))
    }

    static let tickEntry = MediaFormatRegistry.Entry(format: .tick, packetSource: { path, _ throws(PipelineError) in
        try TickReader(path: path)
    })

    @Test("a WAV written through the registry's sink reads back through its source, by what its bytes are")
    func wavRoundTrip() throws {
        try inDirectory { directory in
            let path = directory.appending("tone.bin")   // no extension that names it: the bytes do
            let format = PCMFormat(sampleRate: 16_000, channelCount: 1, sampleFormat: .int16)
            let bytes = (0..<3200).map { UInt8(truncatingIfNeeded: $0 * 7) }
            var sink = try MediaFormatRegistry.containers.pcmOutput(path, options: .init(format: .wav))
            try sink.write(PCMBuffer(format: format, bytes: bytes))
            try sink.finish()
            #expect(sink.frames == 1600)
            #expect(MediaFormatRegistry.containers.detect(path) == .wav)
            var source = try MediaFormatRegistry.containers.pcmInput(path).source
            #expect(source.readerName == "WAV")
            var read: [UInt8] = []
            while let buffer = try source.next() { read += buffer.bytes }
            #expect(read == bytes)
        }
    }

    @Test("a packet-only entry is PCM only through the registry's packet decoder, which is told the entry's format")
    func packetDecoderHook() throws {
        try inDirectory { directory in
            let path = directory.appending("a.tick")
            try writeTick(path, [1, 2, 3])
            var registry = MediaFormatRegistry.containers
            registry.register(Self.tickEntry)
            #expect(registry.detect(path) == .tick)
            #expect(throws: PipelineError.self) { _ = try registry.pcmInput(path) }

            registry.packetDecoder = { packets, container, _ throws(PipelineError) in
                TickPCM(packets: packets, readerName: "\(container) decoded")
            }
            var opened = try registry.pcmInput(path)
            #expect(opened.format == .tick)
            #expect(opened.source.readerName == "TICK decoded")
            var read: [UInt8] = []
            while let buffer = try opened.source.next() { read += buffer.bytes }
            #expect(read == [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
        }
    }

    @Test("a job that needs KeyFrameKit's AAC reader refuses another reader's file by container and codec")
    func typedOpeningRefuses() throws {
        try inDirectory { directory in
            let path = directory.appending("a.tick")
            try writeTick(path, [9])
            var registry = MediaFormatRegistry.containers
            registry.register(Self.tickEntry)
            let packets = try registry.packetInput(path)
            #expect(packets.audioFormat?.codec == .tick)
            #expect(try registry.packetInput(path, as: TickReader.self).path == path)
            #expect {
                _ = try registry.aacInput(path)
            } throws: { error in
                "\(error)".contains("TICK of tick")
            }
            // The registry without the entry does not know the file at all.
            #expect {
                _ = try MediaFormatRegistry.containers.packetInput(path)
            } throws: { error in
                "\(error)".contains("not a file KeyFrameKit reads")
            }
        }
    }

    @Test("registering a format's entry again replaces it where it stands; a new format goes last")
    func registerReplacesInPlace() {
        var registry = MediaFormatRegistry.containers
        let before = registry.formats
        registry.register(MediaFormatRegistry.Entry(format: .wav))
        #expect(registry.formats == before)
        #expect(registry.entry(for: .wav)?.pcmSource == nil)
        registry.register(Self.tickEntry)
        #expect(registry.formats == before + [.tick])
        #expect(registry.format(fileExtension: "TICK") == .tick)
        #expect(registry.extensionList(holding: .audioPackets).contains(".tick"))
        #expect(!MediaFormatRegistry.containers.extensionList(holding: .audioPackets).contains(".tick"))
    }
}
