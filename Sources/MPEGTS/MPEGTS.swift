/// MPEG-2 transport streams (ISO/IEC 13818-1) carrying audio: a muxer (``TransportStreamMuxer``)
/// and a bounded reader (``TransportStreamReader``), and the constants of the syntax they share.
///
/// What the module writes is one program with one audio elementary stream, what an SRT
/// publisher sends: AAC as ADTS (`stream_type` 0x0F), MP3 (0x03, or 0x04 below 32 kHz), or
/// Opus (0x06 with the `Opus` registration, per the Opus-in-MPEG-TS ETSI draft that Xiph
/// publishes, v0.1.3); 188-byte transport packets, 7 to an SRT message (1316 bytes).
public enum MPEGTS {
    /// Bytes in a transport packet (ISO/IEC 13818-1, 2.4.3.2).
    public static let packetSize = 188
    /// `sync_byte`, 0x47, the first byte of every transport packet (2.4.3.2).
    public static let syncByte: UInt8 = 0x47
    /// The PID of the program association table (2.4.4.3, table 2-3).
    public static let programAssociationPID: UInt16 = 0x0000
    /// The PID of null packets, which carry nothing (2.4.3.3, table 2-3).
    public static let nullPacketPID: UInt16 = 0x1FFF
    /// `stream_type` 0x0F: ISO/IEC 13818-7 audio with ADTS transport syntax (2.4.4.9, table 2-34).
    public static let adtsAudioStreamType: UInt8 = 0x0F
    /// `stream_type` 0x03: ISO/IEC 11172-3 audio (MPEG-1 Layer III at 32–48 kHz; table 2-34).
    public static let mpeg1AudioStreamType: UInt8 = 0x03
    /// `stream_type` 0x04: ISO/IEC 13818-3 audio (the lower sampling frequencies, 16–24 kHz, and
    /// MPEG 2.5's 8–12 kHz as FFmpeg labels them; table 2-34).
    public static let mpeg2AudioStreamType: UInt8 = 0x04
    /// `stream_type` 0x06: PES packets of private data (table 2-34), Opus's with a registration
    /// descriptor.
    public static let privateDataStreamType: UInt8 = 0x06
    /// `stream_id` 0xBD, `private_stream_1` (table 2-22): Opus's.
    public static let privateStream1ID: UInt8 = 0xBD
    /// `stream_id` 0xC0: the first of the ISO/IEC 13818-3, 11172-3, 13818-7 or 14496-3 audio
    /// streams (2.4.3.7, table 2-22).
    public static let firstAudioStreamID: UInt8 = 0xC0
    /// The system clock's rate, 27 MHz (2.4.2.1): a PCR counts in these.
    public static let systemClockFrequency: Int64 = 27_000_000
    /// The rate of PTS, DTS and PCR bases, 90 kHz (2.4.3.7, 2.4.3.5).
    public static let timestampFrequency: Int64 = 90_000
    /// A PTS, DTS or PCR base is 33 bits: the values wrap modulo 2^33 (about 26.5 hours).
    public static let timestampModulus: Int64 = 1 << 33
    /// The longest a PSI section may be, `section_length` (at most 1021) plus the 3 bytes before
    /// it (2.4.4.3, 2.4.4.8).
    public static let maximumSectionLength = 1024
}
