public import AACBitstream
internal import Dispatch
internal import Synchronization
public import MediaCore

/// AAC-LC from several encoders at once: the PCM is cut at frame boundaries into segments, each
/// segment is encoded by its own ``AACEncoder`` on its own thread with a few frames of pre-roll
/// before it and post-roll after it, and the packets are stitched into one continuous stream,
/// as a serial encoder would number them (priming first, the gapless length unchanged).
///
/// A splice is where two encoders' frames meet; their windows overlap-add in the decoder, so the
/// splice must join compatible window sequences (ISO/IEC 14496-3, 4.5.4): read from each frame's
/// ICS header (``/AACBitstream/ICSInfo``), a splice that would join a window ending long to one
/// starting short (or the reverse) is moved by a frame or two inside the overlap, where both
/// encoders coded the same input. Each encoder starts a few seconds before its segment, so that
/// its rate control has settled when its kept frames begin.
///
/// The input goes to each segment's encoder as it arrives, never copied: the buffers that cover
/// the segment (only the two at its ends are cut), each let go once coded. The input is read on
/// only while the PCM not yet coded stays under a bound, `threads − 1` segments (with their
/// pre- and post-roll) and a sixteenth of one more: the least that keeps every encoder busy,
/// because the next segment's input comes after the rest of this one's. Memory does not grow
/// with the file, and the pre-roll, coded twice, is a tenth of a 45-s segment at most.
public final class ParallelAACEncoder: AudioEncoder {
    /// Where two segments were joined.
    public struct Splice: Sendable, Hashable {
        /// The index of the first packet from the later segment.
        public var packetIndex: Int64
        /// Frames the splice was moved from its place at the segment boundary (0 most often).
        public var moved: Int
        /// Whether the window sequences meet compatibly, as far as the first audio element's
        /// `ics_info` shows (false only when no place in the overlap allowed it). In files of
        /// more than one element (5.1), only the first is checked.
        public var compatible: Bool
    }

    /// The target bitrate in bits per second (lowered to fit the input once it is known, when
    /// ``lowersBitrateToFit``).
    public private(set) var bitrate: Int
    /// Whether ``bitrate`` is a default lowered to what the input's rate and channels allow
    /// (``AACEncoder/fittingBitrate(_:channels:sampleRate:)``).
    public let lowersBitrateToFit: Bool
    /// The scale-factor search.
    public let coder: AACEncoder.Coder
    /// How many segments are encoded at once.
    public let threadCount: Int
    /// Input frames per segment (a multiple of 1024).
    public let segmentFrameCount: Int
    /// The PCM layout of the input, set by the first buffer.
    public private(set) var inputFormat: PCMFormat?
    /// Samples of encoder delay at the start of the output (1024), known once open.
    public private(set) var priming = 0
    /// Samples after the input's end in the decoded output; known after ``flush()``.
    public private(set) var padding: Int?
    /// Input frames taken.
    public private(set) var inputFrameCount: Int64 = 0
    /// Packets delivered.
    public private(set) var packetCount: Int64 = 0
    /// Where segments were joined.
    public private(set) var splices: [Splice] = []
    /// The stream's AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1), known with the first buffer
    /// (every segment's encoder writes the same).
    public private(set) var audioSpecificConfig: AudioSpecificConfig?
    private var announcement = GaplessAnnouncement()

    /// The priming once open, the valid length and padding once flushed
    /// (``/MediaCore/StreamEvent/gapless(_:)``).
    public func takeEvents() -> [StreamEvent] { gaplessEvents(&announcement) }

    /// Frames of post-roll after each segment, in packets: room to move a splice.
    static let postRollPackets = 4
    /// Where a splice may go, in packets from the segment boundary, in the order tried.
    static let spliceMoves = [0, 1, -1, 2, -2]
    /// The profile made: AAC-LC, or HE-AAC (``HEAACEncoder`` per segment).
    public let profile: AudioObjectType
    /// Output frames per packet: 1024, or 2048 for HE-AAC.
    public let framesPerPacket: Int

    /// A serial encoder of `profile` (AAC-LC, or HE-AAC v1 or v2), opened for `format` when it
    /// is known, else at its first input: one segment's encoder, the probe that fixes the
    /// bitrate and priming, and the registry's single-thread entries.
    static func makeEncoder(profile: AudioObjectType, format: PCMFormat?, bitrate: Int, coder: AACEncoder.Coder,
                            lowersBitrateToFit: Bool) throws(CodecError) -> any AudioEncoder {
        switch (profile.usesSpectralBandReplication, format) {
        case (true, let format?):
            try HEAACEncoder(format: format, bitrate: bitrate, coder: coder, lowersBitrateToFit: lowersBitrateToFit, parametricStereo: profile == .ps)
        case (true, nil):
            try HEAACEncoder(bitrate: bitrate, coder: coder, lowersBitrateToFit: lowersBitrateToFit, parametricStereo: profile == .ps)
        case (false, let format?):
            try AACEncoder(format: format, bitrate: bitrate, coder: coder, lowersBitrateToFit: lowersBitrateToFit)
        case (false, nil):
            try AACEncoder(bitrate: bitrate, coder: coder, lowersBitrateToFit: lowersBitrateToFit)
        }
    }

    /// The registry's AAC encoder of `profile` with `settings`: segment-parallel for more than
    /// one thread, else serial.
    static func makeEncoder(profile: AudioObjectType, settings: AudioCodecRegistry.EncoderSettings) throws(CodecError) -> any AudioEncoder {
        if settings.threads > 1 {
            return try ParallelAACEncoder(bitrate: settings.bitrate, lowersBitrateToFit: settings.lowersBitrateToFit, coder: settings.aac.coder,
                                          threads: settings.threads, profile: profile, control: settings.control)
        }
        return try makeEncoder(profile: profile, format: settings.format, bitrate: settings.bitrate, coder: settings.aac.coder,
                               lowersBitrateToFit: settings.lowersBitrateToFit)
    }
    /// Frames of pre-roll before each segment, in packets.
    public let preRollPackets: Int

    private let workQueue = DispatchQueue(label: "KeyFrameKit.ParallelAACEncoder", attributes: .concurrent)
    /// The job's control, asked between chunks and while waiting.
    private let control: JobControl?
    /// The most frames a segment's encoder takes at a time, between two looks at ``control``:
    /// a tenth of a second of encoding or less at 48 kHz (a longer input buffer is cut).
    static let chunkFrameCount = 16 * 1024
    private let running: DispatchSemaphore
    /// The segments taking input now (at most two: where one's post-roll and the next one's
    /// pre-roll overlap).
    private var open: [SegmentJob] = []
    private var submitted: [SegmentJob] = []
    /// Input frames handed to the segments' encoders and not yet taken by them.
    private let waitingFrames = FrameCounter()

    /// A count shared by the pump and the segments' encoders.
    private final class FrameCounter: Sendable {
        let value = Atomic<Int>(0)
    }
    /// The bound on ``waitingFrames`` past which ``encode(_:)`` waits for the encoders.
    private let waitingBound: Int
    /// The next packet index to deliver (global), and the next segment to deliver from.
    private var nextPacket: Int64 = 0
    private var flushed = false

    /// An encoder that opens on the first buffer.
    ///
    /// - Parameters:
    ///   - bitrate: bits per second.
    ///   - lowersBitrateToFit: take `bitrate` as a default, lowered to what the input allows
    ///     (see ``AACEncoder/init(bitrate:coder:lowersBitrateToFit:cutoff:)``).
    ///   - coder: the scale-factor search of every segment's encoder.
    ///   - threads: segments encoded at once (at least 1).
    ///   - segmentSeconds: the length of a segment (at 48 kHz; the same number of frames at
    ///     other rates), rounded to whole frames.
    ///   - preRollSeconds: how much input before its segment each encoder codes and throws away.
    ///     libavcodec's rate control starts every encoder at the same quantiser (λ 120) and
    ///     takes seconds to settle on the input: measured on the bench's music, 1 s of pre-roll
    ///     left the parallel encode 0.26 dB below the serial one, 3 s left it 0.04 dB below.
    ///   - profile: AAC-LC (`.aacLC`), HE-AAC v1 (`.sbr`) or v2 (`.ps`).
    ///   - control: the job's control: once it is cancelled, the segments being encoded stop
    ///     at their next chunk (`chunkFrameCount`, 16384 frames) and ``encode(_:)`` and ``flush()`` throw
    ///     instead of waiting for them.
    public init(bitrate: Int = 128_000, lowersBitrateToFit: Bool = false, coder: AACEncoder.Coder = .twoLoop, threads: Int,
                segmentSeconds: Double = 45, preRollSeconds: Double = 3, profile: AudioObjectType = .aacLC,
                control: JobControl? = nil) throws(CodecError) {
        self.control = control
        guard profile == .aacLC || profile.usesSpectralBandReplication else {
            throw .unsupportedInput("the parallel encoder makes AAC-LC or HE-AAC (v1: SBR; v2: PS), not \(profile)")
        }
        self.profile = profile
        framesPerPacket = profile == .aacLC ? AACEncoder.framesPerPacket : HEAACEncoder.framesPerPacket
        // Checks the bitrate and loads libavcodec.
        if profile.usesSpectralBandReplication {
            _ = try HEAACEncoder(bitrate: bitrate, coder: coder, lowersBitrateToFit: lowersBitrateToFit, parametricStereo: profile == .ps)
        } else {
            _ = try AACEncoder(bitrate: bitrate, coder: coder)
        }
        self.bitrate = bitrate
        self.lowersBitrateToFit = lowersBitrateToFit
        self.coder = coder
        threadCount = max(1, threads)
        // A segment's encoder starts at its pre-roll, while the one before still takes its
        // post-roll: two at least, even for one thread.
        running = DispatchSemaphore(value: max(2, threads))
        // Whole frames; the same frame count at every rate (45 s at 48 kHz).
        segmentFrameCount = max(framesPerPacket * 8, Int(segmentSeconds * 48000) / framesPerPacket * framesPerPacket)
        // At most two segments take input at once: the pre-roll and post-roll fit in a segment.
        preRollPackets = min(max(4, Int(preRollSeconds * 48000) / framesPerPacket),
                             segmentFrameCount / framesPerPacket - Self.postRollPackets - 1)
        let span = segmentFrameCount + (preRollPackets + Self.postRollPackets) * framesPerPacket
        waitingBound = max(1, threadCount - 1) * span + segmentFrameCount / 16
    }

    deinit {
        // A job given up before its end (an error upstream): its encoders stop waiting for input.
        for job in open { job.close(abandoning: true) }
    }

    /// Encodes interleaved PCM; returns the packets that are ready, in order.
    public func encode(_ buffer: PCMBuffer) throws(CodecError) -> [MediaSample] {
        guard !flushed else { throw .invalidState("encode after flush: make a new encoder") }
        // Until its segments are done this encoder returns nothing, so the chain pulls input
        // without coming back to the pump, which looks at the control between packets.
        if control?.isCancelled == true { throw .invalidState("cancelled") }
        let format = buffer.format
        if inputFormat == nil {
            guard format.sampleFormat == .float32, format.isInterleaved else {
                throw .unsupportedInput("the parallel encoder takes interleaved 32-bit float PCM")
            }
            let probe = try Self.makeEncoder(profile: profile, format: format, bitrate: bitrate, coder: coder,
                                             lowersBitrateToFit: lowersBitrateToFit)
            bitrate = probe.bitrate
            priming = probe.priming
            audioSpecificConfig = probe.audioSpecificConfig
            inputFormat = format
        }
        guard format == inputFormat else { throw .unsupportedInput("the PCM layout changed mid-stream") }
        guard buffer.bytes.count % format.bytesPerFrame == 0 else {
            throw .unsupportedInput("a PCM buffer of \(buffer.bytes.count) bytes is not whole \(format.bytesPerFrame)-byte frames")
        }
        guard buffer.frameCount > 0 else { return [] }
        let start = inputFrameCount
        let end = start + Int64(buffer.frameCount)
        do throws(CodecError) {
            // In pieces that end where a segment's encoder starts (its pre-roll) or one's input
            // ends (its post-roll), so that a segment is complete before the next one waits for
            // an encoder: a buffer of any length never waits on an encoder that waits for it.
            var position = start
            while position < end {
                while inputStart(of: submitted.count) <= position { try openSegment() }
                var pieceEnd = min(end, inputStart(of: submitted.count))
                if let first = open.first { pieceEnd = min(pieceEnd, first.nominalEnd) }
                let piece = position == start && pieceEnd == end ? buffer
                    : Self.buffers([buffer], from: start, covering: position..<pieceEnd)[0]
                for job in open { job.append(piece, from: position, waiting: waitingFrames) }
                inputFrameCount = pieceEnd
                position = pieceEnd
                // A segment whose post-roll is in is complete: its encoder finishes it.
                while let first = open.first, first.nominalEnd <= inputFrameCount {
                    first.close(at: first.nominalEnd)
                    open.removeFirst()
                }
                try waitForRoom()
            }
            // (Waiting only for segments whose input is complete: the last two may be open.)
            return try deliver(waiting: submitted.count - deliveredSegments > max(2, threadCount) + 1)
        } catch {
            for job in open { job.close(abandoning: true) }
            open = []
            throw error
        }
    }

    /// Encodes what is left and drains every segment; sets ``padding``.
    public func flush() throws(CodecError) -> [MediaSample] {
        guard !flushed else { return [] }
        flushed = true
        guard inputFormat != nil else { return [] }
        // The last segment is the one after those whose post-roll came in whole: it takes the
        // rest of the input. One opened after it (for its pre-roll) is given up.
        let postRoll = Int64(Self.postRollPackets * framesPerPacket)
        let lastIndex = min(submitted.count - 1, max(0, Int((inputFrameCount - postRoll) / Int64(segmentFrameCount))))
        for job in open {
            if job.index <= lastIndex { job.close(at: inputFrameCount) } else { job.close(abandoning: true) }
        }
        open = []
        let given = submitted.filter { $0.index > lastIndex }
        submitted.removeLast(given.count)
        for job in given { try job.wait(control: control) }
        var packets: [MediaSample] = []
        while deliveredSegments < submitted.count { packets += try deliver(waiting: true) }
        padding = max(0, Int(packetCount * Int64(framesPerPacket) - Int64(priming) - inputFrameCount))
        return packets
    }

    // MARK: - Segments

    /// One segment being encoded: its first input frame, and its packets once done.
    ///
    /// `Sendable` because it is synchronized: its outcome is behind a mutex (written by the
    /// worker before `done` is signalled, read after).
    private final class SegmentJob: Sendable {
        let index: Int
        /// The global frame its encoder starts at (the segment start less the pre-roll).
        let inputStart: Int64
        let done = DispatchSemaphore(value: 0)
        private let outcome = Mutex<(packets: [MediaSample], failure: CodecError?)>(([], nil))
        /// The input not yet coded, in order (each buffer let go as it is taken), and whether
        /// more will come or the job was given up.
        private let input = Mutex<(buffers: [PCMBuffer], next: Int, end: Int64?, abandoned: Bool)>(([], 0, nil, false))
        /// Signalled once per buffer appended and once when the input ends.
        private let arrived = DispatchSemaphore(value: 0)

        /// Adds what of `buffer` (whose first frame is global frame `start`) lies in this
        /// segment's input, from ``inputStart`` to its end once known.
        func append(_ buffer: PCMBuffer, from start: Int64, waiting: FrameCounter) {
            let end = min(start + Int64(buffer.frameCount), nominalEnd)
            guard end > max(start, inputStart) else { return }
            let piece = ParallelAACEncoder.buffers([buffer], from: start, covering: max(start, inputStart)..<end)
            guard let piece = piece.first else { return }
            waiting.value.add(piece.frameCount, ordering: .relaxed)
            input.withLock { $0.buffers.append(piece) }
            arrived.signal()
        }

        /// Ends the input at global frame `end` (nothing past it was appended), or gives the job
        /// up: its encoder stops at once and its packets are not wanted.
        func close(at end: Int64? = nil, abandoning: Bool = false) {
            input.withLock { state in
                if abandoning { state.abandoned = true }
                state.end = end ?? state.end ?? Int64.max
            }
            arrived.signal()
        }

        /// The next input buffer to code, no longer held here; `nil` after the last, or once the
        /// job is given up or `control` cancelled.
        func takeInput(control: JobControl?, waiting: FrameCounter) -> PCMBuffer? {
            while true {
                if arrived.wait(for: .milliseconds(50)) == .timedOut {
                    if control?.isCancelled == true { return nil }
                    continue
                }
                let (taken, finished) = input.withLock { state -> (PCMBuffer?, Bool) in
                    if state.abandoned { return (nil, true) }
                    guard state.next < state.buffers.count else { return (nil, state.end != nil) }
                    let buffer = state.buffers[state.next]
                    state.buffers[state.next] = PCMBuffer(format: buffer.format, bytes: [])
                    state.next += 1
                    // All taken: the list starts again, so that it never grows with the file.
                    if state.next == state.buffers.count {
                        state.buffers.removeAll(keepingCapacity: true)
                        state.next = 0
                    }
                    return (buffer, false)
                }
                if let taken {
                    waiting.value.subtract(taken.frameCount, ordering: .relaxed)
                    return taken
                }
                if finished { return nil }
            }
        }

        /// Whether the job was given up (its packets are not wanted).
        var isAbandoned: Bool { input.withLock { $0.abandoned } }
        /// The packets, once done.
        var packets: [MediaSample] {
            get { outcome.withLock { $0.packets } }
            set { outcome.withLock { $0.packets = newValue } }
        }
        /// Why encoding failed, once done.
        var failure: CodecError? {
            get { outcome.withLock { $0.failure } }
            set { outcome.withLock { $0.failure = newValue } }
        }

        /// The global frame its input ends at, unless it is the last segment (its post-roll's end).
        let nominalEnd: Int64

        init(index: Int, inputStart: Int64, nominalEnd: Int64) {
            self.index = index
            self.inputStart = inputStart
            self.nominalEnd = nominalEnd
        }

        /// Waits for the job, once; later calls return at once. Throws once `control` is
        /// cancelled.
        func wait(control: JobControl?) throws(CodecError) {
            try ParallelAACEncoder.wait(for: done, control: control)
            done.signal()
        }

        var isDone: Bool {
            guard done.wait(for: .zero) == .success else { return false }
            done.signal()
            return true
        }
    }

    private var deliveredSegments = 0

    /// Waits for `semaphore`, looking at ``control`` every 50 ms: a cancelled job does not
    /// wait for segments it will throw away.
    private func wait(for semaphore: DispatchSemaphore) throws(CodecError) {
        try Self.wait(for: semaphore, control: control)
    }

    fileprivate static func wait(for semaphore: DispatchSemaphore, control: JobControl?) throws(CodecError) {
        guard let control else {
            semaphore.wait()
            return
        }
        while semaphore.wait(for: .milliseconds(50)) == .timedOut {
            if control.isCancelled { throw .invalidState("cancelled") }
        }
    }

    /// The global frame where segment `index`'s encoder starts: the segment's start less the
    /// pre-roll.
    private func inputStart(of index: Int) -> Int64 {
        max(0, Int64(index) * Int64(segmentFrameCount) - Int64(preRollPackets * framesPerPacket))
    }

    /// Starts the next segment's encoder, once one of `threads` is free; it codes the input as
    /// ``encode(_:)`` hands it over.
    private func openSegment() throws(CodecError) {
        guard let format = inputFormat else { return }
        let index = submitted.count
        let segmentStart = Int64(index) * Int64(segmentFrameCount)
        let inputStart = inputStart(of: index)
        try wait(for: running)
        let job = SegmentJob(index: index, inputStart: inputStart,
                             nominalEnd: segmentStart + Int64(segmentFrameCount) + Int64(Self.postRollPackets * framesPerPacket))
        submitted.append(job)
        open.append(job)
        let (bitrate, coder, running, profile, control) = (bitrate, coder, running, profile, control)
        // HE-AAC: the packets where this segment may take over from the one before (the splice
        // and the places it may move to) carry an SBR header and values coded without reference
        // to the frame before, which came from the other encoder.
        let packetsBefore = inputStart / Int64(framesPerPacket)
        let boundary = segmentStart / Int64(framesPerPacket) + 1
        let independent = index == 0 ? [] : Self.spliceMoves.map { boundary + Int64($0) - packetsBefore }.filter { $0 > 0 }
        workQueue.async { [waitingFrames] in
            defer {
                running.signal()
                job.done.signal()
            }
            do throws(CodecError) {
                var encoder = try Self.makeEncoder(profile: profile, format: format, bitrate: bitrate, coder: coder, lowersBitrateToFit: false)
                if let marking = encoder as? any RandomAccessMarking {
                    for packet in independent { marking.markIndependent(packet: packet) }
                }
                var packets: [MediaSample] = []
                while let buffer = job.takeInput(control: control, waiting: waitingFrames) {
                    // A long buffer goes in pieces of `chunkFrameCount`, so that a cancelled or
                    // given-up job stops soon.
                    for start in stride(from: 0, to: buffer.frameCount, by: Self.chunkFrameCount) {
                        if control?.isCancelled == true { throw CodecError.invalidState("cancelled") }
                        if job.isAbandoned { throw CodecError.invalidState("the segment was given up") }
                        let piece = buffer.frameCount <= Self.chunkFrameCount ? buffer
                            : Self.buffers([buffer], from: 0, covering: Int64(start)..<Int64(min(start + Self.chunkFrameCount, buffer.frameCount)))[0]
                        packets += try encoder.transform(piece)
                    }
                }
                if control?.isCancelled == true { throw CodecError.invalidState("cancelled") }
                if job.isAbandoned { throw CodecError.invalidState("the segment was given up") }
                job.packets = packets + (try encoder.finish())
            } catch {
                job.failure = error
            }
        }
    }

    /// Waits while the input handed over and not yet coded is past ``waitingBound``: the
    /// encoders catch up before more is read.
    private func waitForRoom() throws(CodecError) {
        while waitingFrames.value.load(ordering: .relaxed) > waitingBound {
            if control?.isCancelled == true { throw .invalidState("cancelled") }
            // A segment's encoder that failed takes no more input: stop waiting for it.
            for job in submitted[deliveredSegments...] where job.isDone {
                if let failure = job.failure { throw failure }
            }
            pause.wait(for: .milliseconds(2))
        }
    }

    /// Never signalled: ``waitForRoom()`` sleeps on it between two looks.
    private let pause = DispatchSemaphore(value: 0)

    /// The buffers of `buffers` (the first starting at global frame `start`) that cover
    /// `range`: those inside it as they are (the same storage, not copied), the one or two that
    /// cross its ends cut to it.
    static func buffers(_ buffers: [PCMBuffer], from start: Int64, covering range: Range<Int64>) -> [PCMBuffer] {
        var result: [PCMBuffer] = []
        var bufferStart = start
        for buffer in buffers {
            let bufferEnd = bufferStart + Int64(buffer.frameCount)
            defer { bufferStart = bufferEnd }
            guard bufferEnd > range.lowerBound else { continue }
            guard bufferStart < range.upperBound else { break }
            if bufferStart >= range.lowerBound && bufferEnd <= range.upperBound {
                result.append(buffer)
            } else {
                let bytesPerFrame = buffer.format.bytesPerFrame
                let from = Int(max(bufferStart, range.lowerBound) - bufferStart) * bytesPerFrame
                let to = Int(min(bufferEnd, range.upperBound) - bufferStart) * bytesPerFrame
                result.append(PCMBuffer(format: buffer.format, bytes: Array(buffer.bytes[from..<to])))
            }
        }
        return result
    }

    /// Delivers the packets of the segments that are ready, in order (a segment's end waits for
    /// the next segment, which decides the splice); with `waiting`, waits for at least one.
    private func deliver(waiting: Bool) throws(CodecError) -> [MediaSample] {
        var packets: [MediaSample] = []
        while deliveredSegments < submitted.count {
            let job = submitted[deliveredSegments]
            let isLast = flushed && deliveredSegments == submitted.count - 1
            let next = isLast ? nil : (deliveredSegments + 1 < submitted.count ? submitted[deliveredSegments + 1] : nil)
            if !isLast && next == nil { break }
            if waiting && packets.isEmpty {
                try job.wait(control: control)
                try next?.wait(control: control)
            } else if !job.isDone || !(next?.isDone ?? true) {
                break
            }
            if let failure = job.failure ?? next?.failure { throw failure }
            let end = next.map { splice(job, $0) } ?? Int64.max
            packets += take(from: job, until: end)
            job.packets = []
            deliveredSegments += 1
        }
        return packets
    }

    /// The global index of the first packet from `later`: the boundary's own, or the nearest
    /// within the overlap where `earlier`'s last window sequence may be followed by `later`'s.
    private func splice(_ earlier: SegmentJob, _ later: SegmentJob) -> Int64 {
        let boundary = Int64(later.index) * Int64(segmentFrameCount) / Int64(framesPerPacket) + 1
        let framesPerPacket = self.framesPerPacket
        func packet(_ job: SegmentJob, _ global: Int64) -> [UInt8]? {
            let local = global - job.inputStart / Int64(framesPerPacket)
            return local >= 0 && local < Int64(job.packets.count) ? job.packets[Int(local)].data : nil
        }
        // First where the windows are known for both channels of a pair, then where only the
        // first channel's are.
        for wholeOnly in [true, false] {
            for move in Self.spliceMoves {
                let first = boundary + Int64(move)
                guard let previous = packet(earlier, first - 1).flatMap(ICSInfo.init(firstChannelOf:)),
                      let following = packet(later, first).flatMap(ICSInfo.init(firstChannelOf:)) else { continue }
                if wholeOnly && !(previous.coversBothChannelsOfPair && following.coversBothChannelsOfPair) { continue }
                if following.windowSequence.mayFollow(previous.windowSequence) {
                    splices.append(Splice(packetIndex: first, moved: move, compatible: true))
                    return first
                }
            }
        }
        splices.append(Splice(packetIndex: boundary, moved: 0, compatible: false))
        return boundary
    }

    /// The packets of `job` from ``nextPacket`` up to (not including) global index `end`,
    /// stamped as a serial encoder stamps them.
    private func take(from job: SegmentJob, until end: Int64) -> [MediaSample] {
        let offset = job.inputStart / Int64(framesPerPacket)
        var result: [MediaSample] = []
        for (local, packet) in job.packets.enumerated() {
            let global = offset + Int64(local)
            guard global >= nextPacket, global < end else { continue }
            var stamped = packet
            let rate = Int32(inputFormat?.sampleRate ?? 1)
            stamped.presentationTime = MediaTime(value: global * Int64(framesPerPacket) - Int64(priming), timescale: rate)
            stamped.decodeTime = stamped.presentationTime
            result.append(stamped)
        }
        if let last = result.last {
            nextPacket = Int64((last.presentationTime.value + Int64(priming)) / Int64(framesPerPacket)) + 1
        }
        packetCount += Int64(result.count)
        return result
    }
}

extension ParallelAACEncoder: MediaTransform {
    /// ``encode(_:)``.
    public func transform(_ buffer: PCMBuffer) throws(CodecError) -> [MediaSample] { try encode(buffer) }
    /// ``flush()``.
    public func finish() throws(CodecError) -> [MediaSample] { try flush() }
}

@available(*, unavailable)
extension ParallelAACEncoder: Sendable {}
