@testable import AACBitstream
import FuzzTargets
import MediaCore
import Testing

/// `ParametricStereoFrame` and `ParametricStereoHeader` (ISO/IEC 14496-3, 8.3 `ps_data()`, 8.4):
/// hand-assembled bits, generated streams over every mode, frame class and envelope count that
/// write and read back bit-exactly with their histories, the history rules, delta coding chosen
/// by bits, and the writer's refusals.
@Suite struct ParametricStereoFrameTests {
    // MARK: known bits

    /// Two frames assembled by hand from the syntax and the Annex 8.B codewords.
    @Test func handAssembledBits() throws {
        let header = ParametricStereoHeader(iidMode: 0, iccMode: 0)
        var history = ParametricStereoHistory()
        let first = ParametricStereoFrame(header: header, iid: [[1, 1, 0, 0, 0, 0, 0, 0, 0, -2]], icc: [Array(repeating: 7, count: 10)])
        let firstBits = try first.extendedData(history: &history)
        let expectedFirst = "10" + "1" + "1000" + "1000" + "0"   // id 2, header: iid mode 0, icc mode 0, no ext
            + "0" + "01"                                           // fixed borders, num_env_idx 1
            + "0" + "100" + "0" + "101" + "000000" + "1101"        // iid_dt 0; +1, 0, −1, 0×6, −2 (coarse df)
            + "0" + "1111111111110" + "000000000"                  // icc_dt 0; +7, 0×9 (icc df)
        #expect(firstBits.description == expectedFirst)
        #expect(firstBits.count == 56)
        #expect(history == ParametricStereoHistory(header: header, iid: [1, 1, 0, 0, 0, 0, 0, 0, 0, -2], icc: Array(repeating: 7, count: 10)))

        var second = ParametricStereoFrame(header: nil, iid: [[1, 1, 0, 0, 0, 0, 0, 0, 0, -1]], icc: [Array(repeating: 7, count: 10)])
        second.chooseDeltaCoding(history: history, independent: false)
        #expect(second.iidTimeDelta == [true] && second.iccTimeDelta == [true])
        let secondBits = try second.extendedData(history: &history)
        let expectedSecond = "10" + "0" + "0" + "01"              // id 2, no header, fixed, one envelope
            + "1" + "000000000" + "110"                            // iid_dt 1; 0×9, +1 (coarse dt)
            + "1" + "0000000000"                                   // icc_dt 1; 0×10 (icc dt)
            + "00"                                                 // fill to a byte
        #expect(secondBits.description == expectedSecond)

        var parser = ParametricStereoParser()
        #expect(try parser.parse(extendedData: firstBits) == first)
        #expect(try parser.parse(extendedData: secondBits) == second)
        #expect(parser.history == history)
    }

    /// Fine IID: +1 is `010`, −1 `001`, 0 `1` in frequency (FFmpeg `huff_iid_df1`), and ±15 is reachable.
    @Test func fineQuantiserBits() throws {
        let header = ParametricStereoHeader(iidMode: 3, iccMode: nil)
        var history = ParametricStereoHistory()
        let frame = ParametricStereoFrame(header: header, iid: [[1, 0, 0, 0, 0, 0, 0, 0, 0, 0]], icc: [])
        let bits = try frame.extendedData(history: &history)
        // id 2; header: IID mode 3, no ICC, no ext; fixed, one envelope; iid_dt 0; +1, −1, 0×8.
        let expected: String = ["10", "1", "1011", "0", "0", "0", "01", "0", "010", "001", "11111111"].joined()
        #expect(bits.description.hasPrefix(expected))
        let extremes = ParametricStereoFrame(header: header, iid: [[15, -15, 15, -15, 0, 0, 0, 0, 0, 0]], icc: [])
        var parser = ParametricStereoParser()
        var writeHistory = ParametricStereoHistory()
        #expect(try parser.parse(extendedData: extremes.extendedData(history: &writeHistory)) == extremes)
    }

    // MARK: streams

    /// Every header (IID and ICC each off or mode 0...5, with and without `enable_ext`): streams of
    /// generated frames (both classes, every envelope count, time coding where allowed, headers
    /// every fourth frame) read back equal with equal histories; `write(to:)` is the same bits.
    @Test func roundTripEveryHeader() throws {
        var timeCoded = 0
        var variable = 0
        var envelopeCounts = Set<[Int]>()
        for iidMode in [nil] + (0...5).map(UInt8.init) {
            for iccMode in [nil] + (0...5).map(UInt8.init) {
                for extensionEnabled in [false, true] {
                    let header = ParametricStereoHeader(iidMode: iidMode, iccMode: iccMode, extensionEnabled: extensionEnabled)
                    var random = SBRTestRandom(state: UInt64(iidMode ?? 9) * 100 + UInt64(iccMode ?? 9) * 10 + (extensionEnabled ? 1 : 0))
                    var history = ParametricStereoHistory()
                    var parser = ParametricStereoParser()
                    for index in 0..<12 {
                        let frame = Self.frame(&random, header: index % 4 == 0 ? header : nil, history: history)
                        let before = history
                        let data = try frame.extendedData(history: &history)
                        #expect(data.count % 8 == 0)
                        var writer = BitWriter()
                        var again = before
                        try frame.write(to: &writer, history: &again)
                        #expect(again == history)
                        var reader = BitReader(data.bytes)
                        _ = try reader.readBits(2)
                        #expect(try reader.readBitString(writer.bitCount) == writer.bits)
                        #expect(data.count - 2 - writer.bitCount < 8)
                        let read = try parser.parse(extendedData: data)
                        #expect(read == frame, "modes \(String(describing: iidMode)) \(String(describing: iccMode)) frame \(index)")
                        #expect(parser.history == history)
                        timeCoded += (frame.iidTimeDelta + frame.iccTimeDelta).filter { $0 }.count
                        if frame.variableBorders { variable += 1 }
                        envelopeCounts.insert([frame.variableBorders ? 1 : 0, frame.envelopeCount])
                    }
                }
            }
        }
        #expect(timeCoded > 200 && variable > 200)
        #expect(envelopeCounts == [[0, 0], [0, 1], [0, 2], [0, 4], [1, 1], [1, 2], [1, 3], [1, 4]])
    }

    /// Streams whose headers change modes (band counts and quantisers): the generator time codes
    /// only against previous values of the same band count, and everything reads back.
    @Test func roundTripAcrossModeChanges() throws {
        var random = SBRTestRandom(state: 77)
        var history = ParametricStereoHistory()
        var parser = ParametricStereoParser()
        var acrossQuantiser = 0
        for index in 0..<400 {
            var header: ParametricStereoHeader?
            if index == 0 || random.int(0...3) == 0 {
                header = ParametricStereoHeader(iidMode: random.int(0...6) == 6 ? nil : UInt8(random.int(0...5)),
                                                iccMode: random.int(0...6) == 6 ? nil : UInt8(random.int(0...5)),
                                                extensionEnabled: random.int(0...5) == 0)
            }
            let frame = Self.frame(&random, header: header, history: history)
            if let header, let previous = history.header, header.fineIID != previous.fineIID,
               header.iidBandCount == previous.iidBandCount, frame.iidTimeDelta.first == true {
                acrossQuantiser += 1
            }
            let data = try frame.extendedData(history: &history)
            #expect(try parser.parse(extendedData: data) == frame)
            #expect(parser.history == history)
        }
        #expect(acrossQuantiser > 0)
    }

    /// Every envelope count of both frame classes: `num_env_idx` is the count's place in the
    /// class's table, and border positions follow it with 5 bits each.
    @Test func everyEnvelopeCount() throws {
        func binary(_ value: Int, _ width: Int) -> String {
            (0..<width).map { (value >> (width - 1 - $0)) & 1 == 1 ? "1" : "0" }.joined()
        }
        let header = ParametricStereoHeader(iidMode: nil, iccMode: 0)
        for (variable, counts) in [(false, [0, 1, 2, 4]), (true, [1, 2, 3, 4])] {
            for (index, count) in counts.enumerated() {
                let borders = variable ? (0..<count).map { 31 - 7 * (count - 1 - $0) } : nil
                let frame = ParametricStereoFrame(header: header, borderPositions: borders, iid: [],
                                                  icc: Array(repeating: Array(repeating: 3, count: 10), count: count))
                #expect(frame.envelopeCount == count)
                var history = ParametricStereoHistory()
                let data = try frame.extendedData(history: &history)
                let head = "10" + "1" + "0" + "1000" + "0"          // id 2; header: no IID, ICC mode 0, no ext
                let expected = head + (variable ? "1" : "0") + binary(index, 2) + (borders ?? []).map { binary($0, 5) }.joined()
                #expect(data.description.hasPrefix(expected), "class \(variable) num_env \(count)")
                var parser = ParametricStereoParser()
                let read = try parser.parse(extendedData: data)
                #expect(read == ParametricStereoFrame(header: header, variableBorders: variable, borderPositions: borders ?? [],
                                                      iidTimeDelta: Array(repeating: false, count: count), iid: Array(repeating: [], count: count),
                                                      iccTimeDelta: Array(repeating: false, count: count), icc: frame.icc))
                #expect(read?.envelopeCount == count)
            }
        }
        // A disabled parameter given as no rows at all writes the same bits; the parser gives the
        // canonical form (one empty row per envelope), as the convenience initializer does.
        let iccOnly = ParametricStereoHeader(iidMode: nil, iccMode: 1)
        let bare = ParametricStereoFrame(header: iccOnly, variableBorders: false, borderPositions: [], iidTimeDelta: [], iid: [],
                                         iccTimeDelta: [false, false], icc: Array(repeating: Array(repeating: 4, count: 20), count: 2))
        let canonical = ParametricStereoFrame(header: iccOnly, iid: [], icc: bare.icc)
        #expect(canonical.iid == [[], []] && canonical.iidTimeDelta == [false, false])
        var bareHistory = ParametricStereoHistory()
        var canonicalHistory = ParametricStereoHistory()
        let bareBits = try bare.extendedData(history: &bareHistory)
        #expect(try canonical.extendedData(history: &canonicalHistory) == bareBits && bareHistory == canonicalHistory)
        var bareParser = ParametricStereoParser()
        #expect(try bareParser.parse(extendedData: bareBits) == canonical)

        // A fixed-border frame with both parameters off keeps its envelope count through the parser.
        let silent = ParametricStereoFrame(header: ParametricStereoHeader(iidMode: nil, iccMode: nil), variableBorders: false, borderPositions: [],
                                           iidTimeDelta: [false, false], iid: [[], []], iccTimeDelta: [false, false], icc: [[], []])
        var history = ParametricStereoHistory()
        var parser = ParametricStereoParser()
        let read = try parser.parse(extendedData: silent.extendedData(history: &history))
        #expect(read == silent && read?.envelopeCount == 2)
        #expect(history.iid == nil && history.icc == nil)
    }

    // MARK: history rules

    /// `num_env` 0 keeps the previous values: the next frame time codes against the frame before.
    @Test func zeroEnvelopesKeepThePreviousValues() throws {
        let header = ParametricStereoHeader(iidMode: 1, iccMode: 1)
        let values = (0..<20).map { $0 % 5 - 2 }
        var history = ParametricStereoHistory()
        var parser = ParametricStereoParser()
        let first = ParametricStereoFrame(header: header, iid: [values], icc: [Array(repeating: 2, count: 20)])
        _ = try parser.parse(extendedData: first.extendedData(history: &history))
        let empty = ParametricStereoFrame(header: nil, iid: [], icc: [])
        #expect(empty.envelopeCount == 0)
        let emptyBits = try empty.extendedData(history: &history)
        #expect(emptyBits.description == "10" + "0" + "0" + "00" + "00")
        #expect(try parser.parse(extendedData: emptyBits) == empty)
        #expect(history.iid == values && parser.history == history)
        var third = ParametricStereoFrame(header: nil, variableBorders: false, borderPositions: [], iidTimeDelta: [true],
                                          iid: [values.map { $0 + 1 }], iccTimeDelta: [true], icc: [Array(repeating: 2, count: 20)])
        #expect(try parser.parse(extendedData: third.extendedData(history: &history)) == third)
        third.chooseDeltaCoding(history: ParametricStereoHistory(header: header, iid: values, icc: Array(repeating: 2, count: 20)), independent: false)
        #expect(third.iidTimeDelta == [true] && third.iccTimeDelta == [true])
    }

    /// Time coding of a first envelope needs previous values of the same band count: none at a
    /// stream's start, none after the parameter was disabled, none across 10 ↔ 20 ↔ 34 bands.
    /// A quantiser change with the same band count is allowed.
    @Test func timeCodingNeedsSameBandCount() throws {
        let twenty = ParametricStereoHeader(iidMode: 1, iccMode: 1)
        let ten = ParametricStereoHeader(iidMode: 0, iccMode: 0)
        func timed(_ header: ParametricStereoHeader?, _ bands: Int, iid value: Int = 1) -> ParametricStereoFrame {
            ParametricStereoFrame(header: header, variableBorders: false, borderPositions: [], iidTimeDelta: [true],
                                  iid: [Array(repeating: value, count: bands)], iccTimeDelta: [false], icc: [Array(repeating: 1, count: bands)])
        }
        var history = ParametricStereoHistory()
        var parser = ParametricStereoParser()
        func send(_ frame: ParametricStereoFrame) throws {
            #expect(try parser.parse(extendedData: frame.extendedData(history: &history)) == frame)
            #expect(parser.history == history)
        }
        #expect(throws: AACBitstreamError.self) { try timed(twenty, 20).extendedData(history: &history) }
        #expect(history == ParametricStereoHistory())
        try send(ParametricStereoFrame(header: twenty, iid: [Array(repeating: 0, count: 20)], icc: [Array(repeating: 0, count: 20)]))
        let afterTwenty = history
        #expect(throws: AACBitstreamError.self) { try timed(ten, 10).extendedData(history: &history) }
        #expect(history == afterTwenty)
        try send(timed(nil, 20))

        // Fine quantiser, still 20 bands: allowed; the values are indices of the new quantiser.
        try send(timed(ParametricStereoHeader(iidMode: 4, iccMode: 1), 20, iid: 12))
        #expect(history.iid == Array(repeating: 12, count: 20))

        // IID switched off, then on again: no previous IID values.
        try send(ParametricStereoFrame(header: ParametricStereoHeader(iidMode: nil, iccMode: 1), iid: [], icc: [Array(repeating: 0, count: 20)]))
        #expect(history.iid == nil && parser.history.iid == nil)
        #expect(throws: AACBitstreamError.self) { try timed(twenty, 20).extendedData(history: &history) }
        // chooseDeltaCoding never picks what the writer refuses.
        var chosen = timed(ten, 10)
        chosen.chooseDeltaCoding(history: afterTwenty, independent: false)
        #expect(chosen.iidTimeDelta == [false])
        var writeHistory = afterTwenty
        _ = try chosen.extendedData(history: &writeHistory)
    }

    // MARK: delta coding

    /// chooseDeltaCoding takes the fewer bits per envelope (frequency on a tie), never time for
    /// an independent frame's first envelope, and never changes values.
    @Test func chooseDeltaCodingPicksTheCheaper() throws {
        var random = SBRTestRandom(state: 5)
        var history = ParametricStereoHistory()
        var sawTime = 0
        var sawIndependentTime = 0
        for index in 0..<600 {
            let independent = index % 5 == 0
            let header = independent || index < 1 ? ParametricStereoHeader(iidMode: UInt8(index / 5 % 6), iccMode: UInt8(index / 7 % 6)) : nil
            var frame = Self.frame(&random, header: header, history: history)
            let original = frame
            frame.chooseDeltaCoding(history: history, independent: independent)
            #expect(frame.iid == original.iid && frame.icc == original.icc)
            let current = header ?? history.header!
            for (parameter, rows, flags, previous) in [
                (current.iidMode.map { ParametricStereoParameter.iid(fine: $0 >= 3) }, frame.iid, frame.iidTimeDelta, history.iid),
                (current.iccMode.map { _ in ParametricStereoParameter.icc }, frame.icc, frame.iccTimeDelta, history.icc),
            ] {
                guard let parameter else { #expect(!flags.contains(true)); continue }
                for envelope in rows.indices {
                    let frequency = parameter.bitCount(rows[envelope], base: nil)!
                    let base = envelope > 0 ? rows[envelope - 1] : (independent ? nil : previous)
                    let time = base.flatMap { parameter.bitCount(rows[envelope], base: $0) }
                    #expect(flags[envelope] == (time.map { $0 < frequency } ?? false))
                    if flags[envelope] { sawTime += 1 }
                    if flags[envelope], independent { sawIndependentTime += 1 }
                    if independent, envelope == 0 { #expect(!flags[envelope]) }
                }
            }
            var chosenHistory = history
            var originalHistory = history
            var chosenWriter = BitWriter()
            var originalWriter = BitWriter()
            try frame.write(to: &chosenWriter, history: &chosenHistory)
            try original.write(to: &originalWriter, history: &originalHistory)
            #expect(chosenHistory == originalHistory)
            if !independent { #expect(chosenWriter.bitCount <= originalWriter.bitCount) }
            history = chosenHistory
        }
        #expect(sawTime > 300 && sawIndependentTime > 0)

        // A tie stays in frequency: one band, value 0 after 0 costs one bit either way.
        var tie = ParametricStereoFrame(header: nil, iid: [Array(repeating: 0, count: 10)], icc: [])
        tie.chooseDeltaCoding(history: ParametricStereoHistory(header: ParametricStereoHeader(iidMode: 0, iccMode: nil),
                                                               iid: Array(repeating: 0, count: 10), icc: nil), independent: false)
        #expect(tie.iidTimeDelta == [false])
        // No header in force, or counts that do not match it: nothing changes.
        var orphan = ParametricStereoFrame(header: nil, variableBorders: false, borderPositions: [], iidTimeDelta: [true],
                                           iid: [[1, 2]], iccTimeDelta: [], icc: [])
        orphan.chooseDeltaCoding(history: ParametricStereoHistory(), independent: false)
        #expect(orphan.iidTimeDelta == [true])
    }

    // MARK: extension

    /// `enable_ext`: the payload (any whole bytes up to 270, `ps_extension_size` 15 escaping to
    /// `esc_count`) is kept verbatim; none is size 0; the whole extended data stays within 270 bytes.
    @Test func extensionPayloads() throws {
        let header = ParametricStereoHeader(iidMode: 0, iccMode: nil, extensionEnabled: true)
        let values = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
        for size in [0, 1, 14, 15, 16, 200, 250] {
            let payload = size == 0 ? nil : BitString(bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
            var frame = ParametricStereoFrame(header: header, iid: values, icc: [])
            frame.extensionPayload = payload
            var history = ParametricStereoHistory()
            let data = try frame.extendedData(history: &history)
            // 2 id + 1 + 6 header + 3 + 11 values, then 4 (or 12) size bits.
            #expect(data.count == ((2 + 7 + 3 + 11 + (size < 15 ? 4 : 12) + 8 * size) + 7) / 8 * 8)
            var parser = ParametricStereoParser()
            #expect(try parser.parse(extendedData: data) == frame)
        }
        var history = ParametricStereoHistory()
        var big = ParametricStereoFrame(header: header, iid: values, icc: [])
        big.extensionPayload = BitString(bytes: Array(repeating: 0, count: 270))
        #expect(throws: AACBitstreamError.self) { try big.extendedData(history: &history) }   // 270 + the PS data > 270
        var writer = BitWriter()
        try big.write(to: &writer, history: &history)                                        // ps_data() alone is fine
        big.extensionPayload = BitString(bytes: Array(repeating: 0, count: 271))
        #expect(throws: AACBitstreamError.self) { try big.write(to: &writer, history: &history) }
        var odd = BitString()
        odd.append(1, bitCount: 3)
        big.extensionPayload = odd
        #expect(throws: AACBitstreamError.self) { try big.write(to: &writer, history: &history) }
        var notAllowed = ParametricStereoFrame(header: ParametricStereoHeader(iidMode: 0, iccMode: nil), iid: values, icc: [])
        notAllowed.extensionPayload = BitString(bytes: [1])
        #expect(throws: AACBitstreamError.self) { try notAllowed.write(to: &writer, history: &history) }
    }

    // MARK: refusals

    /// What the writer refuses, as typed errors, writing nothing and keeping the history.
    @Test func writerRefusals() throws {
        let header = ParametricStereoHeader(iidMode: 1, iccMode: 0)
        let iid = [Array(repeating: 0, count: 20)]
        let icc = [Array(repeating: 0, count: 10)]
        func refused(_ frame: ParametricStereoFrame, history: ParametricStereoHistory = ParametricStereoHistory(),
                     _ comment: Comment) {
            var history = history
            let before = history
            var writer = BitWriter()
            #expect(throws: AACBitstreamError.self, comment) { try frame.write(to: &writer, history: &history) }
            #expect(writer.bitCount == 0 && history == before, comment)
        }
        let good = ParametricStereoFrame(header: header, iid: iid, icc: icc)
        var history = ParametricStereoHistory()
        _ = try good.extendedData(history: &history)

        refused(ParametricStereoFrame(header: nil, iid: iid, icc: icc), "no header in force")
        refused(ParametricStereoFrame(header: ParametricStereoHeader(iidMode: 6, iccMode: 0), iid: iid, icc: icc), "reserved iid_mode")
        refused(ParametricStereoFrame(header: ParametricStereoHeader(iidMode: 1, iccMode: 9), iid: iid, icc: icc), "icc_mode beyond 3 bits")
        refused(ParametricStereoFrame(header: header, iid: [Array(repeating: 0, count: 10)], icc: icc), "IID band count")
        refused(ParametricStereoFrame(header: header, iid: iid + iid, icc: icc), "row counts differ")
        refused(ParametricStereoFrame(header: header, iid: iid + iid + iid, icc: icc + icc + icc), "3 fixed envelopes")
        refused(ParametricStereoFrame(header: header, iid: [[8] + Array(repeating: 0, count: 19)], icc: icc), "IID 8, coarse")
        refused(ParametricStereoFrame(header: ParametricStereoHeader(iidMode: 4, iccMode: 0), iid: [[16] + Array(repeating: 0, count: 19)], icc: icc),
                "IID 16, fine")
        refused(ParametricStereoFrame(header: header, iid: iid, icc: [[-1] + Array(repeating: 0, count: 9)]), "ICC −1")
        refused(ParametricStereoFrame(header: header, iid: iid, icc: [[8] + Array(repeating: 0, count: 9)]), "ICC 8")
        refused(ParametricStereoFrame(header: header, borderPositions: [4, 4], iid: iid + iid, icc: icc + icc), "equal borders")
        refused(ParametricStereoFrame(header: header, borderPositions: [9, 3], iid: iid + iid, icc: icc + icc), "decreasing borders")
        refused(ParametricStereoFrame(header: header, borderPositions: [32], iid: iid, icc: icc), "border 32")
        refused(ParametricStereoFrame(header: header, borderPositions: [-1], iid: iid, icc: icc), "border −1")
        refused(ParametricStereoFrame(header: header, borderPositions: [], iid: [], icc: []), "variable, no envelope")
        refused(ParametricStereoFrame(header: header, borderPositions: [1, 2, 3, 4, 5], iid: Array(repeating: iid[0], count: 5),
                                      icc: Array(repeating: icc[0], count: 5)), "five envelopes")
        refused(ParametricStereoFrame(header: header, variableBorders: false, borderPositions: [3], iidTimeDelta: [false], iid: iid,
                                      iccTimeDelta: [false], icc: icc), "borders with fixed class")
        refused(ParametricStereoFrame(header: header, variableBorders: false, borderPositions: [], iidTimeDelta: [], iid: iid,
                                      iccTimeDelta: [false], icc: icc), "missing iid_dt")
        refused(ParametricStereoFrame(header: ParametricStereoHeader(iidMode: nil, iccMode: 0), iid: iid, icc: icc), "values of a disabled IID")
        refused(ParametricStereoFrame(header: ParametricStereoHeader(iidMode: nil, iccMode: 0), variableBorders: false, borderPositions: [],
                                      iidTimeDelta: [true], iid: [[]], iccTimeDelta: [false], icc: icc), "time flag of a disabled IID")
        refused(ParametricStereoFrame(header: header, variableBorders: false, borderPositions: [], iidTimeDelta: [true], iid: iid,
                                      iccTimeDelta: [false], icc: icc), "time coded first envelope at the start")
        // Time deltas beyond the table: a history with values no quantiser has.
        refused(ParametricStereoFrame(header: nil, variableBorders: false, borderPositions: [], iidTimeDelta: [true], iid: [Array(repeating: 7, count: 20)],
                                      iccTimeDelta: [false], icc: icc),
                history: ParametricStereoHistory(header: header, iid: Array(repeating: -30, count: 20), icc: nil), "delta beyond the table")
    }

    // MARK: generator and seeds

    /// A random valid frame under `header` (or `history`'s): either class and any envelope count,
    /// values that often repeat the previous envelope's (so that time coding pays), and time
    /// coding wherever the history rules allow it.
    static func frame(_ random: inout SBRTestRandom, header frameHeader: ParametricStereoHeader?,
                      history: ParametricStereoHistory) -> ParametricStereoFrame {
        let header = frameHeader ?? history.header ?? ParametricStereoHeader(iidMode: 1, iccMode: 1)
        let variable = random.bool()
        var borders: [Int] = []
        let count: Int
        if variable {
            count = random.int(1...4)
            var positions = Set<Int>()
            while positions.count < count { positions.insert(random.int(0...31)) }
            borders = positions.sorted()
        } else {
            count = [0, 1, 2, 4][random.int(0...3)]
        }
        func parameter(_ kind: ParametricStereoParameter?, bands: Int, previous: [Int]?) -> (rows: [[Int]], flags: [Bool]) {
            // A disabled parameter: one empty row per envelope, as the parser gives it.
            guard let kind else { return (Array(repeating: [], count: count), Array(repeating: false, count: count)) }
            var rows: [[Int]] = []
            var flags: [Bool] = []
            var last = previous?.count == bands ? previous : nil
            for _ in 0..<count {
                let range = kind.values
                var values: [Int]
                if let last, random.int(0...2) > 0 {
                    values = last.map { min(max($0 + random.int(-1...1), range.lowerBound), range.upperBound) }
                } else {
                    values = []
                    var value = random.int(range)
                    for _ in 0..<bands {
                        value = random.int(0...3) == 0 ? random.int(range) : min(max(value + random.int(-2...2), range.lowerBound), range.upperBound)
                        values.append(value)
                    }
                }
                flags.append(last.map { kind.bitCount(values, base: $0) != nil } == true && random.bool())
                rows.append(values)
                last = values
            }
            return (rows, flags)
        }
        let iid = parameter(header.iidMode.map { .iid(fine: $0 >= 3) }, bands: header.iidBandCount, previous: history.iid)
        let icc = parameter(header.iccMode.map { _ in .icc }, bands: header.iccBandCount, previous: history.icc)
        var frame = ParametricStereoFrame(header: frameHeader, variableBorders: variable, borderPositions: borders,
                                          iidTimeDelta: iid.flags, iid: iid.rows, iccTimeDelta: icc.flags, icc: icc.rows)
        if header.extensionEnabled, random.int(0...2) == 0 {
            frame.extensionPayload = BitString(bytes: (0..<random.int(1...20)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        }
        return frame
    }

    /// Inputs in the `ps` fuzz target's format (a flags byte, then length-prefixed extended data)
    /// of generated streams; the seeds under Regressions/ps were made by this.
    static func seedInputs() -> [[UInt8]] {
        var inputs: [[UInt8]] = []
        let headers = [ParametricStereoHeader(iidMode: 1, iccMode: 1), ParametricStereoHeader(iidMode: 0, iccMode: 3),
                       ParametricStereoHeader(iidMode: 4, iccMode: 4), ParametricStereoHeader(iidMode: 2, iccMode: nil, extensionEnabled: true),
                       ParametricStereoHeader(iidMode: 5, iccMode: 5), ParametricStereoHeader(iidMode: nil, iccMode: 2)]
        for (index, header) in headers.enumerated() {
            var random = SBRTestRandom(state: UInt64(index) + 1000)
            var history = ParametricStereoHistory()
            var input: [UInt8] = [UInt8(index % 2)]
            for frameIndex in 0..<8 {
                let frame = frame(&random, header: frameIndex % 4 == 0 ? header : nil, history: history)
                guard let data = try? frame.extendedData(history: &history), data.bytes.count < 256 else { break }
                input.append(UInt8(data.bytes.count))
                input += data.bytes
            }
            inputs.append(input)
        }
        return inputs
    }
}
