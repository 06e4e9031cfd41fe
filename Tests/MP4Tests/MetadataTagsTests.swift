import Foundation
import MediaCore
@testable import MP4
import Testing
import TestSupport

@Suite("udta metadata tags", .blocking)
struct MetadataTagsTests {
    /// A box: 32-bit size, the type's bytes (ISO 8859-1, so "©" is 0xA9), the payload.
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let typeBytes = type.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        let size = UInt32(8 + payload.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + typeBytes + payload
    }

    static func data(_ type: UInt32, _ value: [UInt8]) -> [UInt8] {
        box("data", [0, UInt8(type >> 16 & 0xFF), UInt8(type >> 8 & 0xFF), UInt8(type & 0xFF), 0, 0, 0, 0] + value)
    }

    static func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    static let mdirHandler = box("hdlr", [0, 0, 0, 0, 0, 0, 0, 0] + text("mdirappl") + [UInt8](repeating: 0, count: 9))

    static func parse(_ udtaPayload: [UInt8], baseOffset: Int64 = 0) throws(MP4Error) -> MetadataTags {
        try MetadataTags.parse(udta: ByteReader(udtaPayload, baseOffset: baseOffset), path: BoxPath(components: ["moov", "udta"]))
    }

    static func tags(ofFile url: URL) throws -> MetadataTags {
        let walked = try WalkedFile(try MediaTool.bytes(url))
        let udta = try #require(walked.userData)
        return try MetadataTags.parse(udta: udta.payload, path: udta.path)
    }

    static func ffprobeFormatTags(_ url: URL) throws -> [String: String] {
        let object = try MediaTool.ffprobeJSON(["-show_entries", "format_tags", url.path])
        return ((object["format"] as? [String: Any])?["tags"] as? [String: String]) ?? [:]
    }

    // MARK: hand-made boxes

    @Test func iTunesItemsOfEveryKind() throws {
        let list = Self.box("ilst",
            Self.box("©nam", Self.data(1, Self.text("Title"))) +
            Self.box("trkn", Self.data(0, [0, 0, 0, 2, 0, 12, 0, 0])) +
            Self.box("tmpo", Self.data(21, [0x00, 0x78])) +
            Self.box("xneg", Self.data(21, [0xFF])) +
            Self.box("xuns", Self.data(22, [0xFF, 0xFF, 0xFF, 0xFF])) +
            Self.box("cpil", Self.data(0, [1])) +
            Self.box("covr", Self.data(13, [0xFF, 0xD8, 0xFF]) + Self.data(14, [0x89, 0x50])) +
            Self.box("©ART", Self.data(2, [0x00, 0x41, 0x00, 0xE9])) +
            Self.box("----", Self.box("mean", [0, 0, 0, 0] + Self.text("com.apple.iTunes")) + Self.box("name", [0, 0, 0, 0] + Self.text("iTunSMPB"))
                + Self.data(1, Self.text(" 00000000 00000840 000001C0 00000000000A1234 00000000"))))
        let tags = try Self.parse(Self.box("meta", [0, 0, 0, 0] + Self.mdirHandler + list))
        #expect(tags.all.map(\.description) == [
            "©nam=Title", "trkn=2/12", "tmpo=120", "xneg=-1", "xuns=4294967295", "cpil=1", "covr=JPEG image, 3 bytes",
            "covr=PNG image, 2 bytes", "©ART=Aé", "----:com.apple.iTunes:iTunSMPB= 00000000 00000840 000001C0 00000000000A1234 00000000",
        ])
        #expect(tags.title == "Title" && tags.artist == "Aé")
        #expect(tags.gapless == ITunesGaplessInfo(priming: 0x840, padding: 0x1C0, originalSampleCount: 0xA1234))
        #expect(tags["trkn"] == "2/12")
    }

    @Test func quickTimeMetaWithoutFullBoxHeaderAndMdtaKeys() throws {
        // A QuickTime `meta` (no version/flags) with handler mdta, keys, and an ilst indexed by key.
        let keys = Self.box("keys", [0, 0, 0, 0, 0, 0, 0, 2] + Self.box("mdta", Self.text("com.apple.quicktime.title"))
                                + Self.box("mdta", Self.text("com.apple.quicktime.make")))
        let list = Self.box("ilst", Self.box("\u{0}\u{0}\u{0}\u{1}", Self.data(1, Self.text("Clip")))
                                 + Self.box("\u{0}\u{0}\u{0}\u{2}", Self.data(1, Self.text("Apple")))
                                 + Self.box("\u{0}\u{0}\u{0}\u{9}", Self.data(1, Self.text("no such key"))))
        let handler = Self.box("hdlr", [0, 0, 0, 0, 0, 0, 0, 0] + Self.text("mdta") + [UInt8](repeating: 0, count: 13))
        let tags = try Self.parse(Self.box("meta", handler + keys + list))
        #expect(tags.all == [MetadataTag(key: "com.apple.quicktime.title", value: "Clip"), MetadataTag(key: "com.apple.quicktime.make", value: "Apple")])
        #expect(tags.title == "Clip")
    }

    @Test func quickTimeTextEntriesThreeGPPAndMacRoman() throws {
        let udta = Self.box("©nam", [0, 6, 0x55, 0xC4] + Self.text("Héllo"))   // language 'und': UTF-8
            + Self.box("©day", [0, 4, 0, 0] + Self.text("2024"))
            + Self.box("©cmt", [0, 5, 0, 0, 0x63, 0x61, 0x66, 0x8E, 0x21])      // Mac Roman "café!"
            + Self.box("titl", [0, 0, 0, 0, 0x15, 0xC7] + Self.text("3GPP title") + [0])
            + Self.box("yrrc", [0, 0, 0, 0, 0x07, 0xE8])
            + Self.box("free", [1, 2, 3])
        let tags = try Self.parse(udta)
        #expect(tags.all.map(\.key) == ["©nam", "©day", "©cmt", "titl", "yrrc"])
        #expect(tags.title == "Héllo")
        #expect(tags.date == "2024")
        #expect(tags.comment == "café!")
        #expect(tags["titl"] == "3GPP title")
        #expect(tags["yrrc"] == "2024")
    }

    @Test func malformedItemsAreSkippedButOthersKept() throws {
        // An item whose data box is shorter than its 8-byte head, an item whose child overruns it,
        // and an index-keyed item without keys: each is skipped; the good items stay.
        let shortData = Self.box("©alb", Self.box("data", [0, 0, 1]))
        var overrun = Self.box("©too", Self.data(1, Self.text("x")))
        overrun[11] = 0xFF   // the data box claims 255+ bytes
        let list = Self.box("ilst", Self.box("©nam", Self.data(1, Self.text("Good"))) + shortData + overrun
                                 + Self.box("©ART", Self.data(1, Self.text("Also good"))))
        let tags = try Self.parse(Self.box("meta", [0, 0, 0, 0] + Self.mdirHandler + list))
        #expect(tags.all.map(\.key) == ["©nam", "©ART"])
        #expect(tags.album == nil && tags.encoder == nil)
        // Odd QuickTime text entries: a length past the end is skipped.
        let odd = try Self.parse(Self.box("©nam", [0, 50, 0, 0, 0x41]) + Self.box("©ART", [0, 1, 0, 0, 0x42]))
        #expect(odd.all == [MetadataTag(key: "©ART", value: "B")])
    }

    @Test func malformedContainersAreErrorsWithPathAndOffset() throws {
        // The ilst's only item claims more bytes than the ilst has.
        var list = Self.box("ilst", Self.box("©nam", Self.data(1, Self.text("Title"))))
        list[11] = 0x7F
        let udta = Self.box("meta", [0, 0, 0, 0] + Self.mdirHandler + list)
        let error = #expect(throws: MP4Error.self) { try Self.parse(udta, baseOffset: 100) }
        guard case .invalidBoxSize(let path, let offset, let size, _)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(path.description == "moov/udta/meta/ilst/\\xa9nam")
        #expect(offset == 100 + 8 + 4 + Int64(Self.mdirHandler.count) + 8)
        #expect(size == 0x7F)
        // A udta child that overruns the udta.
        #expect(throws: MP4Error.self) { try Self.parse([0, 0, 0, 40] + Self.text("meta") + [0, 0, 0, 0]) }
        // A meta that is not even a FullBox header.
        #expect(throws: MP4Error.self) { try Self.parse(Self.box("meta", [0, 0])) }
    }

    @Test func randomBytesNeverTrap() {
        var generator = SplitMix64(state: 3)
        let seed = Self.box("meta", [0, 0, 0, 0] + Self.mdirHandler + Self.box("ilst", Self.box("©nam", Self.data(1, Self.text("Title")))
            + Self.box("----", Self.box("mean", [0, 0, 0, 0, 0x61]) + Self.box("name", [0, 0, 0, 0, 0x62]) + Self.data(21, [1, 2, 3]))))
            + Self.box("©day", [0, 4, 0, 0] + Self.text("2024"))
        for _ in 0..<5000 {
            var bytes = seed
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator))) }
            _ = try? Self.parse(bytes)
        }
    }

    // MARK: gapless

    @Test func gaplessTextRoundTrip() throws {
        let info = ITunesGaplessInfo(priming: 2112, padding: 448, originalSampleCount: 0xA1234)
        #expect(info.text == " 00000000 00000840 000001C0 00000000000A1234 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000")
        #expect(ITunesGaplessInfo(text: info.text) == info)
        #expect(ITunesGaplessInfo(text: " 00000000 00000840 000001C0") == nil)
        #expect(ITunesGaplessInfo(text: " 00000000 0000084G 000001C0 00000000000A1234") == nil)
        #expect(ITunesGaplessInfo(text: " 00000000 100000000 000001C0 00000000000A1234") == nil)
        #expect(ITunesGaplessInfo(priming: -5, padding: Int(UInt32.max) + 9, originalSampleCount: -1).text.hasPrefix(" 00000000 00000000 FFFFFFFF 0000000000000000 "))
    }

    // MARK: files

    @Test func corpusM4AGaplessMatchesHandDecodedHexAndFFprobe() throws {
        let url = Corpus.url("mp4_bbb_1ch_8kHz_aac_lc.m4a")
        let tags = try Self.tags(ofFile: url)
        let probe = try Self.ffprobeFormatTags(url)
        // " 00000000 00000800 00000240 0000000000005DC0 …": 0x800 = 2048, 0x240 = 576, 0x5DC0 = 24000.
        #expect(tags.gapless == ITunesGaplessInfo(priming: 2048, padding: 576, originalSampleCount: 24000))
        #expect(tags[MetadataTags.gaplessKey] == probe["iTunSMPB"])
        #expect(tags.gapless?.text == probe["iTunSMPB"])   // fdkaac writes exactly Apple's format
        #expect(tags.encoder == probe["encoder"] && tags.encoder == "fdkaac 1.0.0, libfdk-aac 4.0.0, CBR 48kbps")
        // The three add up to the 26 packets × 1024 frames ffprobe counts.
        let packets = try MediaTool.ffprobeJSON(["-select_streams", "a:0", "-count_packets", "-show_entries", "stream=nb_read_packets", url.path])
        let count = ((packets["streams"] as? [[String: Any]])?.first?["nb_read_packets"] as? String).flatMap { Int($0) }
        #expect(count.map { $0 * 1024 } == 2048 + 576 + 24000)
    }

    @Test func corpusFileWithManyTags() throws {
        let url = Corpus.url("mp4_sample_with_metadata.mp4")
        let tags = try Self.tags(ofFile: url)
        let probe = try Self.ffprobeFormatTags(url)
        #expect(tags.all.map(\.description) == [
            "©too=Lavf56.1.0", "©xyz=+40.6892-074.0445+10.000/", "©ART=Test Artist", "©alb=Test Album", "trkn=2/12", "disk=2/3",
            "©day=2024", "©gen=Gorpcore", "tmpo=120", "cpil=1", "rtng=2", "pgap=1", "soar=Sorting Artist", "soal=Sorting Album",
            "©mvc=3", "©mvi=2", "©mvn=foo", "©xyz=+40.680-074.500/",
        ])
        #expect(tags.artist == probe["artist"] && tags.album == probe["album"] && tags.date == probe["date"] && tags.encoder == probe["encoder"])
        #expect(tags["trkn"] == probe["track"] && tags["disk"] == probe["disc"] && tags["©gen"] == probe["genre"])
        #expect(tags["cpil"] == probe["compilation"] && tags["rtng"] == probe["rating"] && tags["pgap"] == probe["gapless_playback"])
        #expect(tags.all.last?.value == probe["location"])   // ffprobe keeps the QuickTime udta entry
        #expect(tags.title == nil && tags.gapless == nil)
    }

    @Test(arguments: [("m4a", [String]()), ("mov", []), ("mp4", ["-movflags", "use_metadata_tags"])])
    func ffmpegWrittenTagsMatchFFprobe(_ container: String, _ extra: [String]) throws {
        let directory = try MediaTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("tagged.\(container)")
        try MediaTool.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=0.5", "-c:a", "aac",
                              "-metadata", "title=Grüße – 東京", "-metadata", "artist=Test Artist", "-metadata", "album=An Album",
                              "-metadata", "comment=a comment", "-metadata", "date=2025"] + extra + [url.path])
        let tags = try Self.tags(ofFile: url)
        let probe = try Self.ffprobeFormatTags(url)
        #expect(tags.title == "Grüße – 東京" && tags.title == probe["title"], "\(tags.all)")
        #expect(tags.artist == "Test Artist" && tags.artist == probe["artist"])
        #expect(tags.album == probe["album"] && tags.comment == probe["comment"] && tags.date == probe["date"], "\(tags.all) \(probe)")
        #expect(tags.encoder != nil && tags.encoder == probe["encoder"], "\(tags.all) \(probe)")
    }
}
