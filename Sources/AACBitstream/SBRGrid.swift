public import MediaCore

/// `sbr_grid()` (ISO/IEC 14496-3, 4.4.2.8 Table 4.65; semantics 4.5.2.8; FFmpeg `read_sbr_grid`):
/// the time borders of a frame's envelopes and noise floors, and each envelope's frequency
/// resolution, for AAC frames of 1024 samples (`numTimeSlots` 16, borders in SBR time slots).
///
/// The coded fields are stored; ``borders``, ``noiseBorders`` and ``transientEnvelope`` are
/// derived from them. A grid read or written always has strictly increasing borders and at
/// most 5 envelopes (FIXFIX: 1, 2 or 4).
public struct SBRGrid: Sendable, Hashable {
    /// `bs_frame_class`.
    public enum FrameClass: UInt8, Sendable, Hashable, CaseIterable {
        /// Fixed leading (0) and trailing (16) borders, equally spaced envelopes.
        case fixFix = 0
        /// Fixed leading border, variable trailing border and relative borders before it.
        case fixVar
        /// Variable leading border and relative borders after it, fixed trailing border.
        case varFix
        /// Both borders variable.
        case varVar
    }

    /// `numTimeSlots` for 1024-sample frames.
    public static let timeSlots = 16

    /// `bs_frame_class`.
    public var frameClass: FrameClass
    /// `bs_var_bord_0` (0...3): the leading border of VARFIX and VARVAR frames (0 otherwise).
    public var leadingBorder: Int
    /// `bs_var_bord_1` (0...3): the trailing border is `16 + trailingBorder` in FIXVAR and
    /// VARVAR frames (0 otherwise).
    public var trailingBorder: Int
    /// `bs_rel_bord_0` (each 0...3, the border step `2·v + 2` forward from the leading border):
    /// VARFIX and VARVAR; at most 3.
    public var leadingRelativeBorders: [Int]
    /// `bs_rel_bord_1` (each 0...3, the step `2·v + 2` backward from the trailing border):
    /// FIXVAR and VARVAR; at most 3.
    public var trailingRelativeBorders: [Int]
    /// `bs_pointer` (0...envelopeCount + 1; 0 in FIXFIX, where it is not coded).
    public var pointer: Int
    /// `bs_freq_res` per envelope, in time order (true = high resolution). FIXFIX codes one
    /// bit for all, so all entries are equal there.
    public var frequencyResolutions: [Bool]

    /// A grid of the given coded fields (check it with ``validate()``; the writer does).
    public init(frameClass: FrameClass, leadingBorder: Int = 0, trailingBorder: Int = 0, leadingRelativeBorders: [Int] = [],
                trailingRelativeBorders: [Int] = [], pointer: Int = 0, frequencyResolutions: [Bool]) {
        self.frameClass = frameClass
        self.leadingBorder = leadingBorder
        self.trailingBorder = trailingBorder
        self.leadingRelativeBorders = leadingRelativeBorders
        self.trailingRelativeBorders = trailingRelativeBorders
        self.pointer = pointer
        self.frequencyResolutions = frequencyResolutions
    }

    /// A FIXFIX grid of 1, 2 or 4 equal envelopes, all of one frequency resolution.
    public static func fixFix(envelopeCount: Int, highFrequencyResolution: Bool) -> SBRGrid {
        SBRGrid(frameClass: .fixFix, frequencyResolutions: Array(repeating: highFrequencyResolution, count: envelopeCount))
    }

    /// The number of envelopes (`bs_num_env`).
    public var envelopeCount: Int {
        switch frameClass {
        case .fixFix: frequencyResolutions.count
        case .fixVar: trailingRelativeBorders.count + 1
        case .varFix: leadingRelativeBorders.count + 1
        case .varVar: leadingRelativeBorders.count + trailingRelativeBorders.count + 1
        }
    }

    /// The number of noise floors (`bs_num_noise`): 1 for one envelope, else 2.
    public var noiseFloorCount: Int { envelopeCount > 1 ? 2 : 1 }

    /// The envelope time borders `t_E` in SBR time slots: `envelopeCount + 1` entries.
    public var borders: [Int] {
        let count = envelopeCount
        var borders = Array(repeating: 0, count: count + 1)
        switch frameClass {
        case .fixFix:
            let step = (Self.timeSlots + count / 2) / max(count, 1)
            for index in 0..<count { borders[index] = index * step }
            borders[count] = Self.timeSlots
        case .fixVar, .varFix, .varVar:
            borders[0] = frameClass == .fixVar ? 0 : leadingBorder
            borders[count] = Self.timeSlots + (frameClass == .varFix ? 0 : trailingBorder)
            for (index, step) in leadingRelativeBorders.enumerated() where frameClass != .fixVar && index + 1 < count {
                borders[index + 1] = borders[index] + 2 * step + 2
            }
            for (index, step) in trailingRelativeBorders.enumerated() where frameClass != .varFix && count - 1 - index > 0 {
                borders[count - 1 - index] = borders[count - index] - 2 * step - 2
            }
        }
        return borders
    }

    /// The noise floor time borders `t_Q` (4.5.2.8): `noiseFloorCount + 1` entries.
    public var noiseBorders: [Int] {
        let borders = borders
        let count = envelopeCount
        guard count > 1 else { return [borders[0], borders[count]] }
        let middle: Int
        switch frameClass {
        case .fixFix: middle = count / 2
        case .fixVar, .varVar: middle = count - max(pointer - 1, 1)
        case .varFix: middle = pointer == 0 ? 1 : pointer == 1 ? count - 1 : pointer - 1
        }
        return [borders[0], borders[min(max(middle, 0), count)], borders[count]]
    }

    /// The transient envelope `l_A` (4.5.2.8), `nil` when the pointer names none.
    public var transientEnvelope: Int? {
        switch frameClass {
        case .fixVar, .varVar: pointer > 0 ? envelopeCount + 1 - pointer : nil
        case .varFix: pointer > 1 ? pointer - 1 : nil
        case .fixFix: nil
        }
    }

    /// The amplitude resolution this frame's envelopes use: the header's, except FIXFIX with
    /// one envelope, which is always 0 (1.5 dB; 4.5.2.8 `bs_amp_res`, FFmpeg `read_sbr_grid`).
    public func amplitudeResolution(header: SBRHeader) -> UInt8 {
        frameClass == .fixFix && envelopeCount == 1 ? 0 : header.amplitudeResolution
    }

    /// The width of `bs_pointer` for `count` envelopes: `ceil(log2(count + 1))`.
    static func pointerBits(envelopeCount count: Int) -> Int { [0, 1, 2, 2, 3, 3][min(max(count, 0), 5)] }

    /// Checks the grid can be coded and is valid: field ranges, envelope counts, pointer, and
    /// strictly increasing borders.
    public func validate() throws(AACBitstreamError) {
        func bad(_ field: String, _ value: Int, _ allowed: String) -> AACBitstreamError {
            .unrepresentable(structure: "sbr_grid", field: field, value: Int64(value), allowed: allowed)
        }
        let count = envelopeCount
        switch frameClass {
        case .fixFix:
            guard [1, 2, 4].contains(count) else { throw bad("bs_num_env", count, "1, 2 or 4") }
            guard frequencyResolutions.allSatisfy({ $0 == frequencyResolutions[0] }) else {
                throw bad("bs_freq_res", 0, "one resolution for all envelopes of a FIXFIX frame")
            }
            guard pointer == 0 else { throw bad("bs_pointer", pointer, "0 (not coded in FIXFIX)") }
        case .fixVar, .varFix, .varVar:
            guard frequencyResolutions.count == count else { throw bad("bs_freq_res count", frequencyResolutions.count, "\(count)") }
            guard leadingRelativeBorders.count <= 3, trailingRelativeBorders.count <= 3 else {
                throw bad("bs_num_rel", max(leadingRelativeBorders.count, trailingRelativeBorders.count), "0...3")
            }
            guard count <= 5 else { throw bad("bs_num_env", count, "at most 5") }
            guard (0...count + 1).contains(pointer), pointer < 1 << Self.pointerBits(envelopeCount: count) else {
                throw bad("bs_pointer", pointer, "0...\(min(count + 1, (1 << Self.pointerBits(envelopeCount: count)) - 1))")
            }
            for value in leadingRelativeBorders + trailingRelativeBorders where !(0...3).contains(value) {
                throw bad("bs_rel_bord", value, "0...3")
            }
            guard (0...3).contains(leadingBorder), (0...3).contains(trailingBorder) else {
                throw bad("bs_var_bord", (0...3).contains(leadingBorder) ? trailingBorder : leadingBorder, "0...3")
            }
            guard frameClass != .fixVar || (leadingBorder == 0 && leadingRelativeBorders.isEmpty) else {
                throw bad("bs_var_bord_0", leadingBorder, "none in FIXVAR")
            }
            guard frameClass != .varFix || (trailingBorder == 0 && trailingRelativeBorders.isEmpty) else {
                throw bad("bs_var_bord_1", trailingBorder, "none in VARFIX")
            }
        }
        let borders = borders
        for index in 1..<borders.count where borders[index - 1] >= borders[index] {
            throw bad("time border", borders[index], "strictly increasing borders")
        }
    }

    /// Reads `sbr_grid()`; what FFmpeg refuses (8 FIXFIX envelopes, over 5 VARVAR envelopes, a
    /// pointer past the borders, borders not strictly increasing) is a typed error.
    public init(from reader: inout BitReader) throws(AACBitstreamError) {
        let start = reader.byteOffset
        func invalid(_ field: String, _ value: Int, _ allowed: String) -> AACBitstreamError {
            .invalidField(structure: "sbr_grid", field: field, value: Int64(value), offset: start, allowed: allowed)
        }
        let grid = try AACBitstreamError.reading("sbr_grid") { () throws(BinaryReadError) -> SBRGrid? in
            func bits(_ count: Int) throws(BinaryReadError) -> Int { Int(try reader.readBits(count)) }
            guard let frameClass = FrameClass(rawValue: UInt8(try bits(2))) else { return nil }
            var grid = SBRGrid(frameClass: frameClass, frequencyResolutions: [])
            switch frameClass {
            case .fixFix:
                let count = 1 << (try bits(2))
                guard count <= 5 else {
                    grid.frequencyResolutions = Array(repeating: false, count: count)
                    return grid
                }
                grid.frequencyResolutions = Array(repeating: try reader.readFlag(), count: count)
            case .fixVar:
                grid.trailingBorder = try bits(2)
                let relative = try bits(2)
                for _ in 0..<relative { grid.trailingRelativeBorders.append(try bits(2)) }
                grid.pointer = try bits(Self.pointerBits(envelopeCount: relative + 1))
                var resolutions: [Bool] = []
                for _ in 0...relative { resolutions.append(try reader.readFlag()) }
                grid.frequencyResolutions = resolutions.reversed()   // coded last envelope first
            case .varFix:
                grid.leadingBorder = try bits(2)
                let relative = try bits(2)
                for _ in 0..<relative { grid.leadingRelativeBorders.append(try bits(2)) }
                grid.pointer = try bits(Self.pointerBits(envelopeCount: relative + 1))
                for _ in 0...relative { grid.frequencyResolutions.append(try reader.readFlag()) }
            case .varVar:
                grid.leadingBorder = try bits(2)
                grid.trailingBorder = try bits(2)
                let leading = try bits(2)
                let trailing = try bits(2)
                guard leading + trailing + 1 <= 5 else {
                    grid.leadingRelativeBorders = Array(repeating: 0, count: leading)
                    grid.trailingRelativeBorders = Array(repeating: 0, count: trailing)
                    return grid
                }
                for _ in 0..<leading { grid.leadingRelativeBorders.append(try bits(2)) }
                for _ in 0..<trailing { grid.trailingRelativeBorders.append(try bits(2)) }
                grid.pointer = try bits(Self.pointerBits(envelopeCount: leading + trailing + 1))
                for _ in 0..<(leading + trailing + 1) { grid.frequencyResolutions.append(try reader.readFlag()) }
            }
            return grid
        }
        guard let grid else { throw invalid("bs_frame_class", -1, "0...3") }   // unreachable: 2 bits
        let count = grid.envelopeCount
        guard count <= 5 else { throw invalid("bs_num_env", count, grid.frameClass == .fixFix ? "1, 2 or 4" : "at most 5") }
        guard grid.pointer <= count + 1 else { throw invalid("bs_pointer", grid.pointer, "0...\(count + 1)") }
        let borders = grid.borders
        for index in 1..<borders.count where borders[index - 1] >= borders[index] {
            throw invalid("time border", borders[index], "strictly increasing borders")
        }
        self = grid
    }

    /// Writes `sbr_grid()`; a grid ``validate()`` refuses is a typed error.
    public func write(to writer: inout BitWriter) throws(AACBitstreamError) {
        try validate()
        writer.write(frameClass.rawValue, bits: 2)
        let count = envelopeCount
        switch frameClass {
        case .fixFix:
            writer.write(count == 1 ? 0 : count == 2 ? 1 : 2, bits: 2)
            writer.writeFlag(frequencyResolutions[0])
        case .fixVar:
            writer.write(trailingBorder, bits: 2)
            writer.write(trailingRelativeBorders.count, bits: 2)
            for value in trailingRelativeBorders { writer.write(value, bits: 2) }
            writer.write(pointer, bits: Self.pointerBits(envelopeCount: count))
            for resolution in frequencyResolutions.reversed() { writer.writeFlag(resolution) }
        case .varFix:
            writer.write(leadingBorder, bits: 2)
            writer.write(leadingRelativeBorders.count, bits: 2)
            for value in leadingRelativeBorders { writer.write(value, bits: 2) }
            writer.write(pointer, bits: Self.pointerBits(envelopeCount: count))
            for resolution in frequencyResolutions { writer.writeFlag(resolution) }
        case .varVar:
            writer.write(leadingBorder, bits: 2)
            writer.write(trailingBorder, bits: 2)
            writer.write(leadingRelativeBorders.count, bits: 2)
            writer.write(trailingRelativeBorders.count, bits: 2)
            for value in leadingRelativeBorders + trailingRelativeBorders { writer.write(value, bits: 2) }
            writer.write(pointer, bits: Self.pointerBits(envelopeCount: count))
            for resolution in frequencyResolutions { writer.writeFlag(resolution) }
        }
    }
}
