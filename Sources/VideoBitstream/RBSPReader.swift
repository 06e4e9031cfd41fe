internal import MediaCore

/// Reads the syntax elements of a raw byte sequence payload (RBSP): the NAL unit payload with its
/// emulation prevention bytes removed (ITU-T H.264 7.3.1 and 7.4.1, H.265 7.3.1.1 and 7.4.2).
///
/// Fixed-length fields are `u(n)` and Exp-Golomb fields `ue(v)` / `se(v)` (H.264 9.1, H.265
/// 9.2). Every read names its field, so a read past the end becomes
/// ``VideoBitstreamError/truncated(structure:field:nalOffset:_:)`` and a value out of its
/// range ``VideoBitstreamError/invalidField(structure:field:value:nalOffset:allowed:)``, both
/// with the NAL unit's absolute offset. Nothing traps on data.
struct RBSPReader {
    private var bits: BitReader
    /// The structure being read, for error messages (`H.264 SPS`, `HEVC slice segment header`).
    let structure: String
    /// Absolute offset of the NAL unit header.
    let nalOffset: Int64

    /// The RBSP bytes at most this reader looks at when it starts with a prefix (enough for
    /// any parameter set or slice header met in practice; ``parse(_:headerLength:structure:nalOffset:_:)``
    /// retries with the whole NAL unit when it is not).
    static let prefixLength = 512

    /// A reader over `rbsp`, the payload of the NAL unit at `nalOffset`.
    init(rbsp: [UInt8], structure: String, nalOffset: Int64) {
        self.bits = BitReader(rbsp, baseOffset: nalOffset)
        self.structure = structure
        self.nalOffset = nalOffset
    }

    /// Runs `body` on the RBSP of `nal` after its `headerLength`-byte header: first on a prefix
    /// of ``prefixLength`` RBSP bytes, and on the whole payload only when the prefix runs out, so
    /// that parsing a slice header does not unescape a whole slice.
    static func parse<T>(_ nal: [UInt8], headerLength: Int, structure: String, nalOffset: Int64,
                         _ body: (inout RBSPReader) throws(VideoBitstreamError) -> T) throws(VideoBitstreamError) -> T {
        let prefix = payload(of: nal, from: headerLength, limit: prefixLength)
        var reader = RBSPReader(rbsp: prefix.bytes, structure: structure, nalOffset: nalOffset)
        do {
            return try body(&reader)
        } catch {
            guard case .truncated = error, !prefix.isComplete else { throw error }
        }
        var full = RBSPReader(rbsp: payload(of: nal, from: headerLength, limit: .max).bytes, structure: structure, nalOffset: nalOffset)
        return try body(&full)
    }

    /// The RBSP of `nal` from byte `start`: every `00 00 03` becomes `00 00` (H.264 7.4.1
    /// `emulation_prevention_three_byte`, H.265 7.4.2). At most `limit` output bytes;
    /// `isComplete` tells whether the whole payload fitted.
    static func payload(of nal: [UInt8], from start: Int, limit: Int) -> (bytes: [UInt8], isComplete: Bool) {
        guard start < nal.count else { return ([], true) }
        var output: [UInt8] = []
        output.reserveCapacity(min(nal.count - start, limit))
        var zeros = 0
        var index = start
        while index < nal.count {
            let byte = nal[index]
            index += 1
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            if output.count == limit { return (output, false) }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return (output, true)
    }

    /// Bits left.
    var bitsRemaining: Int { bits.bitsRemaining }

    /// Whether the next bit starts a byte.
    var isByteAligned: Bool { bits.isByteAligned }

    /// `u(n)`: `count` bits (0...64), most significant first.
    mutating func u(_ count: Int, _ field: String) throws(VideoBitstreamError) -> UInt64 {
        do { return try bits.readBits(count) } catch {
            throw .truncated(structure: structure, field: field, nalOffset: nalOffset, error)
        }
    }

    /// `u(n)` as an `Int` (for `count` up to 32).
    mutating func int(_ count: Int, _ field: String) throws(VideoBitstreamError) -> Int {
        Int(truncatingIfNeeded: try u(count, field))
    }

    /// `u(1)` as a Boolean.
    mutating func flag(_ field: String) throws(VideoBitstreamError) -> Bool {
        try u(1, field) == 1
    }

    /// Skips `count` bits.
    mutating func skip(_ count: Int, _ field: String) throws(VideoBitstreamError) {
        do { try bits.skipBits(count) } catch {
            throw .truncated(structure: structure, field: field, nalOffset: nalOffset, error)
        }
    }

    /// `ue(v)`: an unsigned Exp-Golomb code (H.264 9.1, H.265 9.2), at most 32 leading zero bits
    /// (values up to 2^32 − 2, as both standards bound them), checked against `allowed`.
    mutating func ue(_ field: String, _ allowed: ClosedRange<Int> = 0...Int(UInt32.max - 1)) throws(VideoBitstreamError) -> Int {
        var leadingZeros = 0
        while try u(1, field) == 0 {
            leadingZeros += 1
            guard leadingZeros <= 31 else {
                throw .invalidField(structure: structure, field: field, value: Int64(leadingZeros), nalOffset: nalOffset,
                                    allowed: "an Exp-Golomb code of at most 31 leading zero bits")
            }
        }
        let suffix = leadingZeros == 0 ? 0 : try u(leadingZeros, field)
        let value = Int((UInt64(1) << UInt64(leadingZeros)) - 1 + suffix)
        guard allowed.contains(value) else {
            throw .invalidField(structure: structure, field: field, value: Int64(value), nalOffset: nalOffset,
                                allowed: "\(allowed.lowerBound)...\(allowed.upperBound)")
        }
        return value
    }

    /// `se(v)`: a signed Exp-Golomb code (H.264 9.1.1, H.265 9.2.2), checked against `allowed`.
    mutating func se(_ field: String, _ allowed: ClosedRange<Int> = Int(Int32.min) + 1...Int(Int32.max)) throws(VideoBitstreamError) -> Int {
        let code = try ue(field)
        let value = code % 2 == 1 ? (code + 1) / 2 : -(code / 2)
        guard allowed.contains(value) else {
            throw .invalidField(structure: structure, field: field, value: Int64(value), nalOffset: nalOffset,
                                allowed: "\(allowed.lowerBound)...\(allowed.upperBound)")
        }
        return value
    }

    /// Throws ``VideoBitstreamError/invalidField(structure:field:value:nalOffset:allowed:)`` for `field`.
    func invalid(_ field: String, _ value: Int, allowed: String) -> VideoBitstreamError {
        .invalidField(structure: structure, field: field, value: Int64(value), nalOffset: nalOffset, allowed: allowed)
    }
}
