@testable import AACBitstream
import FuzzTargets
import MediaCore
import Testing

/// `ParametricStereoParser` (ISO/IEC 14496-3, 8.3 `ps_data()` inside SBR `bs_extended_data`):
/// what is not PS, frames before a header, skipped extension data, and hostile input (truncated
/// data, out-of-range values, bad borders, reserved modes, random bytes) giving typed errors that
/// turn the parser off until the next header.
@Suite struct ParametricStereoParserTests {
    static let header = ParametricStereoHeader(iidMode: 1, iccMode: 0)

    /// `bs_extension_id`, then `ps_data()` bits from `body`, then zero fill to a byte.
    static func extendedData(id: Int = 2, _ body: (inout BitWriter) throws -> Void) rethrows -> BitString {
        var writer = BitWriter()
        writer.write(id, bits: 2)
        try body(&writer)
        writer.alignToByte()
        return writer.bits
    }

    @Test func notParametricStereo() throws {
        var parser = ParametricStereoParser()
        #expect(try parser.parse(extendedData: BitString()) == nil)
        var short = BitString()
        short.append(0b1010_101, bitCount: 7)
        #expect(try parser.parse(extendedData: short) == nil)   // a decoder reads an id only while 8 bits remain
        for id in [0, 1, 3] {
            let data = Self.extendedData(id: id) { writer in writer.write(0xFFFF, bits: 16) }
            #expect(try parser.parse(extendedData: data) == nil)
        }
        #expect(parser.history == ParametricStereoHistory())
    }

    /// Frames before the first header are skipped (`nil`, state unchanged); the header frame and
    /// the frames after it are read.
    @Test func framesBeforeTheFirstHeaderAreSkipped() throws {
        var history = ParametricStereoHistory()
        let first = ParametricStereoFrame(header: Self.header, iid: [Array(repeating: 2, count: 20)], icc: [Array(repeating: 5, count: 10)])
        let firstData = try first.extendedData(history: &history)
        let second = ParametricStereoFrame(header: nil, iid: [Array(repeating: 3, count: 20)], icc: [Array(repeating: 4, count: 10)])
        let secondData = try second.extendedData(history: &history)
        var parser = ParametricStereoParser()
        #expect(try parser.parse(extendedData: secondData) == nil)
        #expect(parser.header == nil && parser.history == ParametricStereoHistory())
        #expect(try parser.parse(extendedData: firstData) == first)
        #expect(try parser.parse(extendedData: secondData) == second)
        #expect(parser.header == Self.header)
    }

    /// Bits after `ps_data()` (a second extension, more fill) are not interpreted; an extension
    /// payload is skipped by its size whatever it holds.
    @Test func trailingBitsAndExtensionPayloads() throws {
        var history = ParametricStereoHistory()
        let frame = ParametricStereoFrame(header: Self.header, iid: [Array(repeating: 0, count: 20)], icc: [Array(repeating: 0, count: 10)])
        var data = try frame.extendedData(history: &history)
        data.append(0b00_111111, bitCount: 8)   // bs_extension_id 0 and fill
        data.append(0xFF, bitCount: 8)
        var parser = ParametricStereoParser()
        #expect(try parser.parse(extendedData: data) == frame)

        // enable_ext with IPD/OPD-looking bytes and an escape-coded size: skipped by the count.
        let extended = ParametricStereoHeader(iidMode: 1, iccMode: 0, extensionEnabled: true)
        let payload = BitString(bytes: (0..<40).map { UInt8($0 * 7 & 0xFF) })
        let withExtension = ParametricStereoFrame(header: extended, variableBorders: false, borderPositions: [],
                                                  iidTimeDelta: [true], iid: [Array(repeating: 1, count: 20)],
                                                  iccTimeDelta: [false], icc: [Array(repeating: 0, count: 10)], extensionPayload: payload)
        let bits = try withExtension.extendedData(history: &history)
        #expect(try parser.parse(extendedData: bits) == withExtension)
        #expect(parser.history == history)
    }

    /// Every prefix of every frame of a generated stream, read in the state the stream leaves,
    /// either still reads (only fill was cut) or is a typed error that turns the parser off;
    /// never a trap.
    @Test func truncatedFrames() throws {
        var random = SBRTestRandom(state: 3)
        var history = ParametricStereoHistory()
        var synced = ParametricStereoParser()
        var errors = 0
        var whole = 0
        for index in 0..<40 {
            let header = index % 4 == 0
                ? ParametricStereoHeader(iidMode: UInt8(index % 6), iccMode: UInt8(index / 6 % 6), extensionEnabled: index % 8 == 4) : nil
            let frame = ParametricStereoFrameTests.frame(&random, header: header, history: history)
            let data = try frame.extendedData(history: &history)
            for length in 0..<(data.count / 8) {
                var parser = synced
                do {
                    if try parser.parse(extendedData: BitString(bytes: Array(data.bytes.prefix(length)))) == frame { whole += 1 }
                } catch {
                    errors += 1
                    #expect(parser.header == nil && parser.history == ParametricStereoHistory())
                }
            }
            #expect(try synced.parse(extendedData: data) == frame)
        }
        #expect(errors > 200)
        #expect(whole < 10)
    }

    /// A delta that takes a value out of its quantiser's range is an error at that value
    /// (FFmpeg: "illegal iid"), in frequency and in time.
    @Test func outOfRangeValues() throws {
        let coarse = ParametricStereoParameter.iid(fine: false)
        let data = try Self.extendedData { writer in
            try Self.header.write(to: &writer, flag: true)
            writer.write(0b001, bits: 3)                              // fixed, one envelope
            writer.writeFlag(false)                                   // iid_dt 0
            try coarse.table(time: false).encode(7, to: &writer, structure: "test")
            try coarse.table(time: false).encode(1, to: &writer, structure: "test")   // 8
        }
        var parser = ParametricStereoParser()
        #expect(throws: AACBitstreamError.self) { try parser.parse(extendedData: data) }
        do {
            _ = try parser.parse(extendedData: data)
        } catch {
            guard case .invalidField(_, let field, let value, _, _) = error else { Issue.record("\(error)"); return }
            #expect(field == "iid_par[1]" && value == 8)
        }
        // ICC below 0 in frequency.
        let icc = try Self.extendedData { writer in
            try ParametricStereoHeader(iidMode: nil, iccMode: 0).write(to: &writer, flag: true)
            writer.write(0b001, bits: 3)
            writer.writeFlag(false)
            try ParametricStereoParameter.icc.table(time: false).encode(-1, to: &writer, structure: "test")
        }
        #expect(throws: AACBitstreamError.self) { try parser.parse(extendedData: icc) }

        // Time: 7 then +1 in time.
        var history = ParametricStereoHistory()
        let seven = ParametricStereoFrame(header: Self.header, iid: [Array(repeating: 7, count: 20)], icc: [Array(repeating: 0, count: 10)])
        let start = try seven.extendedData(history: &history)
        let over = try Self.extendedData { writer in
            writer.writeFlag(false)                                   // no header
            writer.write(0b001, bits: 3)
            writer.writeFlag(true)                                    // iid_dt 1
            for _ in 0..<20 { try coarse.table(time: true).encode(1, to: &writer, structure: "test") }
        }
        parser = ParametricStereoParser()
        #expect(try parser.parse(extendedData: start) == seven)
        #expect(throws: AACBitstreamError.self) { try parser.parse(extendedData: over) }
        #expect(parser.header == nil && parser.history == ParametricStereoHistory())
        // Off until the next header: the same start frame reads again.
        #expect(try parser.parse(extendedData: start) == seven)
    }

    /// Border positions must increase strictly (FFmpeg refuses decreasing ones; equal ones would
    /// make an empty envelope, which faad2 and fdk-aac move instead).
    @Test func badBorderPositions() throws {
        for positions in [[5, 5], [9, 3], [0, 31, 30]] {
            let data = try Self.extendedData { writer in
                try ParametricStereoHeader(iidMode: nil, iccMode: nil).write(to: &writer, flag: true)
                writer.writeFlag(true)                                // variable borders
                writer.write(positions.count - 1, bits: 2)
                for position in positions { writer.write(position, bits: 5) }
            }
            var parser = ParametricStereoParser()
            #expect(throws: AACBitstreamError.self, "\(positions)") { try parser.parse(extendedData: data) }
        }
        let good = try Self.extendedData { writer in
            try ParametricStereoHeader(iidMode: nil, iccMode: nil).write(to: &writer, flag: true)
            writer.writeFlag(true)
            writer.write(2, bits: 2)
            for position in [0, 1, 31] { writer.write(position, bits: 5) }
        }
        var parser = ParametricStereoParser()
        #expect(try parser.parse(extendedData: good)?.borderPositions == [0, 1, 31])
    }

    @Test func reservedModesAndTimeWithoutHistory() throws {
        for (iid, icc) in [(6, 0), (7, 0), (0, 6), (0, 7)] {
            let data = Self.extendedData { writer in
                writer.writeFlag(true)
                writer.writeFlag(true)
                writer.write(iid, bits: 3)
                writer.writeFlag(true)
                writer.write(icc, bits: 3)
                writer.writeFlag(false)
                writer.write(0, bits: 3)
            }
            var parser = ParametricStereoParser()
            #expect(throws: AACBitstreamError.self) { try parser.parse(extendedData: data) }
        }
        let timed = try Self.extendedData { writer in
            try Self.header.write(to: &writer, flag: true)
            writer.write(0b001, bits: 3)
            writer.writeFlag(true)
            for _ in 0..<20 { try ParametricStereoHuffmanTables.iidCoarseTime.encode(0, to: &writer, structure: "test") }
        }
        var parser = ParametricStereoParser()
        #expect(throws: AACBitstreamError.self) { try parser.parse(extendedData: timed) }
    }

    /// Random bytes (with id 2 and a header bit most of the time) never trap: a frame, `nil`,
    /// or a typed error after which the parser is off.
    @Test func randomBytes() {
        var random = SBRTestRandom(state: 11)
        var frames = 0
        for _ in 0..<300 {
            var parser = ParametricStereoParser()
            for _ in 0..<8 {
                var bytes = (0..<random.int(0...24)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                if !bytes.isEmpty, random.int(0...3) > 0 { bytes[0] = bytes[0] & 0x1F | (random.bool() ? 0xA0 : 0x80) }
                do {
                    if try parser.parse(extendedData: BitString(bytes: bytes)) != nil { frames += 1 }
                } catch {
                    #expect(parser.header == nil)
                }
            }
        }
        #expect(frames > 20)
    }

    /// The `ps` fuzz target over generated streams, their truncations and flipped bytes; the
    /// seeds committed under Regressions/ps are the generator's.
    @Test func fuzzTargetOverGeneratedStreams() throws {
        let seeds = ParametricStereoFrameTests.seedInputs()
        #expect(seeds.count == 6 && seeds.allSatisfy { $0.count > 20 })

        for seed in seeds {
            FuzzTarget.ps.run(seed)
            for length in stride(from: 0, to: seed.count, by: 3) { FuzzTarget.ps.run(Array(seed.prefix(length))) }
            for index in stride(from: 1, to: seed.count, by: 4) {
                var flipped = seed
                flipped[index] ^= 0x24
                flipped[0] ^= UInt8(index / 4 % 2)   // independent delta coding or not
                FuzzTarget.ps.run(flipped)
            }
        }
    }
}

extension ParametricStereoHeader {
    /// `enable_ps_header` and, when it is set, the header.
    func write(to writer: inout BitWriter, flag: Bool) throws {
        writer.writeFlag(flag)
        if flag { try write(to: &writer) }
    }
}
