import AudioBitstreams
import MediaCore
import Testing

/// MPEG audio frame headers, the Info frame's LAME tag and ID3v2 tags, against what FFmpeg 5.1
/// and mutagen wrote.
@Suite struct MP3BitstreamTests {
    /// The first 192 bytes of the Info frame FFmpeg 5.1 wrote before 10 s of stereo 44.1 kHz
    /// LAME frames at 128 kb/s (`ffmpeg -f lavfi -i sine=d=10 -ac 2 -c:a libmp3lame -b:a 128k`):
    /// 384 frames, 160,913 bytes, delay 576, padding 792, music CRC 0x490A, tag CRC 0xFE6C.
    static let ffmpegInfoFrame: [UInt8] = [
        0xFF, 0xFB, 0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x49, 0x6E, 0x66, 0x6F, 0x00, 0x00,
        0x00, 0x0F, 0x00, 0x00, 0x01, 0x80, 0x00, 0x02, 0x74, 0x91, 0x00, 0x03, 0x05, 0x08, 0x0B, 0x0D, 0x10, 0x12, 0x15, 0x17, 0x1A,
        0x1D, 0x1F, 0x21, 0x24, 0x27, 0x29, 0x2C, 0x2F, 0x31, 0x33, 0x36, 0x39, 0x3B, 0x3E, 0x41, 0x43, 0x45, 0x48, 0x4B, 0x4D, 0x50,
        0x52, 0x55, 0x57, 0x5A, 0x5D, 0x5F, 0x61, 0x64, 0x67, 0x69, 0x6C, 0x6F, 0x71, 0x73, 0x76, 0x79, 0x7B, 0x7E, 0x80, 0x82, 0x85,
        0x88, 0x8A, 0x8D, 0x90, 0x92, 0x94, 0x97, 0x9A, 0x9C, 0x9F, 0xA1, 0xA4, 0xA6, 0xA9, 0xAC, 0xAE, 0xB0, 0xB3, 0xB6, 0xB8, 0xBB,
        0xBE, 0xC0, 0xC2, 0xC5, 0xC8, 0xCA, 0xCD, 0xD0, 0xD2, 0xD4, 0xD7, 0xDA, 0xDC, 0xDF, 0xE1, 0xE4, 0xE6, 0xE9, 0xEC, 0xEE, 0xF0,
        0xF3, 0xF6, 0xF8, 0xFB, 0xFE, 0x00, 0x00, 0x00, 0x00, 0x4C, 0x61, 0x76, 0x63, 0x35, 0x39, 0x2E, 0x33, 0x37, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x24, 0x03, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x74, 0x91, 0x49,
        0x0A, 0xFE, 0x6C,
    ]

    /// An ID3v2.3 tag mutagen 1.47 wrote: UTF-16 and Latin-1 text, a comment, a TXXX, a CTOC
    /// and a CHAP with a title of its own.
    static let mutagenID3v23: [UInt8] = [
        0x49, 0x44, 0x33, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01, 0x22, 0x54, 0x49, 0x54, 0x32, 0x00, 0x00, 0x00, 0x0F, 0x00, 0x00, 0x01,
        0xFF, 0xFE, 0x4E, 0x00, 0x61, 0x00, 0xEF, 0x00, 0x76, 0x00, 0x65, 0x00, 0x00, 0x00, 0x54, 0x50, 0x45, 0x31, 0x00, 0x00, 0x00,
        0x05, 0x00, 0x00, 0x00, 0x41, 0x6E, 0x6E, 0x00, 0x43, 0x54, 0x4F, 0x43, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x74, 0x00, 0x03,
        0x01, 0x63, 0x31, 0x00, 0x43, 0x4F, 0x4D, 0x4D, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x01, 0x65, 0x6E, 0x67, 0xFF, 0xFE, 0x00,
        0x00, 0xFF, 0xFE, 0x68, 0x00, 0x69, 0x00, 0x00, 0x00, 0x54, 0x58, 0x58, 0x58, 0x00, 0x00, 0x00, 0x19, 0x00, 0x00, 0x01, 0xFF,
        0xFE, 0x4D, 0x00, 0x4F, 0x00, 0x4F, 0x00, 0x44, 0x00, 0x00, 0x00, 0xFF, 0xFE, 0x63, 0x00, 0x61, 0x00, 0x6C, 0x00, 0x6D, 0x00,
        0x00, 0x00, 0x43, 0x48, 0x41, 0x50, 0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x63, 0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x05, 0xDC, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x54, 0x49, 0x54, 0x32, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
        0x4F, 0x6E, 0x65, 0x00,
    ]

    @Test func frameHeaderReadsEachVersionAndWritesBack() throws {
        let header = try #require(MPEGAudioFrameHeader([0xFF, 0xFB, 0x90, 0x64], at: 0))
        #expect(header.version == .mpeg1 && header.layer == 3 && !header.hasCRC)
        #expect(header.bitrate == 128_000 && header.sampleRate == 44100 && header.channelCount == 2 && header.channelMode == 1)
        #expect(header.frameLength == 417 && header.samplesPerFrame == 1152 && header.sideInformationLength == 32)
        #expect(header.bytes == [0xFF, 0xFB, 0x90, 0x64])
        // MPEG-2 at 22.05 kHz, 64 kb/s, mono, padded: 72 × 64000 / 22050 + 1 bytes, 576 samples.
        let mpeg2 = try #require(MPEGAudioFrameHeader([0xFF, 0xF3, 0x82, 0xC4], at: 0))
        #expect(mpeg2.version == .mpeg2 && mpeg2.sampleRate == 22050 && mpeg2.bitrate == 64000 && mpeg2.channelCount == 1)
        #expect(mpeg2.frameLength == 209 && mpeg2.samplesPerFrame == 576 && mpeg2.sideInformationLength == 9)
        #expect(MPEGAudioFrameHeader([0xFF, 0xF1, 0x50, 0x80], at: 0) == nil, "ADTS (layer 0) is not MPEG audio")
        #expect(MPEGAudioFrameHeader([0xFF, 0xFB, 0xF0, 0x00], at: 0) == nil, "bitrate index 15 is reserved")
        #expect(MPEGAudioFrameHeader([0xFF, 0xFB, 0x00, 0x00], at: 0) == nil, "free format is not read")
        #expect(MPEGAudioFrameHeader([0xFF, 0xFB, 0x90], at: 0) == nil)
    }

    @Test func ffmpegInfoFrameReadsWithItsCRCs() throws {
        let tag = try #require(MP3InfoTag(frame: Self.ffmpegInfoFrame))
        #expect(tag.frameCount == 384 && tag.samplesPerFrame == 1152)
        #expect(tag.encoderDelay == 576 && tag.padding == 792)
        #expect(tag.priming == 1105 && tag.validSamples == 441_000)
        #expect(tag.byteCount == 160_913 && tag.musicCRC == 0x490A && tag.encoderVersion == "Lavc59.37")
        #expect(tag.tagCRCMatches, "CRC-16 of the first 190 bytes")
        #expect(!tag.isVariableBitrate)
        var damaged = Self.ffmpegInfoFrame
        damaged[150] ^= 1
        #expect(MP3InfoTag(frame: damaged)?.tagCRCMatches == false)
    }

    @Test func infoFrameWrittenIsFFmpegsForTheSameStream() throws {
        var tag = MP3InfoTag(frameCount: 384, samplesPerFrame: 1152, priming: 1105, validSamples: 441_000)
        #expect(tag.encoderDelay == 576 && tag.padding == 792)
        tag.byteCount = 160_913
        tag.tableOfContents = Array(Self.ffmpegInfoFrame[52..<152])
        tag.encoderVersion = "Lavc59.37"
        tag.musicCRC = 0x490A
        let header = MP3InfoTag.infoFrameHeader(like: try #require(MPEGAudioFrameHeader([0xFF, 0xFB, 0x90, 0x00], at: 0)))
        let frame = tag.frame(header: header)
        #expect(frame.count == 417)
        #expect(Array(frame.prefix(192)) == Self.ffmpegInfoFrame, "the same bytes, the tag's CRC included")
        #expect(frame[192...].allSatisfy { $0 == 0 })
        // The 12-bit fields are clamped, not wrapped.
        let long = MP3InfoTag(frameCount: 100, samplesPerFrame: 1152, priming: 9000, validSamples: 0)
        #expect(long.encoderDelay == 4095 && long.padding == 4095)
        // A mono MPEG-2 stream's Info frame still holds the 190 bytes its CRC covers.
        let mono = MP3InfoTag.infoFrameHeader(like: try #require(MPEGAudioFrameHeader([0xFF, 0xF3, 0x10, 0xC4], at: 0)))
        #expect(mono.frameLength >= 190)
        let monoFrame = MP3InfoTag(frameCount: 3, samplesPerFrame: 576, priming: 1105, validSamples: 100).frame(header: mono)
        #expect(MP3InfoTag(frame: monoFrame)?.tagCRCMatches == true)
        #expect(MP3InfoTag(frame: monoFrame)?.validSamples == 100)
    }

    @Test func id3v23FromMutagenReads() throws {
        let tag = try ID3v2Tag(bytes: Self.mutagenID3v23)
        #expect(tag.majorVersion == 3)
        #expect(tag.frames.contains(.text(id: "TIT2", values: ["Naïve"])))
        #expect(tag.frames.contains(.text(id: "TPE1", values: ["Ann"])))
        #expect(tag.frames.contains(.comment(language: "eng", description: "", text: "hi")))
        #expect(tag.frames.contains(.userText(description: "MOOD", value: "calm")))
        #expect(tag.frames.contains(.tableOfContents(.init(elementID: "t", children: ["c1"]))))
        let chapter = tag.frames.compactMap { frame -> ID3v2Tag.Chapter? in if case .chapter(let c) = frame { c } else { nil } }.first
        #expect(chapter?.elementID == "c1" && chapter?.startMilliseconds == 0 && chapter?.endMilliseconds == 1500)
        #expect(chapter?.title == "One")
        #expect(ID3v2Tag.length(ofTagStarting: Self.mutagenID3v23) == Self.mutagenID3v23.count)
    }

    @Test func id3v24WrittenReadsBackWithPadding() throws {
        let frames: [ID3v2Tag.Frame] = [
            .text(id: "TIT2", values: ["Tide", "Tables"]), .userText(description: "ISRC", value: "X"),
            .comment(language: "eng", description: "d", text: "c"),
            .picture(.init(mimeType: "image/png", data: [0x89, 0x50, 0x4E, 0x47, 0xFF, 0x00])),
            .chapter(.init(elementID: "chp0", startMilliseconds: 0, endMilliseconds: 4500,
                           subframes: [.text(id: "TIT2", values: ["Intro"]), .userURL(description: "", url: "https://example.com/")])),
            .tableOfContents(.init(elementID: "toc", children: ["chp0"])),
            .url(id: "WOAS", url: "https://example.com/a"), .other(id: "PRIV", flags: 0, body: [1, 2, 3]),
        ]
        let bytes = ID3v2Tag(frames: frames).bytes(padding: 100)
        #expect(ID3v2Tag.length(ofTagStarting: bytes) == bytes.count)
        let read = try ID3v2Tag(bytes: bytes)
        #expect(read.majorVersion == 4 && read.frames == frames)
        #expect(read.bytes(padding: 100) == bytes)
    }

    @Test func hostileTagsAreRefusedNamingWhere() throws {
        // A frame whose size runs past the tag.
        var tag = ID3v2Tag(frames: [.text(id: "TIT2", values: ["x"])]).bytes()
        tag[17] = 0x7F
        #expect(throws: AudioBitstreamError.self) { try ID3v2Tag(bytes: tag) }
        // A tag longer than the bytes given, and version 2.2.
        #expect(throws: AudioBitstreamError.self) { try ID3v2Tag(bytes: [0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0x7F, 0x7F]) }
        #expect(throws: AudioBitstreamError.self) { try ID3v2Tag(bytes: [0x49, 0x44, 0x33, 2, 0, 0, 0, 0, 0, 0]) }
        // A CTOC that lists more entries than it holds.
        let table: [UInt8] = [0x43, 0x54, 0x4F, 0x43, 0, 0, 0, 5, 0, 0, 0x74, 0, 0x03, 0x09, 0x61]
        #expect(throws: AudioBitstreamError.self) { try ID3v2Tag(bytes: [0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, UInt8(table.count)] + table) }
    }
}
