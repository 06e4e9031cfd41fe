public import SystemPackage
internal import AudioBitstreams

/// MPEG layer III frames of MP3 files, each piece from one presented sample to another, back
/// to back as one stream: the source of an MP3 cut (one piece), a split part, or a join.
///
/// A decoder reconstructs a granule's samples from that granule and the one before it (the MDCT
/// overlap and the synthesis filter's history, ISO/IEC 11172-3 2.4.3.4), and reads each
/// frame's main data from the bit reservoir: `main_data_begin` bytes back, inside the frames
/// before it. So a piece keeps the frame before the one holding its first sample (two in
/// MPEG-2 and 2.5, whose frames hold one granule), and ahead of
/// that a frame made for the edit: silent (no granule codes a value), at the piece's rate and
/// mode, whose main data ends with the reservoir bytes the kept frames reach back for. The
/// decode of the kept frames is then the source's, sample for sample; the samples before the
/// first wanted are the stream's priming, which the Info frame's delay trims (with that frame,
/// it is at most 3 frames of MPEG-1 or 4 of MPEG-2, within LAME's 12 bits).
///
/// A piece that continues the stream of the piece before (as `split` makes parts) starts after
/// the frames that piece ended with; its frames follow on, and nothing is added.
public struct MP3SpliceSource: MediaSource {
    /// One input and the samples taken from it.
    public struct Piece: Sendable {
        /// The MP3 file.
        public var path: FilePath
        /// The presented samples taken (after the file's own priming).
        public var range: Range<Int64>
        /// Frames at the file's start the piece before already wrote (its stream continues into
        /// this one); 0 for a piece that starts a stream.
        public var continuedFrames: Int

        /// A piece.
        public init(path: FilePath, range: Range<Int64>, continuedFrames: Int = 0) {
            self.path = path
            self.range = range
            self.continuedFrames = continuedFrames
        }
    }

    /// Where a piece's frames are, decided before any is read.
    struct Plan {
        /// The first and last frame kept (indices in the file's audio frames).
        var frames: ClosedRange<Int>
        /// Whether a reservoir frame goes first.
        var leadingFrame: Bool
        /// Samples before the first wanted one in the piece's decoded output.
        var priming: Int64
        /// Samples after the last wanted one.
        var padding: Int64
        /// Frames the piece writes.
        var count: Int { frames.count + (leadingFrame ? 1 : 0) }
    }

    private let pieces: [Piece]
    private let plans: [Plan]
    private var index = 0
    private var input: MP3FrameInput?
    private var queue: [MediaSample] = []
    /// Main data of the frames read before the current piece's first, its last bytes.
    private var reservoir: [UInt8] = []
    private var events: [StreamEvent] = []
    private var damage: [DamageEvent] = []
    private var ended = false
    /// Frames written.
    public private(set) var framesWritten = 0
    /// Samples per frame.
    public let samplesPerFrame: Int
    /// The output's priming (the first piece's) and its presented length.
    public let gapless: GaplessInfo
    /// Where, in the output's presented samples, each piece's first sample is.
    public let pieceStarts: [Int64]

    /// The samples `pieces` name, in order.
    ///
    /// - Throws: `PipelineError.unsupported` for a piece whose rate, channels or MPEG version
    ///   differs from the first's, or whose range lies outside its file; the readers' errors.
    public init(pieces: [Piece]) throws(PipelineError) {
        var plans: [Plan] = []
        var first: MPEGAudioFrameHeader?
        for piece in pieces {
            let input = try MP3FrameInput(path: piece.path)
            let header = input.firstHeader
            if let first, first.version != header.version || first.sampleRate != header.sampleRate || first.channelCount != header.channelCount {
                throw .unsupported("cannot join \(piece.path) to \(pieces[0].path) without re-encoding: it is \(header.sampleRate) Hz, "
                                   + "\(header.channelCount) channel\(header.channelCount == 1 ? "" : "s"); the first is \(first.sampleRate) Hz, "
                                   + "\(first.channelCount) channel\(first.channelCount == 1 ? "" : "s")", path: piece.path)
            }
            if first == nil { first = header }
            let frame = Int64(header.samplesPerFrame)
            let start = Int64(input.info?.priming ?? 0) + piece.range.lowerBound, end = Int64(input.info?.priming ?? 0) + piece.range.upperBound
            let last = Int((end - 1) / frame)
            if piece.continuedFrames > 0 {
                let firstKept = piece.continuedFrames
                plans.append(Plan(frames: firstKept...max(firstKept, last), leadingFrame: false, priming: start - Int64(firstKept) * frame,
                                  padding: Int64(last + 1) * frame - end))
                continue
            }
            let holding = Int(start / frame)
            // A granule needs the one before it (the MDCT overlap, and the synthesis filter's
            // history): the frame before in MPEG-1, whose frames hold two granules; two frames
            // before in MPEG-2 and 2.5, whose frames hold one.
            let firstKept = max(0, holding - (header.version == .mpeg1 ? 1 : 2))
            let within = start - Int64(firstKept) * frame
            // A frame ahead for the reservoir, and so that the priming covers MP3 synthesis's 529.
            let leading = firstKept > 0 || within < Int64(MP3InfoTag.decoderDelay)
            plans.append(Plan(frames: firstKept...max(firstKept, last), leadingFrame: leading, priming: within + (leading ? frame : 0),
                              padding: Int64(last + 1) * frame - end))
        }
        guard let first else { throw .unsupported("no MP3 input") }
        samplesPerFrame = first.samplesPerFrame
        let frame = Int64(samplesPerFrame)
        // The presented samples: from the first piece's priming to the last piece's padding; a
        // seam between pieces of different streams keeps the padding and priming between them.
        var starts: [Int64] = []
        var written: Int64 = 0
        for plan in plans {
            starts.append(written * frame + plan.priming - (plans.first?.priming ?? 0))
            written += Int64(plan.count)
        }
        let priming = plans.first?.priming ?? 0
        gapless = GaplessInfo(priming: priming, validLength: written * frame - priming - (plans.last?.padding ?? 0))
        pieceStarts = starts
        self.pieces = pieces
        self.plans = plans
    }

    /// The next frame of the new stream; `nil` after the last.
    public mutating func next() throws(PipelineError) -> MediaSample? {
        while queue.isEmpty {
            guard index < pieces.count else {
                if !ended {
                    ended = true
                    events.append(.gapless(gapless))
                }
                return nil
            }
            try read()
        }
        framesWritten += 1
        return queue.removeFirst()
    }

    /// Reads the current piece on: the frames before its first kept one into the reservoir,
    /// then its kept frames (a few ahead, for the reservoir frame), into the queue.
    private mutating func read() throws(PipelineError) {
        if input == nil {
            input = try MP3FrameInput(path: pieces[index].path)
            reservoir = []
        }
        guard var reader = input else { return }
        let plan = plans[index]
        while reader.framesRead < plan.frames.lowerBound, let frame = try reader.next() {
            keepMainData(of: frame.data)
        }
        if reader.framesRead == plan.frames.lowerBound {
            // The kept frames read ahead until their main data passes the farthest any frame can
            // reach back (511 bytes in MPEG-1, 255 in MPEG-2/2.5): how far back they reach.
            var ahead: [MediaSample] = []
            var mainData = 0
            while mainData <= 511, ahead.count < 256, reader.framesRead <= plan.frames.upperBound, let frame = try reader.next() {
                ahead.append(frame)
                if let header = MPEGAudioFrameHeader(frame.data, at: 0) {
                    mainData += frame.data.count - Self.mainDataStart(header)
                }
            }
            if plan.leadingFrame, let head = ahead.first.flatMap({ MPEGAudioFrameHeader($0.data, at: 0) }) {
                queue.append(reservoirFrame(like: head, reaching: reach(of: ahead.map(\.data)), format: ahead[0].format))
            }
            queue += ahead
        } else if reader.framesRead <= plan.frames.upperBound, let frame = try reader.next() {
            queue.append(frame)
        }
        if reader.framesRead > plan.frames.upperBound || queue.isEmpty {
            damage += reader.takeDamage()
            input = nil
            index += 1
        } else {
            input = reader
        }
    }

    /// The main data of `frame` (after its header, CRC and side information) kept as the
    /// reservoir's latest bytes.
    private mutating func keepMainData(of frame: [UInt8]) {
        guard let header = MPEGAudioFrameHeader(frame, at: 0) else { return }
        let start = Self.mainDataStart(header)
        guard start < frame.count else { return }
        reservoir += frame[start...]
        if reservoir.count > 4096 { reservoir.removeFirst(reservoir.count - 2048) }
    }

    /// Where a frame's main data starts: after its header, CRC and side information.
    static func mainDataStart(_ header: MPEGAudioFrameHeader) -> Int {
        4 + (header.hasCRC ? 2 : 0) + header.sideInformationLength
    }

    /// How many bytes before the first of `frames` their main data starts, at most.
    private func reach(of frames: [[UInt8]]) -> Int {
        var position = 0
        var most = 0
        for frame in frames {
            guard let header = MPEGAudioFrameHeader(frame, at: 0), let back = header.mainDataBegin(frame, frameAt: 0) else { break }
            most = max(most, back - position)
            position += frame.count - Self.mainDataStart(header)
        }
        return most
    }

    /// A silent frame like `header` (no CRC, the least bitrate that holds it) whose main data
    /// ends with the reservoir's last `count` bytes.
    private func reservoirFrame(like header: MPEGAudioFrameHeader, reaching count: Int, format: FormatDescription) -> MediaSample {
        var made = header
        made.hasCRC = false
        made.isPadded = false
        let side = made.sideInformationLength
        made.bitrateIndex = (1...14).first { made.frameLength(bitrateIndex: $0, padded: false) >= 4 + side + count } ?? 14
        let length = made.frameLength
        var bytes = made.bytes + [UInt8](repeating: 0, count: length - 4)
        let tail = reservoir.suffix(count)
        // The reservoir's bytes end the frame (zeros stand for any the file did not have).
        bytes.replaceSubrange((length - tail.count)..<length, with: tail)
        let rate = Int32(clamping: header.sampleRate)
        return MediaSample(data: bytes, presentationTime: .zero, duration: MediaTime(value: Int64(header.samplesPerFrame), timescale: rate),
                           format: format)
    }

    /// What the readers stepped over: bytes at an input's end that were no frame.
    public mutating func takeDamage() -> [DamageEvent] {
        defer { damage = [] }
        return damage
    }

    /// The gapless numbers, after the last frame.
    public mutating func takeEvents() -> [StreamEvent] {
        defer { events = [] }
        return events
    }
}
