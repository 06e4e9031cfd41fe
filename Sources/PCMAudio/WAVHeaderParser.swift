import MediaCore

/// Reads a WAV file from its first byte up to the first sample byte: the RIFF (or RF64/BW64)
/// header, `ds64`, every chunk before `data` (skipped unless it is `fmt `), and the `data` chunk
/// header.
///
/// - RIFF: Microsoft/IBM, Multimedia Programming Interface and Data Specifications 1.0 (1991),
///   "RIFF" and "WAVE Form": chunks are `id`, a little-endian 32-bit size, the body, and a pad
///   byte when the size is odd.
/// - RF64: EBU Tech 3306 (2009) § 3: `RF64`, a RIFF size of 0xFFFFFFFF, then a `ds64` chunk with
///   the 64-bit RIFF size, `data` size and sample count, and a table of other 64-bit chunk sizes;
///   a 32-bit size of 0xFFFFFFFF means "see ds64". ITU-R BS.2088 (BW64) uses the same layout.
/// - `fmt `: WAVEFORMATEX (mmreg.h) and WAVEFORMATEXTENSIBLE (ksmedia.h; "Multiple Channel Audio
///   Data and WAVE Files", Microsoft, 2001).
///
/// Reads only what it needs and skips the rest in bounded pieces: nothing is allocated from a
/// length field.
struct WAVHeaderParser<Source: ByteSource> {
    private(set) var source: Source
    /// Absolute offset of the next byte.
    private(set) var offset: Int64 = 0
    private var issues: [DamageEvent] = []
    private var scratch: [UInt8] = []

    /// The largest `fmt ` body read; the rest of a longer one is skipped.
    private static var fmtReadLimit: Int { 40 }
    /// The most `ds64` table entries kept (each names one chunk's 64-bit size).
    private static var ds64TableLimit: Int { 64 }

    init(source: Source) {
        self.source = source
    }

    /// Parses up to the first sample byte.
    mutating func parse() throws(WAVError) -> WAVHeader {
        let riff = try readUpTo(12)
        if riff.count >= 4 {
            let id = Self.fourCC(riff, 0)
            guard id == "RIFF" || id == "RF64" || id == "BW64" else {
                throw .notRIFF(found: id.description, offset: 0)
            }
        }
        guard riff.count == 12 else {
            throw .truncated(structure: "RIFF header", offset: 0, needed: 12, available: Int64(riff.count))
        }
        let isRF64 = Self.fourCC(riff, 0) != "RIFF"
        guard Self.fourCC(riff, 8) == "WAVE" else {
            throw .notWAVE(formType: Self.fourCC(riff, 8).description, offset: 8)
        }

        var ds64DataSize: Int64?
        var ds64SampleCount: Int64?
        var ds64Table: [FourCharacterCode: Int64] = [:]
        if isRF64 {
            let chunkOffset = offset
            let header = try readUpTo(8)
            guard header.count == 8 else {
                throw .missingChunk(id: "ds64", offset: chunkOffset, reason: "the RF64 file ends after \(chunkOffset + Int64(header.count)) bytes")
            }
            let id = Self.fourCC(header, 0)
            guard id == "ds64" else {
                throw .missingChunk(id: "ds64", offset: chunkOffset, reason: "the first chunk of an RF64 file is '\(id)' (EBU Tech 3306 § 3)")
            }
            let size = Int64(Self.le32(header, 4))
            guard size >= 24 else {
                throw .invalidField(chunk: "ds64", field: "size", value: size, offset: chunkOffset + 4, allowed: "24 or more")
            }
            let bodyOffset = offset
            let body = try readExactly(Int(min(size, 28)), structure: "ds64 chunk")
            var reader = ByteReader(body, baseOffset: bodyOffset)
            let values = try Self.reading("ds64 chunk") { () throws(BinaryReadError) in
                (try reader.readLittleEndian(byteCount: 8), try reader.readLittleEndian(byteCount: 8),
                 try reader.readLittleEndian(byteCount: 8), reader.remaining >= 4 ? try reader.readLittleEndian(byteCount: 4) : 0)
            }
            guard values.1 <= UInt64(Int64.max) else {
                throw .invalidField(chunk: "ds64", field: "data size", value: Int64(bitPattern: values.1), offset: bodyOffset + 8,
                                    allowed: "0...\(Int64.max)")
            }
            ds64DataSize = Int64(values.1)
            ds64SampleCount = values.2 <= UInt64(Int64.max) ? Int64(values.2) : nil
            var left = size - Int64(body.count)
            let entries = min(Int64(values.3), left / 12)
            for _ in 0..<min(entries, Int64(Self.ds64TableLimit)) {
                let entryOffset = offset
                let entry = try readExactly(12, structure: "ds64 table entry")
                var entryReader = ByteReader(entry, baseOffset: entryOffset)
                let entrySize = try Self.reading("ds64 table entry") { () throws(BinaryReadError) in
                    try entryReader.skip(4)
                    return try entryReader.readLittleEndian(byteCount: 8)
                }
                if entrySize <= UInt64(Int64.max) { ds64Table[Self.fourCC(entry, 0)] = Int64(entrySize) }
                left -= 12
            }
            try skipChunkRest(left, chunkSize: size)
        }

        var fmt: (format: PCMFormat, tag: UInt16, validBits: Int, mask: UInt32?)?
        var lastChunk: (id: FourCharacterCode, offset: Int64, size: Int64)?
        while true {
            let chunkOffset = offset
            let header = try readUpTo(8)
            guard header.count == 8 else {
                let missing = fmt == nil ? "fmt " : "data"
                var reason = "the file ends after \(chunkOffset + Int64(header.count)) bytes"
                if let last = lastChunk, last.offset + 8 + last.size > chunkOffset {
                    reason += "; the '\(last.id)' chunk at byte \(last.offset) declares \(last.size) bytes"
                }
                throw .missingChunk(id: missing, offset: chunkOffset, reason: reason)
            }
            let id = Self.fourCC(header, 0)
            let size32 = Self.le32(header, 4)
            var size = Int64(size32)
            if isRF64, size32 == UInt32.max, id != "data", let tableSize = ds64Table[id] { size = tableSize }
            lastChunk = (id, chunkOffset, size)

            if id == "data" {
                guard let fmt else {
                    throw .missingChunk(id: "fmt ", offset: chunkOffset, reason: "the data chunk at byte \(chunkOffset) comes before any fmt chunk")
                }
                var dataSize: Int64?
                if isRF64, size32 == UInt32.max {
                    // A streaming RF64 writer leaves ds64's data size 0 until it knows it.
                    dataSize = ds64DataSize.flatMap { $0 > 0 ? $0 : nil }
                    // FFmpeg 5.1's RF64 writer counts the pad byte after odd data in ds64's data
                    // size (but not in its sample count): trust the sample count for that byte.
                    let blockAlign = Int64(fmt.format.bytesPerFrame)
                    if let size = dataSize, let samples = ds64SampleCount, samples > 0, samples <= Int64.max / blockAlign,
                       size == samples * blockAlign + 1, size & 1 == 0 {
                        dataSize = size - 1
                    }
                } else if size32 != 0 && size32 != UInt32.max {
                    dataSize = size
                }
                return WAVHeader(format: fmt.format, formatTag: fmt.tag, validBitsPerSample: fmt.validBits, channelMask: fmt.mask,
                                 isRF64: isRF64, dataChunkOffset: chunkOffset, dataOffset: offset, dataByteCount: dataSize,
                                 ds64SampleCount: ds64SampleCount, issues: issues)
            }
            if id == "fmt " {
                if fmt == nil {
                    fmt = try parseFormat(chunkOffset: chunkOffset, size: size)
                    continue
                }
                issues.append(DamageEvent(.inconsistentHeader, at: chunkOffset, message: "WAV file at byte \(chunkOffset): a second fmt chunk is ignored"))
            }
            try skipChunkRest(size, chunkSize: size)
        }
    }

    // MARK: - fmt

    /// Parses a `fmt ` chunk whose header has been read, and skips past its end (and pad byte).
    private mutating func parseFormat(chunkOffset: Int64, size: Int64) throws(WAVError)
        -> (format: PCMFormat, tag: UInt16, validBits: Int, mask: UInt32?) {
        guard size >= 16 else {
            throw .invalidField(chunk: "fmt ", field: "size", value: size, offset: chunkOffset + 4, allowed: "16 or more")
        }
        let bodyOffset = offset
        let body = try readExactly(Int(min(size, Int64(Self.fmtReadLimit))), structure: "fmt chunk")
        try skipChunkRest(size - Int64(body.count), chunkSize: size)
        var reader = ByteReader(body, baseOffset: bodyOffset)
        let fields = try Self.reading("fmt chunk") { () throws(BinaryReadError) in
            (tag: UInt16(try reader.readLittleEndian(byteCount: 2)), channels: Int(try reader.readLittleEndian(byteCount: 2)),
             rate: Int64(try reader.readLittleEndian(byteCount: 4)), byteRate: try reader.readLittleEndian(byteCount: 4),
             blockAlign: Int(try reader.readLittleEndian(byteCount: 2)), bits: Int(try reader.readLittleEndian(byteCount: 2)))
        }
        var tag = UInt32(fields.tag)
        var tagOffset = bodyOffset
        var validBits = fields.bits
        var mask: UInt32?
        if fields.tag == WAVFormatTag.extensible {
            guard body.count >= 40 else {
                throw .invalidField(chunk: "fmt ", field: "size", value: size, offset: chunkOffset + 4,
                                    allowed: "40 or more for WAVE_FORMAT_EXTENSIBLE")
            }
            let extensible = try Self.reading("fmt chunk") { () throws(BinaryReadError) in
                (cbSize: Int(try reader.readLittleEndian(byteCount: 2)), validBits: Int(try reader.readLittleEndian(byteCount: 2)),
                 mask: UInt32(try reader.readLittleEndian(byteCount: 4)), subFormat: UInt32(try reader.readLittleEndian(byteCount: 4)),
                 guidTail: Array(try reader.readBytes(12)))
            }
            guard extensible.cbSize >= 22 else {
                throw .invalidField(chunk: "fmt ", field: "cbSize", value: Int64(extensible.cbSize), offset: bodyOffset + 16,
                                    allowed: "22 or more for WAVE_FORMAT_EXTENSIBLE")
            }
            tagOffset = bodyOffset + 24
            guard extensible.guidTail == WAVFormatTag.mediaSubtypeGUIDTail || extensible.guidTail == WAVFormatTag.ambisonicGUIDTail else {
                throw .unsupportedFormatTag(tag: extensible.subFormat, offset: tagOffset)
            }
            tag = extensible.subFormat
            mask = extensible.mask
            validBits = extensible.validBits
        }
        guard tag == UInt32(WAVFormatTag.pcm) || tag == UInt32(WAVFormatTag.ieeeFloat) else {
            throw .unsupportedFormatTag(tag: tag, offset: tagOffset)
        }
        guard PCMFormat.wavChannelRange.contains(fields.channels) else {
            throw .invalidField(chunk: "fmt ", field: "channels", value: Int64(fields.channels), offset: bodyOffset + 2, allowed: "1...64")
        }
        guard (1...Int64(PCMFormat.wavSampleRateRange.upperBound)).contains(fields.rate) else {
            throw .invalidField(chunk: "fmt ", field: "sample rate", value: fields.rate, offset: bodyOffset + 4, allowed: "1...768000 Hz")
        }
        guard fields.bits > 0 else {
            throw .invalidField(chunk: "fmt ", field: "bits per sample", value: 0, offset: bodyOffset + 14,
                                allowed: tag == UInt32(WAVFormatTag.ieeeFloat) ? "32 or 64" : "1...32")
        }
        let sampleFormat: PCMSampleFormat
        if tag == UInt32(WAVFormatTag.ieeeFloat) {
            switch fields.bits {
            case 32: sampleFormat = .float32
            case 64: sampleFormat = .float64
            default: throw .unsupportedBitDepth(formatTag: tag, bitsPerSample: fields.bits, offset: bodyOffset + 14)
            }
        } else {
            // PCM samples of fewer bits sit in the smallest whole-byte container
            // (the WAVE Form's "Data Packing for PCM WAVE Files"); FFmpeg reads them the same way.
            switch (fields.bits + 7) / 8 {
            case 1: sampleFormat = .uint8
            case 2: sampleFormat = .int16
            case 3: sampleFormat = .int24
            case 4: sampleFormat = .int32
            default: throw .unsupportedBitDepth(formatTag: tag, bitsPerSample: fields.bits, offset: bodyOffset + 14)
            }
        }
        let width = sampleFormat.bytesPerSample
        guard fields.blockAlign == fields.channels * width else {
            throw .blockAlignMismatch(blockAlign: fields.blockAlign, channels: fields.channels, bytesPerSample: width, offset: bodyOffset + 12)
        }
        if validBits == 0 {
            validBits = fields.bits
        } else if validBits > width * 8 {
            issues.append(DamageEvent(.inconsistentHeader, at: bodyOffset + 18,
                                      message: "WAV file at byte \(bodyOffset + 18): fmt chunk declares \(validBits) valid bits in \(width * 8)-bit samples; using \(width * 8)"))
            validBits = width * 8
        }
        let format = PCMFormat(sampleRate: Int(fields.rate), channelCount: fields.channels, sampleFormat: sampleFormat, isInterleaved: true)
        return (format, fields.tag, validBits, mask)
    }

    // MARK: - Reading

    /// Skips `count` more bytes of a chunk of `chunkSize` bytes, and its pad byte if the size is
    /// odd; stops quietly at the end of the stream (the caller then finds no next chunk).
    private mutating func skipChunkRest(_ count: Int64, chunkSize: Int64) throws(WAVError) {
        var left = count + (chunkSize & 1)
        while left > 0 {
            scratch.removeAll(keepingCapacity: true)
            let read: Int
            do { read = try source.read(into: &scratch, maxCount: Int(min(left, 64 * 1024))) } catch { throw .stream(error) }
            if read == 0 { return }
            offset += Int64(read)
            left -= Int64(read)
        }
    }

    /// Up to `count` bytes (fewer only at the end of the stream).
    private mutating func readUpTo(_ count: Int) throws(WAVError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            let read: Int
            do { read = try source.read(into: &bytes, maxCount: count - bytes.count) } catch { throw .stream(error) }
            if read == 0 { break }
        }
        offset += Int64(bytes.count)
        return bytes
    }

    /// Exactly `count` bytes of `structure`, or ``WAVError/truncated(structure:offset:needed:available:)``.
    private mutating func readExactly(_ count: Int, structure: String) throws(WAVError) -> [UInt8] {
        let start = offset
        let bytes = try readUpTo(count)
        guard bytes.count == count else {
            throw .truncated(structure: structure, offset: start, needed: Int64(count), available: Int64(bytes.count))
        }
        return bytes
    }

    private static func reading<T>(_ structure: String, _ body: () throws(BinaryReadError) -> T) throws(WAVError) -> T {
        do { return try body() } catch {
            throw .truncated(structure: structure, offset: error.offset, needed: Int64(error.needed), available: Int64(error.available))
        }
    }

    private static func fourCC(_ bytes: [UInt8], _ index: Int) -> FourCharacterCode {
        FourCharacterCode(rawValue: bytes[index..<(index + 4)].reduce(0) { $0 << 8 | UInt32($1) })
    }

    private static func le32(_ bytes: [UInt8], _ index: Int) -> UInt32 {
        bytes[index..<(index + 4)].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}
