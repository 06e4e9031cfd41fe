internal import MediaCore

/// The window of an AAC frame's first channel, from the `ics_info()` of the first element of a
/// raw data block (ISO/IEC 14496-3, 4.4.2.1 Table 4.6 and 4.5.4 `window_sequence`): what a
/// splice of two independently encoded streams must keep compatible, because each frame's
/// windows overlap-add with the next.
public struct ICSInfo: Sendable, Hashable {
    /// `window_sequence` (ISO/IEC 14496-3, Table 4.87).
    public enum WindowSequence: UInt8, Sendable, Hashable {
        /// One long window.
        case onlyLong = 0
        /// A long window turning short: the next frame is ``eightShort``.
        case longStart = 1
        /// Eight short windows.
        case eightShort = 2
        /// A short window turning long, after ``eightShort``.
        case longStop = 3

        /// Whether a frame of this sequence may follow one of `previous`: after a window that
        /// ends long (``onlyLong``, ``longStop``) comes one that starts long (``onlyLong``,
        /// ``longStart``); after one that ends short, one that starts short.
        public func mayFollow(_ previous: WindowSequence) -> Bool {
            let previousEndsLong = previous == .onlyLong || previous == .longStop
            let startsLong = self == .onlyLong || self == .longStart
            return previousEndsLong == startsLong
        }
    }

    /// The window sequence.
    public var windowSequence: WindowSequence
    /// `window_shape`: 0 sine, 1 Kaiser-Bessel derived.
    public var windowShape: UInt8
    /// Whether this window is every channel's: a mono element, or a channel pair with a common
    /// window. A pair without one may window its second channel otherwise (its `ics_info`
    /// follows the first channel's whole stream, which this does not parse).
    public var coversBothChannelsOfPair: Bool

    /// The `ics_info()` of the first channel of the first audio element of `rawDataBlock`
    /// (AAC-LC: a single channel element, a channel pair element or an LFE), after any fill
    /// elements (`ID_FIL`, which libavcodec writes before the audio now and then); `nil` when
    /// the block starts with another element or is too short.
    public init?(firstChannelOf rawDataBlock: [UInt8]) {
        var reader = BitReader(rawDataBlock)
        do {
            var elementID = try reader.readBits(3)
            while elementID == 6 {   // ID_FIL: count (4 bits, 15 = escaped by 8 more), then the bytes
                var count = Int(try reader.readBits(4))
                if count == 15 { count += Int(try reader.readBits(8)) - 1 }
                for _ in 0..<count { _ = try reader.readBits(8) }
                elementID = try reader.readBits(3)
            }
            _ = try reader.readBits(4)   // element_instance_tag
            switch elementID {
            case 0, 3:   // ID_SCE, ID_LFE: individual_channel_stream(0): global_gain, then ics_info
                _ = try reader.readBits(8)
                coversBothChannelsOfPair = true
            case 1:      // ID_CPE: common_window, then ics_info, or the first channel's stream
                let common = try reader.readFlag()
                if !common { _ = try reader.readBits(8) }
                coversBothChannelsOfPair = common
            default:
                return nil
            }
            _ = try reader.readBits(1)   // ics_reserved_bit
            guard let sequence = WindowSequence(rawValue: UInt8(try reader.readBits(2))) else { return nil }
            windowSequence = sequence
            windowShape = UInt8(try reader.readBits(1))
        } catch {
            return nil
        }
    }
}
