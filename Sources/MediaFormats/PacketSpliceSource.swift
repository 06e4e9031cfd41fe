/// Packets of several MP4 or ADTS inputs (AAC, or another codec the registry describes), each from one packet to another, back to back on one timeline:
/// the source of a cut (one piece), a split part, or a join (a piece per input). Packets move in
/// runs, their bytes copied only where a run is cut at a piece's edge; decode times continue
/// from piece to piece, and every run takes the first piece's format (the join checked that the
/// inputs share it).
public struct PacketSpliceSource: MediaSource {
    /// One input and the packets taken from it.
    public struct Piece {
        /// The input's packets, opened for editing.
        public var input: AudioPacketInput
        /// The indices of the packets taken.
        public var packets: ClosedRange<Int>
        /// The duration every packet of the piece gets (the length a decoder gives each), or
        /// `nil` to keep the input's: a join gives a part's short last packet its full length.
        public var packetDuration: UInt32?
        /// Packets written in place of the input's, by index: the bytes and their duration (a
        /// lossless frame an edit encoded again to begin or end inside it).
        public var replacements: [Int: (bytes: [UInt8], duration: UInt32)]

        /// A piece.
        public init(input: AudioPacketInput, packets: ClosedRange<Int>, packetDuration: UInt32? = nil,
                    replacements: [Int: (bytes: [UInt8], duration: UInt32)] = [:]) {
            self.input = input
            self.packets = packets
            self.packetDuration = packetDuration
            self.replacements = replacements
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

    /// The most bytes a run read from an input holds.
    public let runBytes: Int

    /// The packets of `pieces`, in order, read in runs of at most `runBytes`, every run of
    /// `format` (by default the first piece's).
    public init(pieces: [Piece], runBytes: Int = 256 * 1024, format: FormatDescription? = nil) {
        self.pieces = pieces
        self.format = format
        self.runBytes = max(1, runBytes)
        deliveredCounts = Array(repeating: 0, count: pieces.count)
    }

    /// The next run of kept packets, `nil` after the last piece.
    public mutating func next() throws(PipelineError) -> MediaSampleRun? {
        while index < pieces.count {
            let wanted = pieces[index].packets
            if position == 0, wanted.lowerBound > 0 {
                // An MP4 track steps over the packets before the piece without reading them.
                position = pieces[index].input.skip(packets: wanted.lowerBound)
            }
            guard position <= wanted.upperBound, var run = try pieces[index].input.nextRun(maxBytes: runBytes) else {
                index += 1
                position = 0
                continue
            }
            let start = position
            position += run.count
            let lower = max(start, wanted.lowerBound), upper = min(position, wanted.upperBound + 1)
            // A run wholly before the piece (or, past its end, never read) keeps nothing.
            guard lower < upper else { continue }
            let keep = lower..<upper
            if keep.count != run.count { run = run.slice((keep.lowerBound - start)..<(keep.upperBound - start)) }
            let replacements = pieces[index].replacements
            if !replacements.isEmpty, keep.contains(where: { replacements[$0] != nil }) {
                var data: [UInt8] = []
                var entries: [MediaSampleRun.Entry] = []
                var offset = 0
                for (packet, entry) in zip(keep, run.entries) {
                    if let replacement = replacements[packet] {
                        data += replacement.bytes
                        entries.append(MediaSampleRun.Entry(size: replacement.bytes.count, duration: replacement.duration,
                                                            compositionOffset: entry.compositionOffset, isSync: entry.isSync))
                    } else {
                        data += run.data[offset..<(offset + entry.size)]
                        entries.append(entry)
                    }
                    offset += entry.size
                }
                run = MediaSampleRun(data: data, entries: entries, firstDecodeTime: run.firstDecodeTime, timescale: run.timescale,
                                     format: run.format, trackID: run.trackID)
            }
            if let duration = pieces[index].packetDuration, run.entries.contains(where: { $0.duration != duration }) {
                run = MediaSampleRun(data: run.data, entries: run.entries.map { MediaSampleRun.Entry(size: $0.size, duration: duration, compositionOffset: $0.compositionOffset, isSync: $0.isSync) },
                                     firstDecodeTime: run.firstDecodeTime, timescale: run.timescale, format: run.format, trackID: run.trackID)
            }
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
