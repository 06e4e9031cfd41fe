public import SystemPackage
internal import AudioBitstreams

/// Opus packets of Ogg Opus files, each piece from one presented sample to another, back to
/// back as one logical stream: the source of an Ogg Opus cut (one piece), a split part, or a
/// join.
///
/// An Opus decoder's state converges over its first packets (RFC 7845 4.6 asks for at least
/// 80 ms of pre-roll), so a piece keeps the packets from ``/AudioBitstreams/OpusPacket/editPreRoll``
/// (200 ms) before its first sample, and the new
/// `OpusHead`'s pre-skip drops them (with the part of the packet the first sample is in); the
/// last page's granule position trims the end (RFC 7845 4.5), which ``gapless`` carries to
/// ``OggOpusFileOutput``. A piece that continues the stream of the piece before (as `split`
/// makes parts) starts after the packets that piece ended with, so the two are one stream
/// again.
public struct OggOpusSpliceSource: MediaSource {
    /// One input and the samples taken from it.
    public struct Piece: Sendable {
        /// The Ogg Opus file.
        public var path: FilePath
        /// The presented samples taken, at 48 kHz (after the file's pre-skip).
        public var range: Range<Int64>
        /// Packets at the file's start the piece before already wrote; 0 for a piece that
        /// starts a stream.
        public var continuedPackets: Int

        /// A piece.
        public init(path: FilePath, range: Range<Int64>, continuedPackets: Int = 0) {
            self.path = path
            self.range = range
            self.continuedPackets = continuedPackets
        }
    }


    /// Where a piece's packets are, found before any is written.
    struct Plan {
        /// The first and last packet kept.
        var packets: ClosedRange<Int>
        /// Samples decoded from the kept packets before the first wanted.
        var priming: Int64
        /// Samples decoded after the last wanted.
        var padding: Int64
        /// Samples the kept packets decode to.
        var decoded: Int64
    }

    private let pieces: [Piece]
    private let plans: [Plan]
    private var index = 0
    private var input: OggOpusPacketInput?
    private var announced = false
    private var damage: [DamageEvent] = []
    private let format: FormatDescription
    /// The output's pre-skip (the first piece's priming) and its presented length.
    public let gapless: GaplessInfo
    /// Where, in the output's presented samples, each piece's first sample is.
    public let pieceStarts: [Int64]
    /// Packets written.
    public private(set) var packetsWritten = 0

    /// The samples `pieces` name, in order.
    ///
    /// - Throws: `PipelineError.unsupported` for a piece whose channels or mapping differ from
    ///   the first's, or a range outside its stream; the readers' errors.
    public init(pieces: [Piece]) throws(PipelineError) {
        var plans: [Plan] = []
        var firstHead: OpusHeader?
        for piece in pieces {
            var input = try OggOpusPacketInput(path: piece.path)
            var head = input.head
            head.preSkip = 0
            if var other = firstHead {
                other.preSkip = 0
                guard other.bytes == head.bytes else {
                    throw .unsupported("cannot join \(piece.path) to \(pieces[0].path) without re-encoding: its OpusHead differs in channels, "
                                       + "channel mapping or output gain (\(input.head.channelCount) channels, family \(input.head.mappingFamily), "
                                       + "gain \(input.head.outputGain))", path: piece.path)
                }
            }
            if firstHead == nil { firstHead = input.head }
            let start = Int64(input.head.preSkip) + piece.range.lowerBound, end = Int64(input.head.preSkip) + piece.range.upperBound
            let from = piece.continuedPackets > 0 ? -1 : max(0, start - OpusPacket.editPreRoll)
            var first: (index: Int, start: Int64)?
            var last: (index: Int, end: Int64)?
            var index = 0
            while let packet = try input.next() {
                let packetStart = packet.presentationTime.value, packetEnd = packetStart + packet.duration.value
                defer { index += 1 }
                if piece.continuedPackets > 0 ? index < piece.continuedPackets : packetEnd <= from { continue }
                if first == nil { first = (index, packetStart) }
                if packetStart >= end { break }
                last = (index, packetEnd)
            }
            guard let first, let last, last.index >= first.index else {
                throw .unsupported("\(piece.path): its Opus stream has no packets for samples \(piece.range.lowerBound)..<\(piece.range.upperBound)", path: piece.path)
            }
            plans.append(Plan(packets: first.index...last.index, priming: start - first.start, padding: last.end - end, decoded: last.end - first.start))
        }
        guard let firstHead, let head = plans.first else { throw .unsupported("no Ogg Opus input") }
        let priming = head.priming
        guard (0...Int64(UInt16.max)).contains(priming) else {
            throw .unsupported("\(pieces[0].path): a pre-skip of \(priming) samples does not fit OpusHead's 16 bits")
        }
        var starts: [Int64] = []
        var decoded: Int64 = 0
        for plan in plans {
            starts.append(decoded + plan.priming - priming)
            decoded += plan.decoded
        }
        gapless = GaplessInfo(priming: priming, validLength: decoded - priming - (plans.last?.padding ?? 0))
        pieceStarts = starts
        var configured = firstHead
        configured.preSkip = Int(priming)
        format = .audio(EncodedAudioFormat(codec: .opus, sampleRate: 48000, channelCount: configured.channelCount, framesPerPacket: 960,
                                           decoderConfiguration: configured.bytes))
        self.pieces = pieces
        self.plans = plans
    }

    /// The next packet of the new stream; `nil` after the last.
    public mutating func next() throws(PipelineError) -> MediaSample? {
        while index < pieces.count {
            if input == nil { input = try OggOpusPacketInput(path: pieces[index].path) }
            guard var reader = input else { break }
            let plan = plans[index]
            while reader.packetsRead < plan.packets.lowerBound, try reader.next() != nil {}
            guard reader.packetsRead <= plan.packets.upperBound, var packet = try reader.next() else {
                damage += reader.takeDamage()
                input = nil
                index += 1
                continue
            }
            input = reader
            packet.format = format
            packetsWritten += 1
            return packet
        }
        return nil
    }

    /// What the readers stepped over: pages at an input's end that did not read.
    public mutating func takeDamage() -> [DamageEvent] {
        defer { damage = [] }
        return damage
    }

    /// The pre-skip and length, before the first packet.
    public mutating func takeEvents() -> [StreamEvent] {
        guard !announced else { return [] }
        announced = true
        return [.gapless(gapless)]
    }
}
