/// MPEG-2 transport streams (ISO/IEC 13818-1) carrying AAC: a muxer (``TransportStreamMuxer``)
/// and a bounded reader (``TransportStreamReader``), and the constants of the syntax they share.
///
/// What the module writes is one program with one AAC elementary stream carried as ADTS
/// (`stream_type` 0x0F), what an SRT publisher sends: 188-byte transport packets, 7 to an SRT
/// message (1316 bytes).
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
