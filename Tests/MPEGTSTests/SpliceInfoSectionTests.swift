import MediaCore
@testable import MPEGTS
import Testing

/// SCTE-35 splice information sections (ANSI/SCTE 35 9.6): an ad break's out and in as
/// `splice_insert` sections whose CRC checks, read back field for field; a time signal with a
/// segmentation descriptor; and damaged sections refused, naming the field.
@Suite struct SpliceInfoSectionTests {
    @Test func anAdBreakIsASpliceInsertPair() throws {
        let markers = try StreamMarker.adBreak(start: MediaTime(value: 30, timescale: 1), duration: MediaTime(value: 15, timescale: 1), id: "break-1")
        let out = try #require(SpliceInfoSection(marker: markers[0]))
        let back = try #require(SpliceInfoSection(marker: markers[1]))
        for section in [out, back] {
            #expect(MPEGCRC32.checksum(section.bytes) == 0, "the CRC_32 over the whole section checks to zero (Annex A)")
            #expect(try SpliceInfoSection(parsing: section.bytes) == section)
            #expect(section.hexadecimal.hasPrefix("0xFC30"), "\(section.hexadecimal)")
        }
        guard case .insert(let leaving) = out.command, case .insert(let returning) = back.command else {
            Issue.record("splice_insert commands expected")
            return
        }
        #expect(leaving.outOfNetwork && leaving.ptsTime == 30 * 90_000 && leaving.breakDuration == 15 * 90_000)
        #expect(!returning.outOfNetwork && returning.ptsTime == 45 * 90_000 && returning.breakDuration == nil)
        #expect(leaving.eventID == returning.eventID, "one splice_event_id pairs them")
        #expect(SpliceInfoSection(marker: StreamMarker(kind: .chapter, time: .zero)) == nil)
    }

    @Test func aTimeSignalWithASegmentationDescriptorReadsBack() throws {
        let section = SpliceInfoSection(command: .timeSignal(ptsTime: 123_456),
                                        descriptors: [.segmentation(.init(eventID: 9, typeID: SpliceInfoSection.Segmentation.placementOpportunityStart,
                                                                          duration: 15 * 90_000, upidType: 0x0C, upid: Array("ad".utf8)))])
        #expect(try SpliceInfoSection(parsing: section.bytes) == section)
    }

    @Test func damagedSectionsAreRefusedByField() throws {
        let bytes = try #require(SpliceInfoSection(marker: StreamMarker(kind: .adBreakStart, time: .zero, duration: MediaTime(value: 1, timescale: 1)))).bytes
        var flipped = bytes
        flipped[20] ^= 0x01
        #expect(throws: TransportStreamError.self, "a changed byte fails the CRC") { try SpliceInfoSection(parsing: flipped) }
        #expect(throws: TransportStreamError.self, "a short section") { try SpliceInfoSection(parsing: Array(bytes.prefix(12))) }
        var wrongTable = bytes
        wrongTable[0] = 0xFD
        #expect(throws: TransportStreamError.self, "another table") { try SpliceInfoSection(parsing: wrongTable) }
        // A command length past the section, its CRC made right: refused by its field, not read past.
        var long = Array(bytes.dropLast(4))
        long[11] = 0x0F
        long[12] = 0xFE
        let crc = MPEGCRC32.checksum(long)
        long += [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
        #expect(throws: TransportStreamError.self) { try SpliceInfoSection(parsing: long) }
    }
}
