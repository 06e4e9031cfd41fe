import AudioBitstreams
import MediaCore

// The `ogg` fuzz target: Ogg pages (their CRC not checked, so that mutations reach the rest), the
// packets they carry (through the assembler the packet reader uses), and an Ogg Opus stream's two header packets.

extension FuzzTarget {
    static func ogg(_ data: [UInt8]) {
        // The file reader over the same bytes, as a file.
        NativeFileFuzzTarget.read(data, as: .oggOpus)
        var reader = ByteReader(data)
        var pages: [OggPage] = []
        while !reader.isAtEnd, pages.count < 512 {
            let start = Int(reader.offset)
            guard let page = try? OggPage.read(&reader, verifyingCRC: false) else { break }
            let end = Int(reader.offset)
            precondition(end > start && end <= data.count, "an Ogg page read outside its bytes")
            // Written back, the page is its bytes but the CRC, and reads with it checked.
            var written = page.bytes
            var checked = ByteReader(written)
            precondition((try? OggPage.read(&checked)) == page, "a written Ogg page does not read back")
            for index in 22..<26 { written[index] = data[start + index] }
            precondition(sameBytes(written, Array(data[start..<end])), "an Ogg page does not write back to its bytes")
            pages.append(page)
        }
        // The packets, reassembled across pages: within the pages' bodies.
        var assembler = OggPacketAssembler(maximumPacketBytes: 1 << 24)
        var packets: [[UInt8]] = []
        for page in pages { packets += (try? assembler.append(page)) ?? [] }
        precondition(packets.reduce(0) { $0 + $1.count } <= pages.reduce(0) { $0 + $1.body.count },
                     "the packets hold more than the pages' bodies")
        for packet in packets.prefix(2) {
            if let head = try? OpusHeader(bytes: packet) {
                precondition((try? OpusHeader(bytes: head.bytes)) == head, "OpusHead does not read back")
            }
            if let tags = try? VorbisComment(opusTagsPacket: packet) {
                let again = try? VorbisComment(opusTagsPacket: tags.opusTagsPacket)
                precondition(again == tags, "OpusTags do not read back")
            }
        }
        // Paged again, the packets read back the same.
        var writer = OggStreamWriter(serialNumber: 1, pageDuration: 48000)
        var rewritten: [OggPage] = []
        for (index, packet) in packets.prefix(64).enumerated() { rewritten += writer.append(packet, granulePosition: Int64(index) * 960) }
        rewritten += writer.flush(endOfStream: true)
        var again: [[UInt8]] = []
        var reassembler = OggPacketAssembler(maximumPacketBytes: 1 << 24)
        for page in rewritten {
            precondition(page.segmentTable.count <= OggPage.maximumSegments, "a page of more than 255 lacing values")
            guard let completed = try? reassembler.append(page) else { preconditionFailure("paged again, a packet is too long") }
            again += completed
        }
        precondition(again == Array(packets.prefix(64)), "packets paged again do not read back")
    }
}
