public import MediaCore

/// Reads an H.264 or H.265 Annex B elementary stream (ITU-T H.264 Annex B, H.265 Annex B: what
/// `ffmpeg -f h264` / `-f hevc` writes) and delivers its access units as
/// ``/MediaCore/MediaSample``s ready for an MP4 muxer.
///
/// **Samples.** One sample per access unit (H.264 7.4.1.2.3, H.265 7.4.2.4.4; an H.264
/// complementary field pair is one sample), in decoding order. Its data is the access unit's
/// NAL units, each behind a 4-byte big-endian length (ISO/IEC 14496-15 5.3.2, 8.3.2), without
/// the parameter sets (VPS, SPS, PPS), which go in the configuration record, and without access
/// unit delimiters; SEI and everything else stay, bytes unchanged. `isSync` marks IDR pictures
/// (H.264) and IRAP pictures (H.265). The format is `.video` with the codec, the cropped size of
/// the SPS in force, the parameter sets seen so far (VPS, SPS, PPS) and the configuration
/// record built from them (``DecoderConfiguration``: the `avcC` FFmpeg writes, or an `hvcC` with
/// `array_completeness` 1); it changes only when the stream's parameter sets do. Track id as
/// given (1 by default).
///
/// **Timing.** The stream has no timestamps. With a frame duration `T` (given, or from the first
/// SPS's VUI timing, or 1/25 s as FFmpeg assumes for raw streams), the access unit of decode
/// index `d` gets `dts = d × T`, and `pts = (rank + delay) × T`, where the rank is the picture's
/// place in presentation order (picture order count, H.264 8.2.1 for types 0, 1 and 2, H.265
/// 8.3.1; within each coded video sequence, which is presented after the ones before it) and
/// the delay is the reorder depth, which keeps `pts ≥ dts`: the depth the SPS declares (VUI
/// `max_num_reorder_frames`, `sps_max_num_reorder_pics`), as x264 and FFmpeg offset composition
/// times, else the largest `d − rank` seen (1 with B-frames, 2 with a B-pyramid, 0 without
/// B-frames, where `pts == dts`; without a declared depth it is learnt from the first window and
/// may grow for later units, leaving a gap in presentation times rather than a `pts < dts`). All
/// times use `T`'s timescale: pass `MediaTime(value: 1, timescale: 30)` for 30 fps,
/// `MediaTime(value: 1001, timescale: 30000)` for 29.97.
///
/// **Memory.** The source is read in chunks; a NAL unit is held while it is assembled. Ranks
/// need look-ahead, so access units are held until the next IDR/IRAP picture that starts a
/// sequence, or until `reorderWindow` (64) units wait for a rank; then all but the SPS's
/// reordering bound (16 when it gives none) are ranked, lowest picture order count first. Memory
/// is therefore bounded by about `reorderWindow` access units plus one chunk; NAL units and
/// access units larger than `maximumAccessUnitSize` are errors.
///
/// **Errors** are thrown as ``VideoBitstreamError`` with the absolute offset of the NAL unit at
/// fault; nothing traps on input. After an error the reader is in an unspecified state and
/// should not be read further.
public struct AnnexBReader<Source: ByteSource> {
    /// ``/MediaCore/VideoCodec/h264`` or ``/MediaCore/VideoCodec/hevc``.
    public let codec: VideoCodec
    /// The track id the samples carry.
    public let trackID: UInt32

    private enum Assembler {
        case h264(H264AccessUnitAssembler)
        case hevc(HEVCAccessUnitAssembler)
    }

    private var units: AnnexBNALUnitReader<Source>
    private var assembler: Assembler
    private var order: PresentationOrderBuffer
    private let requestedFrameDuration: MediaTime?
    private var resolvedFrameDuration: MediaTime?
    private var initialFormat: VideoFormat?
    private var sourceEnded = false

    /// The frame duration FFmpeg assumes for a raw stream that gives none: 1/25 s.
    public static var defaultFrameDuration: MediaTime { MediaTime(value: 1, timescale: 25) }

    /// A reader of the `codec` stream in `source`.
    ///
    /// - Parameters:
    ///   - source: the bytes of the stream.
    ///   - codec: `.h264` or `.hevc`.
    ///   - frameDuration: the duration of one frame, whose timescale all times use; `nil` takes
    ///     it from the first SPS's VUI timing (H.264 E.2.1: `2 × num_units_in_tick / time_scale`;
    ///     H.265 E.3.1: `num_units_in_tick / time_scale`), else ``defaultFrameDuration``.
    ///   - trackID: the track id of the samples.
    ///   - chunkSize: bytes read from the source at a time.
    ///   - reorderWindow: how many access units may wait for their presentation rank (see the type).
    ///   - maximumAccessUnitSize: the largest NAL unit and access unit accepted, in bytes.
    /// - Throws: ``VideoBitstreamError/invalidArgument(_:)`` for a codec other than H.264 and
    ///   H.265, or a frame duration that is not positive.
    public init(source: Source, codec: VideoCodec, frameDuration: MediaTime? = nil, trackID: UInt32 = 1,
                chunkSize: Int = 64 * 1024, reorderWindow: Int = 64, maximumAccessUnitSize: Int = 64 << 20) throws(VideoBitstreamError) {
        switch codec {
        case .h264: assembler = .h264(H264AccessUnitAssembler(maximumAccessUnitSize: max(1, maximumAccessUnitSize)))
        case .hevc: assembler = .hevc(HEVCAccessUnitAssembler(maximumAccessUnitSize: max(1, maximumAccessUnitSize)))
        default: throw .invalidArgument("an Annex B stream is H.264 or HEVC, not \(codec)")
        }
        if let frameDuration, frameDuration.value <= 0 {
            throw .invalidArgument("the frame duration must be positive, not \(frameDuration)")
        }
        self.codec = codec
        self.trackID = trackID
        self.requestedFrameDuration = frameDuration
        self.units = AnnexBNALUnitReader(source: source, chunkSize: chunkSize, maximumNALUnitSize: max(1, maximumAccessUnitSize))
        self.order = PresentationOrderBuffer(capacity: reorderWindow)
    }

    /// The frame duration in use: as given, or (once the first access unit has been read) from
    /// the VUI or the default.
    public var frameDuration: MediaTime? { resolvedFrameDuration ?? requestedFrameDuration }

    /// The composition delay in frame durations: the reorder depth found so far (see the type).
    public var compositionDelay: Int64 { order.delay }

    /// The next sample in decoding order, or `nil` at the end of the stream.
    ///
    /// - Throws: ``VideoBitstreamError`` for damaged or unsupported data (with the offset of the
    ///   NAL unit), a slice whose parameter sets have not been seen, a stream that is not Annex B,
    ///   a read that fails, or times that overflow.
    public mutating func nextSample() throws(VideoBitstreamError) -> MediaSample? {
        while true {
            if let entry = order.pop() { return try sample(from: entry) }
            if sourceEnded { return nil }
            try readMore()
        }
    }

    /// The format of the first access unit: codec, size and the parameter sets that came before
    /// the first picture. Reads ahead (into the reorder window) as far as the first picture.
    ///
    /// - Throws: ``VideoBitstreamError/noPictures`` for a stream without pictures, and what
    ///   ``nextSample()`` throws.
    public mutating func firstFormat() throws(VideoBitstreamError) -> VideoFormat {
        while initialFormat == nil, !sourceEnded { try readMore() }
        guard let initialFormat else { throw .noPictures }
        return initialFormat
    }

    /// Reads NAL units until at least one access unit is complete, or the stream ends.
    private mutating func readMore() throws(VideoBitstreamError) {
        while true {
            guard let unit = try units.next() else {
                let rest: [AccessUnit]
                switch assembler {
                case .h264(var inner):
                    rest = inner.finish()
                    assembler = .h264(inner)
                case .hevc(var inner):
                    rest = inner.finish()
                    assembler = .hevc(inner)
                }
                for accessUnit in rest { accept(accessUnit) }
                order.finish()
                sourceEnded = true
                return
            }
            let completed: [AccessUnit]
            switch assembler {
            case .h264(var inner):
                completed = try inner.append(unit)
                assembler = .h264(inner)
            case .hevc(var inner):
                completed = try inner.append(unit)
                assembler = .hevc(inner)
            }
            for accessUnit in completed { accept(accessUnit) }
            if !completed.isEmpty { return }
        }
    }

    private mutating func accept(_ unit: AccessUnit) {
        if initialFormat == nil {
            initialFormat = unit.format
            if requestedFrameDuration == nil {
                resolvedFrameDuration = unit.vuiFrameDuration.map { MediaTime(value: $0.value, timescale: Int32($0.timescale)) }
                    ?? Self.defaultFrameDuration
            }
        }
        order.push(unit)
    }

    private mutating func sample(from entry: PresentationOrderBuffer.Entry) throws(VideoBitstreamError) -> MediaSample {
        let duration = frameDuration ?? Self.defaultFrameDuration
        do {
            let decodeTime = try duration.multiplied(by: entry.decodeIndex)
            let presentationTime = try duration.multiplied(by: entry.presentationIndex ?? entry.decodeIndex)
            return MediaSample(data: entry.unit.data, presentationTime: presentationTime, decodeTime: decodeTime, duration: duration,
                               isSync: entry.unit.isSync, format: .video(entry.unit.format), trackID: trackID)
        } catch {
            throw .timeOverflow(error)
        }
    }
}
