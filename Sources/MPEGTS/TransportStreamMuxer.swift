public import AACBitstream
internal import AudioBitstreams
public import MediaCore

/// Writes an audio elementary stream as an MPEG-2 transport stream (ISO/IEC 13818-1): one
/// program with one audio stream, what an SRT publisher sends — AAC carried as ADTS, MP3 frames
/// as they are, or Opus packets each behind its control header.
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
/// | `stream_type` | AAC: 0x0F, ISO/IEC 13818-7 audio in ADTS (2.4.4.9, table 2-34); MP3: 0x03 (MPEG-1), 0x04 below 32 kHz; Opus: 0x06 |
/// | `stream_id` | 0xC0 (2.4.3.7, table 2-22); Opus: 0xBD, `private_stream_1` |
///
/// Opus follows the Opus-in-MPEG-TS draft (ETSI TS, v0.1.3, published by Xiph): the PMT gives
/// the stream a registration descriptor (tag 0x05, `Opus`) and an extension descriptor (tag
/// 0x7F, `extension_descriptor_tag` 0x80) whose `channel_config_code` is the channel count (1 or
/// 2, mapping family 0). Each packet in a PES packet follows an `opus_control_header`: the
/// prefix 0x3FF, the trim flags, `au_size` in 0xFF-continued bytes, and on the first packets a
/// `start_trim` that together drop the pre-skip.
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
/// Each AAC frame gets an ADTS header (``/AACBitstream/ADTSHeader``, 13818-7, 6.2) and frames are grouped into PES
/// packets of ``framesPerPES`` frames (fewer when a packet would exceed what `PES_packet_length`
/// counts, or when the timestamps are not contiguous). Every PES packet has a PTS and
/// `data_alignment_indicator` (each starts with a syncword); the first TS packet of each has
/// `random_access_indicator` (an AAC or MP3 frame, an Opus packet, decodes from there with the
/// pre-roll a decoder tolerates losing) and the PCR; the last is
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

    /// How the stream's access units are carried.
    enum Carriage: Sendable {
        /// AAC raw data blocks, each behind an ADTS header made from this one.
        case adts(ADTSHeader)
        /// MP3 frames as they are (each has its header), lasting this many samples.
        case mpegAudio(samplesPerFrame: Int64)
        /// Opus packets, each behind an `opus_control_header`; the samples of the stream before
        /// `preSkip` (its first, from sample time 0) are trimmed from the packets that hold them,
        /// so a muxer made again for a reconnect mid-stream trims nothing.
        case opus(preSkip: Int)
    }

    /// The rate the timestamps of ``write(frame:sampleTime:)`` count in: AAC's sampling
    /// frequency (the one the ADTS headers say), MP3's, or Opus's 48 kHz.
    public let sampleRate: Int
    /// The most frames in one PES packet.
    public let framesPerPES: Int
    /// The PAT every ``programTables()`` writes.
    public let programAssociationTable: ProgramAssociationTable
    /// The PMT every ``programTables()`` writes.
    public private(set) var programMapTable: ProgramMapTable
    /// The PID of the timed ID3 stream, once ``carryTimedMetadata()`` added it.
    public static let metadataPID: UInt16 = 0x102
    /// `stream_type` 0x15: metadata carried in PES packets (ISO/IEC 13818-1 2.4.4.9, table 2-34).
    public static let metadataStreamType: UInt8 = 0x15
    private var metadataCounter: UInt8 = 0
    /// Whether the PMT lists the timed ID3 stream.
    public private(set) var carriesTimedMetadata = false

    private var carriage: Carriage
    /// The PES packets' `stream_id`.
    private let streamID: UInt8
    private var associationCounter: UInt8 = 0
    private var mapCounter: UInt8 = 0
    private var audioCounter: UInt8 = 0
    /// Access units (with their ADTS or control headers) waiting to become a PES packet, and how many.
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

    /// The default ``framesPerPES`` at `sampleRate` for frames of `frameLength` samples: as
    /// many frames as last 0.1 s (the PCR and table interval), at least 1 and at most 5 — 4 AAC
    /// frames at 44.1 and 48 kHz (93 and 85 ms), 3 of MP3's 1152 at 44.1 kHz (4 at 48 kHz), 5
    /// of Opus's 960.
    public static func defaultFramesPerPES(sampleRate: Int, frameLength: Int = Int(samplesPerFrame)) -> Int {
        guard sampleRate > 0, frameLength > 0 else { return 1 }
        return min(5, max(1, sampleRate / 10 / frameLength))
    }

    /// A muxer for the AAC stream `audioSpecificConfig` describes.
    ///
    /// - Parameters:
    ///   - audioSpecificConfig: the stream's configuration (ISO/IEC 14496-3 1.6.2.1).
    ///   - framesPerPES: the most frames in one PES packet (at least 1); by default
    ///     ``defaultFramesPerPES(sampleRate:frameLength:)``.
    /// - Throws: ``TransportStreamError/adts(_:)`` when ADTS cannot describe the configuration.
    public init(audioSpecificConfig: AudioSpecificConfig, framesPerPES: Int? = nil) throws(TransportStreamError) {
        let template: ADTSHeader
        do {
            template = try ADTSHeader(audioSpecificConfig: audioSpecificConfig, frameLength: 7)
        } catch {
            throw .adts(error)
        }
        try self.init(carriage: .adts(template), sampleRate: template.sampleRate ?? audioSpecificConfig.samplingFrequency,
                      streamType: MPEGTS.adtsAudioStreamType, framesPerPES: framesPerPES)
    }

    /// A muxer for the stream `format` describes: AAC (its AudioSpecificConfig), MP3 (frames of
    /// 1152 samples at 32–48 kHz, else 576), or Opus (its `OpusHead`: one or two channels, the
    /// pre-skip trimmed), timed at `format`'s rate (Opus: 48 kHz).
    ///
    /// - Throws: ``TransportStreamError/unsupportedStream(_:)`` for another codec or Opus of more
    ///   than two channels; ``TransportStreamError/adts(_:)`` for AAC that ADTS cannot describe.
    public init(format: EncodedAudioFormat, framesPerPES: Int? = nil) throws(TransportStreamError) {
        switch format.codec {
        case .aac:
            let config: AudioSpecificConfig
            do { config = try AudioSpecificConfig(bytes: format.decoderConfiguration) } catch {
                throw .unsupportedStream("its AudioSpecificConfig does not parse: \(error)")
            }
            try self.init(audioSpecificConfig: config, framesPerPES: framesPerPES)
        case .mp3:
            guard format.sampleRate > 0 else { throw .unsupportedStream("MP3 without a sample rate") }
            let lower = format.sampleRate < 32000
            try self.init(carriage: .mpegAudio(samplesPerFrame: lower ? 576 : 1152), sampleRate: format.sampleRate,
                          streamType: lower ? MPEGTS.mpeg2AudioStreamType : MPEGTS.mpeg1AudioStreamType, framesPerPES: framesPerPES)
        case .opus:
            let head: OpusHeader
            do { head = try OpusHeader(bytes: format.decoderConfiguration) } catch {
                throw .unsupportedStream("its OpusHead does not parse: \(error)")
            }
            guard (1...2).contains(head.channelCount), head.mappingFamily == 0 else {
                throw .unsupportedStream("Opus in MPEG-TS is carried here for 1 or 2 channels of mapping family 0, not \(head.channelCount) "
                                         + "of family \(head.mappingFamily)")
            }
            // Registration (tag 0x05, `Opus`) and the Opus extension (tag 0x7F, 0x80, channel_config_code).
            let descriptors: [UInt8] = [0x05, 4] + Array("Opus".utf8) + [0x7F, 2, 0x80, UInt8(head.channelCount)]
            try self.init(carriage: .opus(preSkip: head.preSkip), sampleRate: 48000, streamType: MPEGTS.privateDataStreamType,
                          descriptors: descriptors, streamID: MPEGTS.privateStream1ID, framesPerPES: framesPerPES)
        default:
            throw .unsupportedStream("MPEG-TS here carries AAC, MP3 and Opus, not \(format.codec)")
        }
    }

    private init(carriage: Carriage, sampleRate: Int, streamType: UInt8, descriptors: [UInt8] = [], streamID: UInt8 = MPEGTS.firstAudioStreamID,
                 framesPerPES: Int?) throws(TransportStreamError) {
        self.carriage = carriage
        self.sampleRate = sampleRate
        self.streamID = streamID
        let length: Int = switch carriage {
        case .adts: Int(Self.samplesPerFrame)
        case .mpegAudio(let samples): Int(samples)
        case .opus: 960
        }
        self.framesPerPES = max(1, framesPerPES ?? Self.defaultFramesPerPES(sampleRate: sampleRate, frameLength: length))
        programAssociationTable = ProgramAssociationTable(
            transportStreamID: Self.transportStreamID,
            programs: [.init(programNumber: Self.programNumber, pid: Self.programMapPID)])
        programMapTable = ProgramMapTable(
            programNumber: Self.programNumber, pcrPID: Self.audioPID,
            streams: [.init(streamType: streamType, pid: Self.audioPID, descriptors: descriptors)])
    }

    /// Adds a timed ID3 stream to the program, as Apple's "Timed Metadata for HTTP Live
    /// Streaming" 2 describes (ISO/IEC 13818-1 2.6.58–2.6.61): in the PMT's program info a
    /// `metadata_pointer_descriptor` (tag 0x25) and, for the stream (PID ``metadataPID``,
    /// `stream_type` 0x15), a `metadata_descriptor` (tag 0x26), both of format `ID3 `
    /// (`metadata_application_format` and `metadata_format` 0xFFFF/0xFF with the identifier
    /// `ID3 `). Call before the first ``programTables()``; ``write(timedMetadata:sampleTime:)``
    /// then carries tags.
    public mutating func carryTimedMetadata() {
        guard !carriesTimedMetadata else { return }
        carriesTimedMetadata = true
        let id3: [UInt8] = Array("ID3 ".utf8)
        let format = [0xFF, 0xFF] + id3 + [0xFF] + id3 + [0x00]
        // metadata_locator_record_flag 0, MPEG_carriage_flags 0 (the same transport stream), reserved 11111.
        let pointer: [UInt8] = [0x25, UInt8(format.count + 3)] + format + [0x1F, UInt8(Self.programNumber >> 8), UInt8(Self.programNumber & 0xFF)]
        // decoder_config_flags 000, DSM-CC_flag 0, reserved 1111.
        let descriptor: [UInt8] = [0x26, UInt8(format.count + 1)] + format + [0x0F]
        programMapTable = ProgramMapTable(
            programNumber: programMapTable.programNumber, versionNumber: programMapTable.versionNumber, pcrPID: programMapTable.pcrPID,
            programDescriptors: programMapTable.programDescriptors + pointer,
            streams: programMapTable.streams + [.init(streamType: Self.metadataStreamType, pid: Self.metadataPID, descriptors: descriptor)])
    }

    /// One ID3 tag at `sampleTime` as a PES packet of its own on the timed ID3 stream
    /// (`stream_id` 0xBD, private_stream_1; its PTS the audio's at that time; data aligned).
    /// Nothing unless ``carryTimedMetadata()`` was called.
    public mutating func write(timedMetadata tag: [UInt8], sampleTime: Int64) -> [UInt8] {
        guard carriesTimedMetadata, !tag.isEmpty, tag.count <= PESPacket.maximumPayloadLengthWithPresentationTime else { return [] }
        let pes = PESPacket(streamID: MPEGTS.privateStream1ID, dataAlignmentIndicator: true, presentationTime: presentationTime(sampleTime: sampleTime),
                            payload: tag).bytes
        var out: [UInt8] = []
        var position = 0
        while position < pes.count {
            let end = min(pes.count, position + TransportPacket.payloadCapacity(adaptationFieldBytes: 0))
            TransportPacket(pid: Self.metadataPID, payloadUnitStartIndicator: position == 0, continuityCounter: metadataCounter,
                            payload: pes[position..<end]).append(to: &out)
            metadataCounter = (metadataCounter &+ 1) & 0x0F
            position = end
        }
        return out
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

    /// Adds one access unit that starts at `sampleTime` (PCM frames at ``sampleRate``): an AAC
    /// raw data block (no ADTS header), an MP3 frame, or an Opus packet; returns the packets of
    /// any PES packet it completes — none while a PES packet is being filled.
    ///
    /// A frame whose time does not follow the previous one (its length later: 1024 samples for
    /// AAC, the frame's for MP3, the packet's TOC for Opus, RFC 6716 3.1) first ends the PES
    /// packet being filled: within a PES packet, times are implied by the frames' lengths.
    ///
    /// - Throws: ``TransportStreamError/adts(_:)`` for an AAC frame longer than an ADTS frame
    ///   holds (8184 bytes); ``TransportStreamError/unsupportedStream(_:)`` for an empty Opus
    ///   packet or one whose TOC is invalid; nothing is written then.
    public mutating func write(frame: some Collection<UInt8>, sampleTime: Int64) throws(TransportStreamError) -> [UInt8] {
        var unit: [UInt8]
        let length: Int64
        switch carriage {
        case .adts(var header):
            header.frameLength = 7 + frame.count
            do { unit = try header.serialized() } catch { throw .adts(error) }
            unit += frame
            length = Self.samplesPerFrame
        case .mpegAudio(let samples):
            unit = Array(frame)
            length = samples
        case .opus(let preSkip):
            guard let samples = OpusPacket.sampleCount(frame), samples > 0 else {
                throw .unsupportedStream("an Opus packet of \(frame.count) bytes without a valid TOC (RFC 6716 3.1)")
            }
            let trim = Int(max(0, min(Int64(samples), Int64(preSkip) - max(0, sampleTime))))
            unit = Self.opusControlHeader(size: frame.count, startTrim: trim) + frame
            length = Int64(samples)
        }
        var out: [UInt8] = []
        if pendingFrameCount > 0,
           sampleTime != nextSampleTime || pendingFrames.count + unit.count > PESPacket.maximumPayloadLengthWithPresentationTime {
            writePending(to: &out)
        }
        if pendingFrameCount == 0 {
            pendingStart = sampleTime
        }
        pendingFrames += unit
        pendingFrameCount += 1
        nextSampleTime = sampleTime &+ length
        if pendingFrameCount >= framesPerPES {
            writePending(to: &out)
        }
        return out
    }

    /// An `opus_control_header` (the Opus-in-MPEG-TS draft, 5.1): `control_header_prefix`
    /// 0x3FF, `start_trim_flag`, `end_trim_flag` 0, `control_extension_flag` 0, two reserved
    /// bits; `au_size` as bytes of 0xFF then the rest; with a trim, `start_trim` in 13 bits
    /// behind 3 reserved ones. Reserved bits are written 0, as FFmpeg writes them.
    static func opusControlHeader(size: Int, startTrim: Int) -> [UInt8] {
        var header: [UInt8] = [0x7F, 0xE0 | (startTrim > 0 ? 0x10 : 0)]
        var left = size
        while left >= 255 {
            header.append(0xFF)
            left -= 255
        }
        header.append(UInt8(left))
        if startTrim > 0 { header += [UInt8(startTrim >> 8 & 0x1F), UInt8(truncatingIfNeeded: startTrim)] }
        return header
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

        let pes = PESPacket(streamID: streamID, dataAlignmentIndicator: true, presentationTime: time,
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
