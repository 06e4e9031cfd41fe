internal import AudioBitstreams
internal import AudioCodec
internal import MediaCore
internal import MediaFormats
internal import SystemPackage

/// The frames of native FLAC files, each from one sample to another, back to back as one
/// stream: the source of a FLAC cut (one piece), a split part, or a join (a piece per input).
///
/// FLAC frames stand alone, so whole frames inside a piece are copied as they are; a frame a
/// piece begins or ends inside is decoded and its kept samples encoded again
/// (``LosslessFrameCoder``), which is lossless. Every frame's header is written again for its
/// place in the new stream (RFC 9639 9.1.5: the frame number, or the first sample's number
/// when block sizes vary, as they do once a boundary was re-encoded), and its CRC-16 with it.
/// Each frame is decoded once more for the MD5 of the whole, which the final STREAMINFO,
/// told after the last frame (``/MediaCore/StreamEvent/codecConfiguration(_:)``), carries
/// with the length and the frame and block sizes.
struct FLACSpliceSource: MediaSource {
    /// One input and the samples taken from it.
    struct Piece {
        /// The native FLAC file.
        var path: FilePath
        /// The samples taken (from the stream's first).
        var range: Range<Int64>
    }

    private let pieces: [Piece]
    private var index = 0
    private var input: FLACFrameInput?
    private let info: FLACStreamInfo
    private let stream: EncodedAudioFormat
    private let coder: LosslessFrameCoder
    private let digest: MD5Digest
    /// Whether the output's headers number samples (block sizes vary), not frames.
    private let numbersSamples: Bool
    /// The first frame's sample-rate and bit-depth codes, which every frame written gets: a
    /// frame encoded again may code them otherwise (an explicit rate for one the table has), and
    /// readers that find frames by their headers expect them the same.
    private var streamCodes: (rate: UInt8, rateBytes: [UInt8], depth: UInt8)?
    private var damage: [DamageEvent] = []
    private var framesReady: [[UInt8]] = []
    /// Samples decoded from boundary frames, waiting to be encoded again.
    private var pending: [UInt8] = []
    private var written: Int64 = 0
    private var frames: Int64 = 0
    private var blockSizes: (least: Int, most: Int) = (Int.max, 0)
    private var lastBlock = 0
    private var frameSizes: (least: Int, most: Int) = (Int.max, 0)
    private var events: [StreamEvent] = []
    private var ended = false
    /// Samples of all pieces.
    let totalSamples: Int64

    /// The samples `pieces` name, in order; the first piece's STREAMINFO is the stream's.
    ///
    /// - Throws: `PipelineError.unsupported` when a piece's stream differs in rate, channels or
    ///   bit depth from the first's, naming it; the readers' errors.
    init(pieces: [Piece], codecs: AudioCodecRegistry = .standard) throws(PipelineError) {
        guard let first = pieces.first else { throw .unsupported("no FLAC input") }
        let opened = try FLACFrameInput(path: first.path)
        info = opened.streamInfo
        stream = opened.stream
        for piece in pieces.dropFirst() {
            let other = try FLACFrameInput(path: piece.path).streamInfo
            if other.sampleRate != info.sampleRate || other.channelCount != info.channelCount || other.bitsPerSample != info.bitsPerSample {
                throw .unsupported("cannot join \(piece.path) to \(first.path) without re-encoding: it is \(other.sampleRate) Hz, \(other.channelCount) channels, "
                                   + "\(other.bitsPerSample) bits; the first is \(info.sampleRate) Hz, \(info.channelCount) channels, \(info.bitsPerSample) bits")
            }
        }
        coder = try LosslessFrameCoder(stream: stream, bitsPerSample: info.bitsPerSample, codecs: codecs)
        do { digest = try MD5Digest() } catch { throw .codec(error) }
        let fixed = info.minimumBlockSize == info.maximumBlockSize ? info.maximumBlockSize : 0
        numbersSamples = fixed == 0 || pieces.count > 1 || first.range.lowerBound % Int64(fixed) != 0
        self.pieces = pieces
        totalSamples = pieces.reduce(0) { $0 + Int64($1.range.count) }
        input = opened
    }

    /// The next frame of the new stream; `nil` after the last.
    mutating func next() throws(PipelineError) -> MediaSample? {
        while framesReady.isEmpty {
            guard try fillReady() else { return try end() }
        }
        let frame = framesReady.removeFirst()
        return try emit(frame)
    }

    /// Reads the current piece on until frames are ready; `false` after the last piece.
    ///
    /// Samples to encode again wait until there are 16 of them (RFC 9639 9.1.6: only a stream's
    /// last block may be shorter), across a piece's end if they must: a piece that ends fewer
    /// than 16 samples into a frame is joined to the next piece's first samples, not written
    /// as a short block in the middle of the stream.
    private mutating func fillReady() throws(PipelineError) -> Bool {
        let bytesPerFrame = coder.pcmFormat.bytesPerFrame
        while index < pieces.count {
            if input == nil { input = try FLACFrameInput(path: pieces[index].path) }
            let range = pieces[index].range
            var pieceEnded = false
            while var reader = input {
                let start = reader.nextSample
                guard let frame = try reader.next() else {
                    damage += reader.takeDamage()
                    input = reader
                    pieceEnded = true
                    break
                }
                input = reader
                if streamCodes == nil, let header = FLACFrameHeader(frame.data, at: 0) {
                    streamCodes = (header.sampleRateCode, header.sampleRateBytes, header.bitDepthCode)
                }
                let end = start + frame.duration.value
                if end <= range.lowerBound { continue }
                if start >= range.upperBound { pieceEnded = true; break }
                let whole = start >= range.lowerBound && end <= range.upperBound
                if whole && pending.isEmpty && frame.duration.value >= 16 {
                    framesReady.append(frame.data)
                    return true
                }
                // A frame the piece begins or ends inside, one that follows a boundary too short
                // to be a frame of its own, or a short last frame of an input: its samples join
                // the ones to encode again.
                let pcm = try coder.decode(frame.data)
                let from = Int(max(range.lowerBound, start) - start), to = Int(min(range.upperBound, end) - start)
                guard pcm.count >= to * bytesPerFrame else {
                    throw .unsupported("\(pieces[index].path): the frame at sample \(start) decodes to \(pcm.count / max(bytesPerFrame, 1)) samples, not \(end - start)")
                }
                pending += pcm[(from * bytesPerFrame)..<(to * bytesPerFrame)]
                if end >= range.upperBound { pieceEnded = true; break }
                if pending.count / bytesPerFrame >= 16 { break }
            }
            if pieceEnded || input == nil {
                input = nil
                index += 1
            }
            if !pending.isEmpty && (pending.count / bytesPerFrame >= 16 || index == pieces.count) {
                framesReady = try coder.encode(pending, largest: max(info.maximumBlockSize, 16))
                pending = []
                return true
            }
        }
        return false
    }

    /// `frame` with the header of its place in the new stream, counted.
    private mutating func emit(_ frame: [UInt8]) throws(PipelineError) -> MediaSample {
        guard var header = FLACFrameHeader(frame, at: 0) else { throw .unsupported("a FLAC frame without a header") }
        let size = header.blockSize
        header.isVariableBlockSize = numbersSamples
        header.codedNumber = UInt64(numbersSamples ? written : frames)
        if let streamCodes {
            (header.sampleRateCode, header.sampleRateBytes, header.bitDepthCode) = (streamCodes.rate, streamCodes.rateBytes, streamCodes.depth)
        }
        guard let bytes = FLACFrame.renumbered(frame, as: header) else { throw .unsupported("a FLAC frame shorter than its header") }
        let pcm = try coder.decode(bytes)
        try addToDigest(pcm)
        if lastBlock > 0 { blockSizes = (min(blockSizes.least, lastBlock), max(blockSizes.most, lastBlock)) }
        lastBlock = size
        frameSizes = (min(frameSizes.least, bytes.count), max(frameSizes.most, bytes.count))
        let rate = Int32(clamping: info.sampleRate)
        let sample = MediaSample(data: bytes, presentationTime: MediaTime(value: written, timescale: rate),
                                 duration: MediaTime(value: Int64(size), timescale: rate), format: .audio(stream))
        written += Int64(size)
        frames += 1
        return sample
    }

    /// The samples in FLAC's MD5 layout: interleaved, little-endian, each in the fewest whole
    /// bytes that hold its bits (RFC 9639 8.2).
    private func addToDigest(_ pcm: [UInt8]) throws(PipelineError) {
        let width = (info.bitsPerSample + 7) / 8
        if coder.pcmFormat.sampleFormat == .int16, width == 2 {
            digest.update(pcm)
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pcm.count / (coder.pcmFormat.sampleFormat == .int16 ? 2 : 4) * width)
        pcm.withUnsafeBytes { raw in
            if coder.pcmFormat.sampleFormat == .int16 {
                for value in raw.bindMemory(to: Int16.self) { bytes.append(UInt8(truncatingIfNeeded: value)) }
            } else {
                for value in raw.bindMemory(to: Int32.self) {
                    let sample = value >> 8
                    for byte in 0..<width { bytes.append(UInt8(truncatingIfNeeded: sample >> (8 * byte))) }
                }
            }
        }
        digest.update(bytes)
    }

    /// The end: the final STREAMINFO told.
    private mutating func end() throws(PipelineError) -> MediaSample? {
        guard !ended else { return nil }
        ended = true
        var final = info
        if blockSizes.most == 0 { blockSizes = (lastBlock, lastBlock) }
        final.minimumBlockSize = max(16, min(blockSizes.least, 65535))
        final.maximumBlockSize = max(final.minimumBlockSize, blockSizes.most)
        (final.minimumFrameSize, final.maximumFrameSize) = frames > 0 ? (frameSizes.least, frameSizes.most) : (0, 0)
        final.totalSamples = written
        final.md5 = digest.finish()
        var format = stream
        format.decoderConfiguration = final.bytes
        events.append(.codecConfiguration(format))
        return nil
    }

    /// The final STREAMINFO, after the last frame.
    mutating func takeEvents() -> [StreamEvent] {
        defer { events = [] }
        return events
    }

    /// What the readers stepped over: bytes at an input's end that were no frame.
    mutating func takeDamage() -> [DamageEvent] {
        defer { damage = [] }
        return damage
    }

    /// How far through the samples taken.
    var progress: MediaProgress {
        let rate = Double(max(info.sampleRate, 1))
        return MediaProgress(mediaSeconds: Double(written) / rate, totalSeconds: Double(totalSamples) / rate)
    }
}
