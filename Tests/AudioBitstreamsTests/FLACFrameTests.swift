import AudioBitstreams
import MediaCore
import Testing

/// FLAC frame headers and footers (RFC 9639 9) against a frame flac 1.4.2 wrote, and Ogg packet
/// assembly across pages (RFC 3533 6).
@Suite struct FLACFrameTests {
    /// The first frame flac 1.4.2 wrote for 0.1 s of a 440-Hz sine, mono, 16 bits at 8 kHz, in
    /// blocks of 256: `FF F8` (fixed blocks), `84` (256 samples, 8 kHz), `08` (one channel, 16
    /// bits), `00` (frame 0), `82` (CRC-8); then the subframe, and the CRC-16 `50 58`.
    static let frame = bytes(hex: "fff884080082480000056b0a320dc50fb672b4460f8e7800ba24203430322459b5285e939b96bf5bddc91c181a181530fa7f5997989595b1e6244d0b0d0c8b1b7d176cc8cd4bca5afb0f4d0a8b8f099e249b55a4e5a5e5ae50cfb2e28323032789aecd490989796bf533d8b098b0d8b8994698a17a625a6246a73b1210151d181130fab42d4b4c4b49d6f75206c64685c5cd3c810b129312f2967dc1f362638322c70824dd893959c91b9431f0c0a8c0c8c1e24ab3564a5e5a5ee51d7b2c243432302259552a48ca4ccac8d2e3a24203430322459b5285e939b96bf5bddc91c181a181530fa7f5997989595b1e6244d0b0d0c8b1b7d176cc8cd4bc5058")

    static func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    @Test func readsFlacsHeaderAndFooter() throws {
        let header = try #require(FLACFrameHeader(Self.frame, at: 0))
        #expect(!header.isVariableBlockSize)
        #expect(header.blockSize == 256)
        #expect(header.sampleRateCode == 4)
        #expect(header.channelAssignment == 0)
        #expect(header.bitDepthCode == 4)
        #expect(header.codedNumber == 0)
        #expect(header.byteCount == 6)
        #expect(header.bytes == Array(Self.frame.prefix(6)), "the header writes back to flac's bytes")
        #expect(FLACFrame.footerMatches(Self.frame))
        var damaged = Self.frame
        damaged[40] ^= 1
        #expect(!FLACFrame.footerMatches(damaged))
        damaged = Self.frame
        damaged[5] ^= 1
        #expect(FLACFrameHeader(damaged, at: 0) == nil, "a header whose CRC-8 does not match is none")
    }

    @Test func renumbersAFrameWithItsCRCs() throws {
        var header = try #require(FLACFrameHeader(Self.frame, at: 0))
        for number: UInt64 in [1, 127, 128, 2047, 2048, 65_535, 1 << 20, 1 << 31 - 1, (1 << 36) - 1] {
            header.isVariableBlockSize = number >= 1 << 31
            header.codedNumber = number
            let written = try #require(FLACFrame.renumbered(Self.frame, as: header))
            let read = try #require(FLACFrameHeader(written, at: 0), "number \(number)")
            #expect(read.codedNumber == number)
            #expect(read.blockSize == 256)
            #expect(FLACFrame.footerMatches(written), "number \(number)")
            #expect(Array(written.dropLast(2).suffix(Self.frame.count - 8)) == Array(Self.frame[6..<(Self.frame.count - 2)]), "the subframe is kept")
        }
        // Block sizes that need the 8- and 16-bit forms, and the table's.
        for size in [1, 17, 256, 1000, 4096, 4608, 65_535] {
            header.blockSize = size
            #expect(FLACFrameHeader(header.bytes, at: 0)?.blockSize == size)
        }
    }

    @Test func crcsAreTheCatalogues() {
        // CRC-8 (poly 0x07) and CRC-16/UMTS (poly 0x8005, MSB first) of "123456789".
        let check = Array("123456789".utf8)
        #expect(CyclicRedundancyCheck.crc8(check) == 0xF4)
        #expect(CyclicRedundancyCheck.crc16MostSignificantFirst(check) == 0xFEE8)
    }

    @Test func packetsAreAssembledAcrossPages() throws {
        // A packet of 600 bytes across two pages (255, 255 continuing; then 90 ending it), then one of 10.
        let long = [UInt8](repeating: 7, count: 600), short = [UInt8](repeating: 9, count: 10)
        let first = OggPage(flags: [], granulePosition: -1, serialNumber: 1, sequenceNumber: 2, segmentTable: [255, 255], body: Array(long.prefix(510)))
        let second = OggPage(flags: .continued, granulePosition: 1920, serialNumber: 1, sequenceNumber: 3, segmentTable: [90, 10],
                             body: Array(long.suffix(90)) + short)
        var assembler = OggPacketAssembler(maximumPacketBytes: 1000)
        #expect(try assembler.append(first).isEmpty)
        #expect(assembler.isInsidePacket)
        #expect(try assembler.append(second) == [long, short])
        var small = OggPacketAssembler(maximumPacketBytes: 300)
        #expect(throws: AudioBitstreamError.self) { try small.append(first) }
    }
}
