import AudioBitstreams
import MediaCore
import Testing

/// Ogg pages, the Opus comment header and FLAC pictures, against what opus-tools wrote.
@Suite struct OggBitstreamTests {
    /// The first page `opusenc --serial 1234` (opus-tools 0.2) wrote for a stereo 44.1 kHz WAV:
    /// beginning of stream, granule 0, OpusHead with pre-skip 312 and input rate 44,100.
    static let opusencFirstPage: [UInt8] = [
        0x4F, 0x67, 0x67, 0x53, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xD2, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x07, 0xE6, 0x6F, 0xAA, 0x01, 0x13, 0x4F, 0x70, 0x75, 0x73, 0x48, 0x65, 0x61, 0x64, 0x01, 0x02, 0x38, 0x01, 0x44, 0xAC,
        0x00, 0x00, 0x00, 0x00, 0x00,
    ]

    @Test func opusencPageReadsWithItsCRCAndWritesBack() throws {
        var reader = ByteReader(Self.opusencFirstPage)
        let page = try OggPage.read(&reader)
        #expect(page.flags == .beginningOfStream && page.granulePosition == 0 && page.serialNumber == 1234 && page.sequenceNumber == 0)
        #expect(page.parts.count == 1 && page.parts[0].endsPacket)
        let head = try OpusHeader(bytes: Array(page.parts[0].bytes))
        #expect(head.preSkip == 312 && head.inputSampleRate == 44100 && head.channelCount == 2)
        #expect(page.bytes == Self.opusencFirstPage, "the CRC computed is opusenc's")
        var damaged = Self.opusencFirstPage
        damaged[40] ^= 0x10
        var damagedReader = ByteReader(damaged)
        #expect(throws: AudioBitstreamError.self) { try OggPage.read(&damagedReader) }
    }

    @Test func streamWriterLacesPacketsAcrossPagesAndTrimsTheLast() throws {
        var writer = OggStreamWriter(serialNumber: 7, pageDuration: 48000)
        var pages = writer.append(Array(repeating: 1, count: 19), granulePosition: 0)
        pages += writer.flush()
        // A packet of 255 × 255 + 10 bytes: one full page of 255s, then the rest.
        let long = [UInt8](repeating: 2, count: 255 * 255 + 10)
        pages += writer.append(long, granulePosition: 960)
        for index in 1...60 { pages += writer.append([UInt8(index)], granulePosition: 960 + Int64(index) * 960) }
        pages += writer.flush(endOfStream: true, granulePosition: 50_000)
        #expect(pages.first?.flags == .beginningOfStream && pages.last?.flags.contains(.endOfStream) == true)
        #expect(pages.map(\.sequenceNumber) == Array(0..<UInt32(pages.count)))
        #expect(pages[1].granulePosition == -1 && pages[1].segmentTable.count == 255, "no packet ends on the first page of the long one")
        #expect(pages[2].flags.contains(.continued))
        #expect(pages.last?.granulePosition == 50_000)
        // Reassembled, the pages give the packets back; each page reads back from its bytes.
        var packets: [[UInt8]] = []
        var partial: [UInt8] = []
        for page in pages {
            var reader = ByteReader(page.bytes)
            #expect(try OggPage.read(&reader) == page)
            for part in page.parts {
                partial += part.bytes
                if part.endsPacket { packets.append(partial); partial = [] }
            }
        }
        #expect(packets.count == 62 && packets[1] == long && packets[61] == [60])
        // Pages of 20-ms packets close at a second of granule: 50 packets each.
        var timed = OggStreamWriter(serialNumber: 8, pageDuration: 48000)
        var timedPages: [OggPage] = []
        for index in 1...120 { timedPages += timed.append([1, 2, 3], granulePosition: Int64(index) * 960) }
        timedPages += timed.flush(endOfStream: true)
        #expect(timedPages.map(\.granulePosition) == [48000, 96000, 115_200])
    }

    @Test func opusTagsAndPictureReadBack() throws {
        let picture = FLACPicture(image: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
                                          0, 0, 0, 64, 0, 0, 0, 32, 8, 2, 0, 0, 0])
        #expect(picture.mimeType == "image/png" && picture.width == 64 && picture.height == 32 && picture.colorDepth == 24)
        #expect(try FLACPicture(bytes: picture.bytes) == picture)
        let comment = VorbisComment(vendor: "v", fields: [.init("TITLE", "Tide"), .init("METADATA_BLOCK_PICTURE", Base64.encode(picture.bytes))])
        let read = try VorbisComment(opusTagsPacket: comment.opusTagsPacket)
        #expect(read == comment && read.values(of: "title") == ["Tide"])
        #expect(try Base64.decode(read.values(of: "metadata_block_picture")[0]).map { try FLACPicture(bytes: $0) } == picture)
        #expect(throws: AudioBitstreamError.self) { try VorbisComment(bytes: [0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F]) }
        // Binary data after the fields: kept when its first byte's low bit is set (RFC 7845 5.2),
        // else padding, dropped.
        let kept = try VorbisComment(opusTagsPacket: comment.opusTagsPacket + [0x01, 0xAA, 0xBB])
        #expect(kept.trailingBytes == [0x01, 0xAA, 0xBB] && kept.opusTagsPacket == comment.opusTagsPacket + [0x01, 0xAA, 0xBB])
        #expect(try VorbisComment(opusTagsPacket: comment.opusTagsPacket + [0x00, 0, 0, 0]).trailingBytes.isEmpty)
        #expect(Base64.decode("TWFu") == Array("Man".utf8) && Base64.decode("TWE=") == Array("Ma".utf8) && Base64.decode("T") == nil)
    }
}
