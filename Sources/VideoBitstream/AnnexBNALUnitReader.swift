public import MediaCore

/// Splits an Annex B byte stream (ITU-T H.264 Annex B, H.265 Annex B) into NAL units, reading
/// its source in chunks: memory holds the NAL unit being assembled plus one chunk.
///
/// NAL units are delimited by the 3-byte start code prefix `00 00 01`; a 4-byte start code
/// `00 00 00 01` is the same prefix after a `zero_byte`. Zero bytes before a start code
/// (`trailing_zero_8bits`, and the `zero_byte`) are not part of the NAL unit before it (B.2),
/// so each unit ends at its last non-zero byte. Empty units (two start codes in a row) are
/// skipped. The bytes are delivered as they are: emulation prevention bytes stay.
public struct AnnexBNALUnitReader<Source: ByteSource> {
    private var source: Source
    private let chunkSize: Int
    /// The largest NAL unit accepted, in bytes.
    public let maximumNALUnitSize: Int
    private var buffer: [UInt8] = []
    /// Absolute offset of `buffer[0]`.
    private var bufferOffset: Int64 = 0
    /// Index in `buffer` of the first byte of the NAL unit being assembled; `nil` before the
    /// first start code has been found.
    private var unitStart: Int?
    /// Where the search for the next start code resumes.
    private var scanPosition = 0
    private var sourceEnded = false
    private var finished = false

    /// A reader of `source` that reads `chunkSize` bytes at a time (at least 16) and refuses NAL
    /// units larger than `maximumNALUnitSize` bytes.
    public init(source: Source, chunkSize: Int = 64 * 1024, maximumNALUnitSize: Int = 64 << 20) {
        self.source = source
        self.chunkSize = max(16, chunkSize)
        self.maximumNALUnitSize = max(1, maximumNALUnitSize)
        buffer.reserveCapacity(self.chunkSize * 2)
    }

    /// The next NAL unit, or `nil` at the end of the stream (an empty stream, or one of only zero
    /// bytes, has none).
    ///
    /// - Throws: ``VideoBitstreamError/notAnnexB(offset:reason:)`` when a non-zero byte comes
    ///   before the first start code; ``VideoBitstreamError/tooLarge(what:size:limit:offset:)``
    ///   for a NAL unit over the limit; ``VideoBitstreamError/stream(_:)`` when reading fails.
    public mutating func next() throws(VideoBitstreamError) -> NALUnit? {
        if finished { return nil }
        if unitStart == nil {
            guard try findFirstStartCode() else {
                finished = true
                return nil
            }
        }
        while true {
            guard let start = unitStart else { return nil }
            if let prefix = findStartCode(from: max(scanPosition, start)) {
                let unit = makeUnit(from: start, to: prefix)
                unitStart = prefix + 3
                scanPosition = prefix + 3
                if let unit { return unit }
                continue
            }
            if sourceEnded {
                finished = true
                return makeUnit(from: start, to: buffer.count)
            }
            // Keep the last two bytes in the search: a start code may straddle the chunk boundary.
            scanPosition = max(start, buffer.count - 2)
            let size = buffer.count - start
            guard size <= maximumNALUnitSize else {
                throw .tooLarge(what: "NAL unit", size: size, limit: maximumNALUnitSize, offset: bufferOffset + Int64(start))
            }
            compact()
            try fill()
        }
    }

    /// Absolute offset of the next byte the reader has not looked at.
    public var offset: Int64 { bufferOffset + Int64(buffer.count) }

    /// Reads up to the first start code; `false` when the stream ends with none (only zeros).
    private mutating func findFirstStartCode() throws(VideoBitstreamError) -> Bool {
        var index = 0
        while true {
            while index < buffer.count, buffer[index] == 0 { index += 1 }
            if index < buffer.count {
                // A non-zero byte: it must be the 01 of a start code after at least two zeros.
                guard buffer[index] == 1, index >= 2 else {
                    throw .notAnnexB(offset: bufferOffset + Int64(index),
                                     reason: "byte \(buffer[index]) before the first start code 00 00 01")
                }
                unitStart = index + 1
                scanPosition = index + 1
                return true
            }
            if sourceEnded { return false }
            // Only zeros so far: drop all but two of them, which may begin the start code.
            let keep = min(buffer.count, 2)
            let drop = buffer.count - keep
            if drop > 0 {
                buffer.removeFirst(drop)
                bufferOffset += Int64(drop)
            }
            index = 0
            try fill()
        }
    }

    /// Index of the first `00` of the next `00 00 01` at or after `from`, if the buffer holds one.
    private func findStartCode(from: Int) -> Int? {
        buffer.withUnsafeBufferPointer { bytes -> Int? in
            var index = from + 2
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                if byte > 1 {
                    index += 3
                } else if byte == 1 {
                    if bytes[index - 1] == 0, bytes[index - 2] == 0 { return index - 2 }
                    index += 3
                } else {
                    index += 1
                }
            }
            return nil
        }
    }

    /// The unit in `buffer[start..<end]` without its trailing zero bytes; `nil` when empty.
    private func makeUnit(from start: Int, to end: Int) -> NALUnit? {
        var last = end
        while last > start, buffer[last - 1] == 0 { last -= 1 }
        guard last > start else { return nil }
        return NALUnit(bytes: Array(buffer[start..<last]), offset: bufferOffset + Int64(start))
    }

    /// Drops the bytes before the unit being assembled (once per unit: afterwards it starts at 0).
    private mutating func compact() {
        guard let start = unitStart, start > 0 else { return }
        buffer.removeFirst(start)
        bufferOffset += Int64(start)
        scanPosition -= start
        unitStart = 0
    }

    /// Appends one chunk; marks the end of the source when there is none.
    private mutating func fill() throws(VideoBitstreamError) {
        do {
            let count = try source.read(into: &buffer, maxCount: chunkSize)
            if count == 0 { sourceEnded = true }
        } catch {
            throw .stream(error)
        }
    }
}
