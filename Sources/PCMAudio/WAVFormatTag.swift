/// The `wFormatTag` values and SubFormat GUIDs this module reads and writes (Microsoft
/// mmreg.h / ksmedia.h; RFC 2361 lists the registered tags).
enum WAVFormatTag {
    /// WAVE_FORMAT_PCM: integer PCM, 8-bit unsigned, wider signed.
    static let pcm: UInt16 = 0x0001
    /// WAVE_FORMAT_IEEE_FLOAT: 32- or 64-bit IEEE 754 float.
    static let ieeeFloat: UInt16 = 0x0003
    /// WAVE_FORMAT_EXTENSIBLE: the real format is in the SubFormat GUID of WAVEFORMATEXTENSIBLE.
    static let extensible: UInt16 = 0xFFFE

    /// Bytes 4 to 15 of KSDATAFORMAT_SUBTYPE_PCM / _IEEE_FLOAT
    /// (`0000000x-0000-0010-8000-00AA00389B71`): the first four bytes are the format tag.
    static let mediaSubtypeGUIDTail: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
    /// Bytes 4 to 15 of the ambisonic (B-format) SubFormat GUIDs (`0000000x-0721-11D3-8644-C8C1CA000000`),
    /// which FFmpeg also reads as PCM or float.
    static let ambisonicGUIDTail: [UInt8] = [0x21, 0x07, 0xD3, 0x11, 0x86, 0x44, 0xC8, 0xC1, 0xCA, 0x00, 0x00, 0x00]
}
