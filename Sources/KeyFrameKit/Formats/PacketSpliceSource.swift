/// Packets of several AAC inputs, each from one packet to another, back to back on one timeline:
/// the source of a cut (one piece), a split part, or a join (a piece per input). Packets move in
/// runs, their bytes copied only where a run is cut at a piece's edge; decode times continue
/// from piece to piece, and every run takes the first piece's format (the join checked that the
/// inputs share it).
public struct PacketSpliceSource: MediaSource {
    /// One input and the packets taken from it.
    public struct Piece {
        /// The input's packets, opened for remuxing.
        public var input: AudioPacketInput
        /// The indices of the packets taken.
        public var packets: ClosedRange<Int>

        /// A piece.
        public init(input: AudioPacketInput, packets: ClosedRange<Int>) {
            self.input = input
            self.packets = packets
        }
    }

    private var pieces: [Piece]
    private var index = 0
    /// Packets of the current piece's input read so far.
    private var position = 0
    private var nextDecodeTime: Int64 = 0
    private var format: FormatDescription?
    /// Packets delivered from each piece.
    public private(set) var deliveredCounts: [Int]

    /// The packets of `pieces`, in order.
    public init(pieces: [Piece]) {
        self.pieces = pieces
        deliveredCounts = Array(repeating: 0, count: pieces.count)
    }

    /// The next run of kept packets, `nil` after the last piece.
    public mutating func next() throws(PipelineError) -> MediaSampleRun? {
        while index < pieces.count {
            let wanted = pieces[index].packets
            guard position <= wanted.upperBound, var run = try pieces[index].input.nextRun(maxBytes: 256 * 1024) else {
                index += 1
                position = 0
                continue
            }
            let start = position
            position += run.count
            let keep = max(start, wanted.lowerBound)..<min(position, wanted.upperBound + 1)
            guard !keep.isEmpty else { continue }
            if keep.count != run.count { run = run.slice((keep.lowerBound - start)..<(keep.upperBound - start)) }
            if format == nil { format = run.format }
            run.format = format ?? run.format
            run.trackID = 1
            run.firstDecodeTime = nextDecodeTime
            nextDecodeTime += run.duration
            deliveredCounts[index] += run.count
            return run
        }
        return nil
    }

    /// How far through the pieces: the current piece's progress.
    public var progress: MediaProgress {
        index < pieces.count ? pieces[index].input.progress : MediaProgress()
    }

    /// The damage met since the last call.
    public mutating func takeDamage() -> [DamageEvent] {
        var events: [DamageEvent] = []
        for piece in pieces.indices { events += pieces[piece].input.takeDamage() }
        return events
    }
}
