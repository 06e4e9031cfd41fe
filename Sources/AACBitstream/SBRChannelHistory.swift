/// What time-delta coding of one SBR channel refers to (ISO/IEC 14496-3, 4.5.2.8 `bs_df_env`,
/// `bs_df_noise`; 4.6.18.3.3): the previous frame's last envelope with its frequency
/// resolution, and its last noise floor.
///
/// `SBRChannelHistory()` is no history: a stream's first frame, or the first after the
/// frequency tables changed. Time-delta coding of the first envelope or noise floor is then not
/// allowed (the writer throws, the parser refuses it, ``SBRExtensionData/chooseDeltaCoding(tables:history:independent:)``
/// never picks it). Values coded as balance (a coupled second channel) and as level do not mix:
/// time-delta coding across a change of `bs_coupling` is refused the same way.
public struct SBRChannelHistory: Sendable, Hashable {
    /// The last envelope of the previous frame, `nil` for none.
    public var envelope: [Int]?
    /// Whether that envelope had high frequency resolution.
    public var highResolution: Bool
    /// The last noise floor of the previous frame, `nil` for none.
    public var noiseFloor: [Int]?
    /// Whether those values were balance values (channel 1 of a coupled pair).
    public var isBalance: Bool

    /// No history.
    public init() {
        self.envelope = nil
        self.highResolution = false
        self.noiseFloor = nil
        self.isBalance = false
    }

    /// A history of the given last values.
    public init(envelope: [Int]?, highResolution: Bool, noiseFloor: [Int]?, isBalance: Bool = false) {
        self.envelope = envelope
        self.highResolution = highResolution
        self.noiseFloor = noiseFloor
        self.isBalance = isBalance
    }
}
