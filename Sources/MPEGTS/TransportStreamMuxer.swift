public import AACBitstream

/// Writes an AAC elementary stream as an MPEG-2 transport stream (ISO/IEC 13818-1): one program
/// with one audio stream carried as ADTS, what an SRT publisher sends.
///
/// ## Layout
///
/// The choices are FFmpeg's (`libavformat/mpegtsenc.c`), so that what we write looks to peers
/// like what they meet most:
///
/// | what | value |
/// |---|---|
/// | `transport_stream_id` | 1 (``transportStreamID``) |
/// | `program_number` | 1 (``programNumber``) |
/// | PMT PID | 0x1000 (``programMapPID``) |
/// | audio PID, `PCR_PID` | 0x100 (``audioPID``) |
/// | `stream_type` | 0x0F, ISO/IEC 13818-7 audio in ADTS (2.4.4.9, table 2-34) |
/// | `stream_id` | 0xC0 (2.4.3.7, table 2-22) |
///
/// ## Timing
///
/// A frame's PTS is its time in samples converted to 90 kHz (rounded to the nearest tick, from
/// the sample count each time, so there is no drift) plus ``presentationDelay``, 1.4 s, taken
/// modulo 2^33. The PCR, in the adaptation field of the first packet of each PES packet, is the
/// PES packet's PTS less ``clockLead``, 0.7 s. These are FFmpeg's numbers (its `-muxdelay` 0.7 s
/// as the PCR–PTS gap; its streams start at PTS 1.4 s): the PTS is never below the PCR however
/// early the first timestamp is, a receiver's T-STD buffer model (2.4.2) has 0.7 s to receive a
/// PES packet before it is due, far more than the ~0.1 s a PES packet here lasts plus network
/// jitter; ffprobe reports `start_time` 1.4 as it does for FFmpeg's own files; GStreamer's tsdemux
/// and VLC see the same PCR-to-PTS gap as with FFmpeg's files. PCRs are at most 0.1 s apart
/// (2.7.2): when PES packets are further apart (rates below 10240 Hz, or a gap in the
/// timestamps up to 10 s), packets that carry only a PCR fill in. A timestamp that goes back,
/// or jumps more than 10 s, starts a new time base: `discontinuity_indicator` is set (2.4.3.5).
///
/// ## Packets
///
/// Each frame gets an ADTS header (``/AACBitstream/ADTSHeader``, 13818-7, 6.2) and frames are grouped into PES
/// packets of ``framesPerPES`` frames (fewer when a packet would exceed what `PES_packet_length`
/// counts, or when the timestamps are not contiguous). Every PES packet has a PTS and
/// `data_alignment_indicator` (each starts with a syncword); the first TS packet of each has
/// `random_access_indicator` (every AAC frame can be decoded on its own) and the PCR; the last is
/// filled out with adaptation-field stuffing (2.4.3.5). The PAT and PMT are written before the
/// first PES packet and again before any PES packet that starts ``programTableInterval`` or more
/// after the last ones (0.1 s, FFmpeg's default), and by ``programTables()`` whenever asked (on
/// a reconnect). Continuity counters count per PID, modulo 16.
///
/// Every method returns whole 188-byte packets.
public struct TransportStreamMuxer: Sendable {
    /// `transport_stream_id` of the PAT.
    public static let transportStreamID: UInt16 = 1
    /// `program_number` of the one program.
    public static let programNumber: UInt16 = 1
    /// The PID of the program map table.
    public static let programMapPID: UInt16 = 0x1000
    /// The PID of the audio stream, also `PCR_PID`.
    public static let audioPID: UInt16 = 0x100
    /// Added to every timestamp: 1.4 s in 90 kHz units.
    public static let presentationDelay: Int64 = 126_000
    /// How far the PCR runs ahead of the PTS of the PES packet it precedes: 0.7 s in 90 kHz
    /// units.
    public static let clockLead: Int64 = 63_000
    /// The longest gap between PCRs, 0.1 s in 90 kHz units (2.7.2).
    public static let maximumClockInterval: Int64 = 9000
    /// How often the PAT and PMT are repeated, in 90 kHz units of stream time: 0.1 s.
    public static let programTableInterval: Int64 = 9000
    /// Gaps in the timestamps longer than this (10 s) start a new time base instead of being
    /// filled with PCRs.
    public static let longestFilledGap: Int64 = 900_000
    /// PCM frames in an ADTS frame with one raw data block.
    public static let samplesPerFrame: Int64 = 1024

    /// The rate the timestamps of ``write(frame:sampleTime:)`` count in: the configuration's
    /// sampling frequency, the one the ADTS headers say.
    public let sampleRate: Int
    /// The most frames in one PES packet.
    public let framesPerPES: Int
    /// The PAT every ``programTables()`` writes.
    public let programAssociationTable: ProgramAssociationTable
    /// The PMT every ``programTables()`` writes.
    public let programMapTable: ProgramMapTable

    private let adtsTemplate: ADTSHeader
    private var associationCounter: UInt8 = 0
    private var mapCounter: UInt8 = 0
    private var audioCounter: UInt8 = 0
    /// ADTS frames waiting to become a PES packet, and how many.
    private var pendingFrames: [UInt8] = []
    private var pendingFrameCount = 0
    /// The sample time of the first pending frame, and of the frame that would follow the last.
    private var pendingStart: Int64 = 0
    private var nextSampleTime: Int64?
    /// The last PCR base written, before the modulo (90 kHz).
    private var lastClock: Int64?
    /// The PTS (before the modulo) of the PES packet the tables last went before.
    private var lastTablesTime: Int64?
    /// Whether ``programTables()`` was called since the last PES packet.
    private var tablesWrittenSincePES = false

    /// The default ``framesPerPES`` at `sampleRate`: as many frames as last 0.1 s (the PCR and
    /// table interval), at least 1 and at most 5 — 4 at 44.1 and 48 kHz (93 and 85 ms).
    public static func defaultFramesPerPES(sampleRate: Int) -> Int {
        guard sampleRate > 0 else { return 1 }
        return min(5, max(1, sampleRate / 10 / Int(samplesPerFrame)))
    }

    /// A muxer for the AAC stream `audioSpecificConfig` describes.
    ///
    /// - Parameters:
    ///   - audioSpecificConfig: the stream's configuration (ISO/IEC 14496-3 1.6.2.1).
    ///   - framesPerPES: the most frames in one PES packet (at least 1); by default
    ///     ``defaultFramesPerPES(sampleRate:)``.
    /// - Throws: ``TransportStreamError/adts(_:)`` when ADTS cannot describe the configuration.
    public init(audioSpecificConfig: AudioSpecificConfig, framesPerPES: Int? = nil) throws(TransportStreamError) {
        do {
            adtsTemplate = try ADTSHeader(audioSpecificConfig: audioSpecificConfig, frameLength: 7)
        } catch {
            throw .adts(error)
        }
        sampleRate = adtsTemplate.sampleRate ?? audioSpecificConfig.samplingFrequency
        self.framesPerPES = max(1, framesPerPES ?? Self.defaultFramesPerPES(sampleRate: sampleRate))
        programAssociationTable = ProgramAssociationTable(
            transportStreamID: Self.transportStreamID,
            programs: [.init(programNumber: Self.programNumber, pid: Self.programMapPID)])
        programMapTable = ProgramMapTable(
            programNumber: Self.programNumber, pcrPID: Self.audioPID,
            streams: [.init(streamType: MPEGTS.adtsAudioStreamType, pid: Self.audioPID)])
    }

    /// The PAT (2.4.4.3) and PMT (2.4.4.8), one packet each, their continuity counters advanced.
    ///
    /// Write them first, and again at once after a reconnect so that a new receiver need not wait
    /// for the next repetition; the muxer also repeats them every ``programTableInterval``.
    public mutating func programTables() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(2 * MPEGTS.packetSize)
        Self.appendSection(programAssociationTable.section, pid: MPEGTS.programAssociationPID, counter: &associationCounter, to: &out)
        Self.appendSection(programMapTable.section, pid: Self.programMapPID, counter: &mapCounter, to: &out)
        tablesWrittenSincePES = true
        return out
    }

    /// Adds one AAC access unit (a raw data block, no ADTS header) that starts at `sampleTime`
    /// (PCM frames at ``sampleRate``); returns the packets of any PES packet it completes —
    /// none while a PES packet is being filled.
    ///
    /// A frame whose time does not follow the previous one (1024 samples later) first ends the
    /// PES packet being filled: within a PES packet, times are implied by the frame count.
    ///
    /// - Throws: ``TransportStreamError/adts(_:)`` for a frame longer than an ADTS frame holds
    ///   (8184 bytes); nothing is written then.
    public mutating func write(frame: some Collection<UInt8>, sampleTime: Int64) throws(TransportStreamError) -> [UInt8] {
        var header = adtsTemplate
        header.frameLength = 7 + frame.count
        let headerBytes: [UInt8]
        do { headerBytes = try header.serialized() } catch { throw .adts(error) }
        var out: [UInt8] = []
        if pendingFrameCount > 0,
           sampleTime != nextSampleTime || pendingFrames.count + header.frameLength > PESPacket.maximumPayloadLengthWithPresentationTime {
            writePending(to: &out)
        }
        if pendingFrameCount == 0 {
            pendingStart = sampleTime
        }
        pendingFrames += headerBytes
        pendingFrames += frame
        pendingFrameCount += 1
        nextSampleTime = sampleTime &+ Self.samplesPerFrame
        if pendingFrameCount >= framesPerPES {
            writePending(to: &out)
        }
        return out
    }

    /// Writes the PES packet being filled, if any: the end of the stream.
    public mutating func flush() -> [UInt8] {
        var out: [UInt8] = []
        writePending(to: &out)
        return out
    }

    /// The PTS of a frame at `sampleTime`, before the modulo: the time in 90 kHz units, rounded
    /// to the nearest, plus ``presentationDelay``. Wrapping arithmetic keeps it right modulo 2^33
    /// for any input.
    public func presentationTime(sampleTime: Int64) -> Int64 {
        let rate = Int64(sampleRate)
        var whole = sampleTime / rate
        var part = sampleTime % rate
        if part < 0 {
            whole -= 1
            part += rate
        }
        return whole &* MPEGTS.timestampFrequency &+ (part * MPEGTS.timestampFrequency + rate / 2) / rate &+ Self.presentationDelay
    }

    // MARK: - Packets

    private mutating func writePending(to out: inout [UInt8]) {
        guard pendingFrameCount > 0 else { return }
        let time = presentationTime(sampleTime: pendingStart)
        let clock = time &- Self.clockLead
        var discontinuity = false
        if let last = lastClock {
            let gap = clock &- last
            if gap < 0 || gap > Self.longestFilledGap {
                discontinuity = true
            } else if gap > Self.maximumClockInterval {
                // 2.7.2: PCR-only packets (adaptation_field_control 10, the counter unchanged).
                for step in 1...((gap - 1) / Self.maximumClockInterval) {
                    let fill = ProgramClockReference(base: last &+ step * Self.maximumClockInterval)
                    TransportPacket(pid: Self.audioPID, continuityCounter: audioCounter &- 1,
                                    adaptationField: AdaptationField(programClockReference: fill)).append(to: &out)
                }
            }
        }
        lastClock = clock
        if tablesWrittenSincePES {
            lastTablesTime = time
        } else if lastTablesTime.map({ time &- $0 >= Self.programTableInterval || time < $0 }) ?? true {
            out += programTables()
            lastTablesTime = time
        }
        tablesWrittenSincePES = false

        let pes = PESPacket(streamID: MPEGTS.firstAudioStreamID, dataAlignmentIndicator: true, presentationTime: time,
                            payload: pendingFrames).bytes
        pendingFrames.removeAll(keepingCapacity: true)
        pendingFrameCount = 0
        out.reserveCapacity(out.count + (pes.count / 176 + 1) * MPEGTS.packetSize)
        var position = 0
        var first = true
        while position < pes.count {
            var field: AdaptationField?
            if first {
                field = AdaptationField(discontinuityIndicator: discontinuity, randomAccessIndicator: true,
                                        programClockReference: ProgramClockReference(base: clock))
            }
            let capacity = TransportPacket.payloadCapacity(adaptationFieldBytes: field.map { 1 + $0.minimumLength } ?? 0)
            let end = min(pes.count, position + capacity)
            TransportPacket(pid: Self.audioPID, payloadUnitStartIndicator: first, continuityCounter: audioCounter,
                            adaptationField: field, payload: pes[position..<end]).append(to: &out)
            audioCounter = (audioCounter &+ 1) & 0x0F
            position = end
            first = false
        }
    }

    /// One PSI section in one packet: `pointer_field` 0, the section, 0xFF to the end (2.4.4.1).
    private static func appendSection(_ section: PSISection, pid: UInt16, counter: inout UInt8, to out: inout [UInt8]) {
        var payload: [UInt8] = [0x00]
        payload += section.bytes
        payload += repeatElement(0xFF, count: TransportPacket.payloadCapacity(adaptationFieldBytes: 0) - payload.count)
        TransportPacket(pid: pid, payloadUnitStartIndicator: true, continuityCounter: counter, payload: payload[...]).append(to: &out)
        counter = (counter &+ 1) & 0x0F
    }
}
