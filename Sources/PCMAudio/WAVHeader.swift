import MediaCore

/// What `WAVHeaderParser` found between the start of a WAV file and its `data` chunk.
struct WAVHeader {
    /// The PCM layout (always interleaved).
    var format: PCMFormat
    /// `wFormatTag` as written: 1, 3 or 0xFFFE.
    var formatTag: UInt16
    /// The meaningful bits of each sample.
    var validBitsPerSample: Int
    /// `dwChannelMask` of WAVEFORMATEXTENSIBLE, `nil` for a plain WAVEFORMATEX.
    var channelMask: UInt32?
    /// Whether the file is RF64 or BW64 (sizes in `ds64`).
    var isRF64: Bool
    /// Absolute offset of the `data` chunk header.
    var dataChunkOffset: Int64
    /// Absolute offset of the first sample byte.
    var dataOffset: Int64
    /// The data length the header declares, `nil` when unknown (a streamed file).
    var dataByteCount: Int64?
    /// The sample count of `ds64` (RF64 only).
    var ds64SampleCount: Int64?
    /// Problems tolerated while parsing.
    var issues: [DamageEvent]
}
