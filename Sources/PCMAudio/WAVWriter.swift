public import MediaCore

/// Writes interleaved PCM as a WAV file with the header FFmpeg writes, and turns it into RF64
/// (EBU Tech 3306) when the data outgrows the 32-bit RIFF sizes.
///
/// The header is byte for byte what `ffmpeg -rf64 auto -fflags +bitexact` writes for the same
/// format (FFmpeg 5.1 `libavformat/wavenc.c` and `riffenc.c`):
///
/// - `RIFF` size `WAVE`, then a 28-byte `JUNK` chunk reserved for `ds64`;
/// - `fmt `: a 16-byte WAVEFORMATEX with WAVE_FORMAT_PCM (1) for integer samples of up to 16
///   bits, in mono or stereo, at up to 48 kHz; otherwise a 40-byte WAVEFORMATEXTENSIBLE
///   (`cbSize` 22, valid bits = bits, the channel mask, the PCM or IEEE float SubFormat GUID),
///   which float always gets, as do 24- and 32-bit integers, more than two channels and rates
///   above 48 kHz. With more than two channels the mask tells readers the layout (FFmpeg
///   otherwise guesses it and says so);
/// - `fact` with the sample count for float (any `wFormatTag` other than PCM, WAVE Form § "fact");
/// - `data`, then the samples and a pad byte if their length is odd.
///
/// Sizes are written as 0xFFFFFFFF (unknown, as a streaming writer leaves them) until
/// ``finish()`` or ``updateHeader()`` patches them. When the RIFF size (file size − 8) passes
/// 0xFFFFFFFE, ``finish()`` writes `RF64`, replaces `JUNK` with `ds64` (64-bit RIFF size, data
/// size and sample count, an empty table) and sets the 32-bit sizes to 0xFFFFFFFF. To a sink that
/// cannot overwrite (standard output), the sizes stay 0xFFFFFFFF, as FFmpeg's WAV muxer leaves
/// them on a pipe; readers (ours, FFmpeg's, SoX's) then read the data to the end of the stream.
public struct WAVWriter<Sink: SeekableByteSink> {
    /// The sink written to.
    public private(set) var sink: Sink
    /// The layout of the frames written.
    public let format: PCMFormat
    /// `wFormatTag`: 1 (PCM) or 0xFFFE (WAVE_FORMAT_EXTENSIBLE).
    public let formatTag: UInt16
    /// The channel mask written, `nil` for a plain WAVEFORMATEX.
    public let channelMask: UInt32?
    /// Frames written so far.
    public private(set) var framesWritten: Int64 = 0
    /// Whether ``finish()`` made the file RF64.
    public private(set) var isRF64 = false
    /// Whether ``finish()`` has run.
    public private(set) var isFinished = false
    /// The largest RIFF size (file size − 8) written as plain RIFF; past it the file becomes
    /// RF64. 0xFFFFFFFE, since 0xFFFFFFFF means "unknown"; tests lower it.
    package let rf64Threshold: Int64
    private let start: Int64
    private let headerByteCount: Int
    private let factSizeOffset: Int64?
    private var dataByteCount: Int64 = 0

    /// Offsets within the header (from its first byte).
    private static var junkOffset: Int64 { 12 }
    private static var junkPayloadSize: Int { 28 }

    /// A writer of `format` frames to `sink`, which gets the header at once (at its current end).
    ///
    /// - Parameters:
    ///   - format: the layout of the frames to be written.
    ///   - sink: where the file goes.
    ///   - channelMask: the speaker positions of the channels; `nil` for
    ///     ``WAVChannelMask/defaultMask(channelCount:)``. Written only in a WAVEFORMATEXTENSIBLE
    ///     header (see the type's description for when that is).
    /// - Throws: ``WAVError/unsupportedFormat(field:value:allowed:)`` for a planar layout, a
    ///   channel count outside 1...64 or a rate outside 1...768000 Hz; ``WAVError/stream(_:)``.
    public init(sink: Sink, format: PCMFormat, channelMask: UInt32? = nil) throws(WAVError) {
        try self.init(sink: sink, format: format, channelMask: channelMask, rf64Threshold: Int64(UInt32.max) - 1)
    }

    /// A writer that turns the file into RF64 once its RIFF size passes `rf64Threshold`.
    package init(sink: Sink, format: PCMFormat, channelMask: UInt32? = nil, rf64Threshold: Int64) throws(WAVError) {
        try format.validateForWAV()
        self.sink = sink
        self.format = format
        self.rf64Threshold = rf64Threshold
        let isFloat = format.sampleFormat == .float32 || format.sampleFormat == .float64
        let bits = format.sampleFormat.bytesPerSample * 8
        let extensible = format.channelCount > 2 || format.sampleRate > 48000 || bits > 16
        formatTag = extensible ? WAVFormatTag.extensible : WAVFormatTag.pcm
        // The speakers: given, else those the PCM names (``PCMFormat/channelMask``), else the
        // usual ones for the count.
        let named = format.channelMask.flatMap { $0 <= UInt64(UInt32.max) && $0.nonzeroBitCount == format.channelCount ? UInt32($0) : nil }
        self.channelMask = extensible ? (channelMask ?? named ?? WAVChannelMask.defaultMask(channelCount: format.channelCount)) : nil
        start = sink.byteCount

        var header = ByteWriter(capacity: 104)
        header.write(contentsOf: "RIFF".utf8)
        header.writeLittleEndian(UInt64(UInt32.max), byteCount: 4)
        header.write(contentsOf: "WAVE".utf8)
        header.write(contentsOf: "JUNK".utf8)
        header.writeLittleEndian(UInt64(Self.junkPayloadSize), byteCount: 4)
        header.write(contentsOf: repeatElement(0, count: Self.junkPayloadSize))
        header.write(contentsOf: "fmt ".utf8)
        header.writeLittleEndian(extensible ? 40 : 16, byteCount: 4)
        header.writeLittleEndian(UInt64(formatTag), byteCount: 2)
        header.writeLittleEndian(UInt64(format.channelCount), byteCount: 2)
        header.writeLittleEndian(UInt64(format.sampleRate), byteCount: 4)
        header.writeLittleEndian(UInt64(format.sampleRate * format.bytesPerFrame), byteCount: 4)
        header.writeLittleEndian(UInt64(format.bytesPerFrame), byteCount: 2)
        header.writeLittleEndian(UInt64(bits), byteCount: 2)
        if let mask = self.channelMask {
            header.writeLittleEndian(22, byteCount: 2)
            header.writeLittleEndian(UInt64(bits), byteCount: 2)
            header.writeLittleEndian(UInt64(mask), byteCount: 4)
            header.writeLittleEndian(UInt64(isFloat ? WAVFormatTag.ieeeFloat : WAVFormatTag.pcm), byteCount: 4)
            header.write(contentsOf: WAVFormatTag.mediaSubtypeGUIDTail)
        }
        if isFloat {
            header.write(contentsOf: "fact".utf8)
            header.writeLittleEndian(4, byteCount: 4)
            factSizeOffset = Int64(header.count)
            header.writeLittleEndian(0, byteCount: 4)
        } else {
            factSizeOffset = nil
        }
        header.write(contentsOf: "data".utf8)
        header.writeLittleEndian(UInt64(UInt32.max), byteCount: 4)
        headerByteCount = header.count
        do { try self.sink.write(header.bytes) } catch { throw .stream(error) }
    }

    /// Writes whole frames of interleaved little-endian samples in ``format``.
    ///
    /// - Throws: ``WAVError/partialFrameWrite(byteCount:bytesPerFrame:)`` when `interleaved` is
    ///   not a whole number of frames (nothing is written); ``WAVError/writerFinished``;
    ///   ``WAVError/stream(_:)``.
    public mutating func write(_ interleaved: UnsafeRawBufferPointer) throws(WAVError) {
        guard !isFinished else { throw .writerFinished }
        let bytesPerFrame = format.bytesPerFrame
        guard interleaved.count % bytesPerFrame == 0 else {
            throw .partialFrameWrite(byteCount: interleaved.count, bytesPerFrame: bytesPerFrame)
        }
        guard !interleaved.isEmpty else { return }
        do { try sink.write(interleaved) } catch { throw .stream(error) }
        dataByteCount += Int64(interleaved.count)
        framesWritten += Int64(interleaved.count / bytesPerFrame)
    }

    /// Writes whole frames of interleaved little-endian samples in ``format``.
    ///
    /// - Throws: as the `UnsafeRawBufferPointer` variant.
    public mutating func write(_ interleaved: [UInt8]) throws(WAVError) {
        var failure: WAVError?
        interleaved.withUnsafeBytes { buffer in
            do throws(WAVError) { try self.write(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Patches the RIFF, `fact` and `data` sizes to the frames written so far, so that a file
    /// cut short afterwards (a crash while recording) still reads to that point. Does nothing
    /// past the RF64 threshold, where only ``finish()`` can write the sizes.
    ///
    /// - Throws: ``WAVError/writerFinished``; ``WAVError/stream(_:)``.
    public mutating func updateHeader() throws(WAVError) {
        guard !isFinished else { throw .writerFinished }
        let riffSize = Int64(headerByteCount) - 8 + dataByteCount
        guard riffSize <= rf64Threshold, sink.canOverwrite else { return }
        try patchRIFFSizes(riffSize: riffSize)
    }

    /// Adds the pad byte after odd data, writes the final sizes (RF64 past the threshold) and
    /// stops the writer. The sink is left open: commit or close it afterwards.
    ///
    /// - Throws: ``WAVError/writerFinished`` when called twice; ``WAVError/stream(_:)``.
    public mutating func finish() throws(WAVError) {
        guard !isFinished else { throw .writerFinished }
        isFinished = true
        do {
            if dataByteCount & 1 == 1 { try sink.write([0]) }
        } catch { throw .stream(error) }
        // A stream keeps the sizes of its header, 0xFFFFFFFF: "unknown, read to the end".
        guard sink.canOverwrite else { return }
        let riffSize = Int64(headerByteCount) - 8 + dataByteCount + (dataByteCount & 1)
        guard riffSize > rf64Threshold else {
            try patchRIFFSizes(riffSize: riffSize)
            return
        }
        isRF64 = true
        var ds64 = ByteWriter(capacity: 36)
        ds64.write(contentsOf: "ds64".utf8)
        ds64.writeLittleEndian(UInt64(Self.junkPayloadSize), byteCount: 4)
        ds64.writeLittleEndian(UInt64(riffSize), byteCount: 8)
        ds64.writeLittleEndian(UInt64(dataByteCount), byteCount: 8)
        ds64.writeLittleEndian(UInt64(framesWritten), byteCount: 8)
        ds64.writeLittleEndian(0, byteCount: 4)
        let unknown: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF]
        do {
            try sink.overwrite(Array("RF64".utf8) + unknown, at: start)
            try sink.overwrite(ds64.bytes, at: start + Self.junkOffset)
            if let factSizeOffset { try sink.overwrite(unknown, at: start + factSizeOffset) }
            try sink.overwrite(unknown, at: start + Int64(headerByteCount) - 4)
        } catch { throw .stream(error) }
    }

    private mutating func patchRIFFSizes(riffSize: Int64) throws(WAVError) {
        do {
            try sink.overwrite(Self.le32(riffSize), at: start + 4)
            if let factSizeOffset { try sink.overwrite(Self.le32(min(framesWritten, Int64(UInt32.max))), at: start + factSizeOffset) }
            try sink.overwrite(Self.le32(dataByteCount), at: start + Int64(headerByteCount) - 4)
        } catch { throw .stream(error) }
    }

    private static func le32(_ value: Int64) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }
}

extension WAVWriter: Sendable where Sink: Sendable {}
