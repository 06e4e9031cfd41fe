public import MediaCore

/// Reads the PCM frames of a WAV file (RIFF/WAVE, RF64 or BW64) from any byte stream, in
/// bounded pieces: memory stays at about one request however long the file is.
///
/// - Containers: RIFF `WAVE` (Microsoft/IBM Multimedia Programming Interface and Data
///   Specifications 1.0, "WAVE Form"), RF64 (EBU Tech 3306: `ds64` with the 64-bit sizes) and
///   BW64 (ITU-R BS.2088, the same layout). Chunks before `data` may come in any order; `LIST`,
///   `JUNK`, `fact`, `bext`, `cue ` and the rest are skipped, with the pad byte after odd sizes.
/// - Formats: `wFormatTag` WAVE_FORMAT_PCM (1), WAVE_FORMAT_IEEE_FLOAT (3) and
///   WAVE_FORMAT_EXTENSIBLE (0xFFFE) whose SubFormat GUID is PCM or float. 8-bit unsigned, 16-, 24-
///   and 32-bit signed, 32- and 64-bit float; PCM of other depths up to 32 bits in the smallest
///   whole-byte container (12-bit as ``/MediaCore/PCMSampleFormat/int16``, as FFmpeg reads it).
///
/// Like FFmpeg, it trusts the file over a header that claims too much: a `data` chunk that
/// declares more bytes than the file holds is read to the end of the file, and a trailing
/// partial frame is dropped; both are reported in ``warnings``. A header that contradicts itself
/// (no channels, an absurd rate, a block align that is not channels × sample size) throws.
///
/// RF64 files FFmpeg 5.1 writes with odd data count the pad byte in `ds64`'s data size but not in
/// its sample count; that byte is not read as a sample (ffprobe reports one frame more).
///
/// The source's first byte must be the file's first byte.
public struct WAVReader<Source: ByteSource> {
    /// The layout of the frames ``read(maxFrames:)`` returns (always interleaved, little-endian).
    public let format: PCMFormat
    /// `dwChannelMask` of a WAVEFORMATEXTENSIBLE `fmt ` chunk; `nil` for a plain WAVEFORMATEX.
    public let channelMask: UInt32?
    /// The meaningful bits of each sample: `wValidBitsPerSample` of WAVEFORMATEXTENSIBLE, else
    /// `wBitsPerSample` (for example 12 for 12-bit PCM delivered as 16-bit samples).
    public let validBitsPerSample: Int
    /// `wFormatTag` as the file writes it: 1 (PCM), 3 (IEEE float) or 0xFFFE (extensible).
    public let formatTag: UInt16
    /// Whether the file is RF64 or BW64 (sizes in the `ds64` chunk).
    public let isRF64: Bool
    /// The frames in the `data` chunk: its size over the block align, capped at what the file holds
    /// when the source is a ``/MediaCore/FileByteSource`` that knows its size. `nil` when the size
    /// is unknown: a data size of 0 or 0xFFFFFFFF in a RIFF file (a writer on a pipe).
    public let frameCount: Int64?
    /// The data size the header declares, `nil` when unknown.
    public let declaredDataByteCount: Int64?
    /// Absolute offset of the first sample byte.
    public let dataOffset: Int64
    /// The sample count of an RF64 file's `ds64` chunk (`nil` for RIFF).
    public let ds64SampleCount: Int64?
    private var frames: PCMFrameStream<Source>
    /// Warnings already handed out as damage (``takeDamage()``).
    var reportedWarningCount = 0
    private let headerWarnings: [DamageEvent]

    /// Reads the header of the WAV file `source` holds, up to the first sample byte.
    ///
    /// - Throws: ``WAVError`` naming the chunk, field and offset for a stream that is not WAV or
    ///   whose header is truncated or inconsistent; ``WAVError/stream(_:)`` when reading fails.
    public init(source: Source) throws(WAVError) {
        var parser = WAVHeaderParser(source: source)
        let header = try parser.parse()
        format = header.format
        channelMask = header.channelMask
        validBitsPerSample = header.validBitsPerSample
        formatTag = header.formatTag
        isRF64 = header.isRF64
        dataOffset = header.dataOffset
        declaredDataByteCount = header.dataByteCount
        ds64SampleCount = header.ds64SampleCount
        headerWarnings = header.issues

        var byteCount = header.dataByteCount
        var shortFile: WAVError?
        if let declared = byteCount, let fileSize = (parser.source as? FileByteSource)?.size() {
            let available = max(0, fileSize - header.dataOffset)
            if declared > available {
                shortFile = .dataBeyondFile(declared: declared, available: available, offset: header.dataChunkOffset)
                byteCount = available
            }
        }
        let bytesPerFrame = header.format.bytesPerFrame
        frameCount = byteCount.map { $0 / Int64(bytesPerFrame) }
        frames = PCMFrameStream(source: parser.source, bytesPerFrame: bytesPerFrame, offset: header.dataOffset, byteCount: byteCount,
                                declaration: shortFile == nil ? header.dataByteCount.map { ($0, header.dataChunkOffset) } : nil)
        if let shortFile { frames.note(shortFile) }
    }

    /// Up to `maxFrames` whole frames of interleaved little-endian samples (at least one is
    /// asked for); fewer only at the end of the data; `nil` once no whole frame is left.
    ///
    /// Memory is bounded by the request and by the frames the data has left.
    ///
    /// - Throws: ``WAVError/stream(_:)`` only: a short file is a warning, not an error.
    public mutating func read(maxFrames: Int) throws(WAVError) -> [UInt8]? {
        try frames.read(maxFrames: maxFrames)
    }

    /// Frames delivered by ``read(maxFrames:)`` so far.
    public var framesRead: Int64 { frames.framesRead }

    /// Absolute offset of the next unread sample byte.
    public var offset: Int64 { frames.offset }

    /// What was tolerated, oldest first, each with its byte offset: a `data` chunk longer than
    /// the file, a trailing partial frame, a second `fmt ` chunk, valid bits wider than the sample.
    public var warnings: [DamageEvent] { headerWarnings + frames.issues.map(\.damage) }
}

extension WAVReader: Sendable where Source: Sendable {}
