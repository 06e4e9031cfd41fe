import Foundation
import KeyFrameKit
import Testing

/// ``PacketSpliceSource`` keeps exactly the packets asked for, whatever the run size, on one
/// timeline; ``AudioTrackLayout`` picks the packets a presented range needs.
@Suite struct PacketSpliceSourceTests {
    static let format = FormatDescription.audio(EncodedAudioFormat(codec: .aac, sampleRate: 44100, channelCount: 2, framesPerPacket: 1024,
                                                                   decoderConfiguration: [0x12, 0x10]))

    static func packet(_ index: Int) -> MediaSample {
        MediaSample(data: [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 100 + index % 7),
                    presentationTime: MediaTime(value: Int64(index) * 1024, timescale: 44100),
                    duration: MediaTime(value: 1024, timescale: 44100), format: format)
    }

    /// An M4A of `count` packets, priming 1024 and `valid` samples.
    static func file(count: Int, valid: Int64) throws -> FilePath {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("splice-\(UUID().uuidString).m4a").path
        let muxer = try MP4Muxer(path: FilePath(path))
        muxer.setGapless(priming: 1024, validFrameCount: valid)
        try muxer.start()
        for index in 0..<count { try muxer.append(packet(index)) }
        try muxer.finish()
        return FilePath(path)
    }

    @Test(arguments: [1, 150, 333, 1 << 20])
    func exactlyThePacketsAskedForInEveryRunSize(runBytes: Int) throws {
        let path = try Self.file(count: 200, valid: 190 * 1024)
        defer { try? FileManager.default.removeItem(atPath: path.string) }
        let pieces = [PacketSpliceSource.Piece(input: try AudioPacketInput(path: path, purpose: .remuxing), packets: 50...120),
                      PacketSpliceSource.Piece(input: try AudioPacketInput(path: path, purpose: .remuxing), packets: 0...0),
                      PacketSpliceSource.Piece(input: try AudioPacketInput(path: path, purpose: .remuxing), packets: 190...199)]
        var source = PacketSpliceSource(pieces: pieces, runBytes: runBytes)
        var data: [[UInt8]] = []
        var nextTime: Int64 = 0
        while let run = try source.next() {
            #expect(run.firstDecodeTime == nextTime, "decode times run on")
            nextTime += run.duration
            data += run.samples.map(\.data)
        }
        let expected = (Array(50...120) + [0] + Array(190...199)).map { Self.packet($0).data }
        #expect(data == expected)
        #expect(source.deliveredCounts == [71, 1, 10])
    }

    @Test func aRangeNeedsThePacketBeforeAndThePacketAfter() throws {
        let path = try Self.file(count: 200, valid: 190 * 1024)
        defer { try? FileManager.default.removeItem(atPath: path.string) }
        let layout = try AudioTrackLayout(path: path)
        #expect(layout.priming == 1024 && layout.validLength == 190 * 1024 && layout.packetCount == 200 && layout.packetDuration == 1024)
        // Samples 0..<1024 are media 1024..<2048 (packet 1): packets 0 to 2, priming 1024.
        #expect(layout.packets(presenting: 0..<1024) == (0...2, 1024))
        // Media 5000 is in packet 4 (4096..<5120): from packet 3, priming 5000 - 3072.
        let picked = layout.packets(presenting: 3976..<10000)
        #expect(picked.packets == 3...11 && picked.priming == 1928)
        // The end of the stream: no packet after the last.
        #expect(layout.packets(presenting: 0..<(190 * 1024)).packets == 0...191)
    }
}
