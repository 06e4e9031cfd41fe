import Foundation
import KeyFrameKit
import Testing

/// Issue 37: formats, codecs and destination schemes are open identifiers. A program names a
/// format, codec or scheme of its own without touching the library, and registers it in a copy
/// of a registry, which leaves the standard registry as it was.
@Suite struct OpenIdentifierTests {
    /// A toy container: `REV0`, then 16-bit mono PCM at 8 kHz.
    static let rev = MediaFileFormat(name: "rev", description: "REV", fileExtensions: ["REV"], contents: .pcm,
                                     mimeType: "application/x-rev", recognizes: { $0.starts(with: Array("REV0".utf8)) })

    /// Reads a `.rev` file's PCM.
    struct RevReader: MediaFormatRegistry.PCMFileSource {
        var bytes: [UInt8]?
        let pcmFormat: PCMFormat? = PCMFormat(sampleRate: 8000, channelCount: 1, sampleFormat: .int16)
        var readerName: String { "rev" }
        var metadata: StreamMetadata { StreamMetadata() }
        mutating func next() throws(PipelineError) -> PCMBuffer? {
            defer { bytes = nil }
            return bytes.map { PCMBuffer(format: pcmFormat!, bytes: $0) }
        }
    }

    @Test func aFormatOfOurOwnIsSniffedNamedAndOpenedThroughACopyOfTheRegistry() throws {
        var registry = MediaFormatRegistry.standard
        registry.register(MediaFormatRegistry.Entry(format: Self.rev, pcmSource: { path, _ throws(PipelineError) in
            let data = (try? Data(contentsOf: URL(fileURLWithPath: path.string))) ?? Data()
            return RevReader(bytes: Array(data.dropFirst(4)))
        }))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("open-identifiers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Named wrongly: the bytes win.
        let path = FilePath(directory.appendingPathComponent("tone.raw").path)
        try Data(Array("REV0".utf8) + [1, 0, 2, 0, 3, 0]).write(to: URL(fileURLWithPath: path.string))

        #expect(registry.detect(path) == Self.rev)
        #expect(registry.format(fileExtension: "rev") == Self.rev, "extensions are matched without case")
        #expect(registry.extensionList(holding: .pcm).contains(".rev"))
        var opened = try registry.pcmInput(path).source
        #expect(opened.readerName == "rev")
        #expect(try opened.next()?.bytes == [1, 0, 2, 0, 3, 0])

        // The standard registry and the built-in table know nothing of it.
        #expect(MediaFormatRegistry.standard.detect(path) == .rawPCM)
        #expect(MediaFileFormat.detect(path) == .rawPCM)
        #expect(MediaFormatRegistry.standard.format(fileExtension: "rev") == nil)
        #expect(!MediaFileFormat.builtIn.contains(Self.rev))
    }

    @Test func signaturesThatOverlapAreDecidedTheSameWayInAnyOrder() throws {
        // A 358-byte `moof` starts 00 00 01 66: an Annex-B start code and an SEI header too.
        let moof: [UInt8] = [0, 0, 1, 0x66] + Array("moof".utf8) + [0, 0, 0, 0x10]
        // A 256-byte `free` box, whose size byte 0x40 after 00 00 01 reads as an HEVC VPS header.
        let free: [UInt8] = [0, 0, 1, 0x40] + Array("free".utf8) + [0x01, 0, 0, 0]
        // A RIFF size of 0x65657266 spells `free`.
        let wav: [UInt8] = Array("RIFFfreeWAVEfmt ".utf8)
        // An ADTS syncword whose next bytes spell a box type at 4..<8.
        let adtsLike: [UInt8] = [0xFF, 0xF1, 0x50, 0x80] + Array("moov".utf8)
        for (head, expected) in [(moof, MediaFileFormat.mp4), (free, .mp4), (wav, .wav), (adtsLike, .mp4)] {
            #expect(MediaFileFormat.sniff(head) == expected)
            #expect(MediaFileFormat.sniff(head, among: Array(MediaFileFormat.builtIn.reversed())) == expected, "tried in the other order")
            #expect(MediaFileFormat.builtIn.filter { $0.recognizes?(head) ?? false } == [expected], "exactly one format claims it")
        }
        // Replacing an entry keeps its place: the standard registry lists formats as the table does.
        #expect(MediaFormatRegistry.standard.formats == MediaFileFormat.builtIn)
        #expect(MediaFormatRegistry.standard.extensionList(holding: .audioPackets) == MediaFileFormat.extensionList(holding: .audioPackets))
    }

    @Test func formatsAreTheSameWhenTheirNamesAre() {
        let twin = MediaFileFormat(name: "mp4", description: "another MP4", fileExtensions: [], contents: [], mimeType: "")
        #expect(twin == .mp4 && Set([twin, .mp4]).count == 1)
        #expect(MediaFileFormat.builtIn.map(\.name) == ["wav", "rawPCM", "adts", "mp4", "flac", "mp3", "oggOpus", "h264", "hevc", "hlsPlaylist"])
    }

    @Test func aCodecOfOurOwnIsRegisteredInACopyOfTheCodecRegistry() throws {
        let reversed = AudioCodecID("reversed")
        #expect(reversed.description == "reversed" && reversed != .aac && AudioCodecID.other("Opus") == AudioCodecID("Opus"))
        var codecs = AudioCodecRegistry.standard
        codecs.register(AudioCodecRegistry.EncoderEntry(codec: reversed, profile: .aacLC, name: "toy") { settings throws(CodecError) in
            // Any encoder will do: the registry hands back what the entry makes.
            try AudioCodecRegistry.standard.encoder(for: .aac, settings: settings)
        })
        let encoder = try codecs.encoder(for: reversed, settings: .init(bitrate: 64_000))
        #expect(encoder.bitrate == 64_000)
        #expect(codecs.encoders.first?.name == "toy" && codecs.encoders.count == AudioCodecRegistry.standard.encoders.count + 1)
        let refusal = #expect(throws: CodecError.self) {
            _ = try AudioCodecRegistry.standard.encoder(for: reversed, settings: .init(bitrate: 64_000))
        }
        #expect(String(describing: refusal).contains("reversed"))
    }

    @Test func schemesAndVideoCodecsAreOpenToo() throws {
        #expect(PublishingDestination.Scheme("null") != .rtmp && PublishingDestination.Scheme("rtmp") == .rtmp)
        #expect(VideoCodec("av1") != .h264 && VideoCodec.other("vp09").description == "vp09")
        let destination = try PublishingDestination.parse("icecasts://source:secret@example.com/live")
        #expect(destination.scheme == .icecast && destination.scheme.name == "icecast" && !destination.maskedURL.contains("secret"))
        let unknown = #expect(throws: PublishingError.self) { _ = try PublishingDestination.parse("null://counter") }
        #expect(String(describing: unknown).contains("use rtmp://, rtmps://, icecast://, icecasts:// or srt://"))
    }
}
