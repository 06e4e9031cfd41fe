/// `dwChannelMask` of WAVEFORMATEXTENSIBLE: which speaker each channel feeds, one bit per
/// speaker position in the order of the channels (Microsoft ksmedia.h `SPEAKER_*`).
public enum WAVChannelMask {
    /// SPEAKER_FRONT_LEFT.
    public static let frontLeft: UInt32 = 0x1
    /// SPEAKER_FRONT_RIGHT.
    public static let frontRight: UInt32 = 0x2
    /// SPEAKER_FRONT_CENTER.
    public static let frontCenter: UInt32 = 0x4
    /// SPEAKER_LOW_FREQUENCY.
    public static let lowFrequency: UInt32 = 0x8
    /// SPEAKER_BACK_LEFT.
    public static let backLeft: UInt32 = 0x10
    /// SPEAKER_BACK_RIGHT.
    public static let backRight: UInt32 = 0x20
    /// SPEAKER_BACK_CENTER.
    public static let backCenter: UInt32 = 0x100
    /// SPEAKER_SIDE_LEFT.
    public static let sideLeft: UInt32 = 0x200
    /// SPEAKER_SIDE_RIGHT.
    public static let sideRight: UInt32 = 0x400

    /// The mask FFmpeg writes for `channelCount` channels in its default layout
    /// (`av_channel_layout_default`): mono (FC), stereo, 2.1, 4.0, 5.0, 5.1, 6.1, 7.1; 0 (no
    /// positions) for other counts, as FFmpeg writes for layouts WAV cannot name.
    public static func defaultMask(channelCount: Int) -> UInt32 {
        switch channelCount {
        case 1: frontCenter
        case 2: frontLeft | frontRight
        case 3: frontLeft | frontRight | lowFrequency
        case 4: frontLeft | frontRight | frontCenter | backCenter
        case 5: frontLeft | frontRight | frontCenter | backLeft | backRight
        case 6: frontLeft | frontRight | frontCenter | lowFrequency | backLeft | backRight
        case 7: frontLeft | frontRight | frontCenter | lowFrequency | backCenter | sideLeft | sideRight
        case 8: frontLeft | frontRight | frontCenter | lowFrequency | backLeft | backRight | sideLeft | sideRight
        default: 0
        }
    }
}
