public import MediaCore

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

    /// The `ics_info()` of the first channel of the first element of `rawDataBlock` (AAC-LC: a
    /// single channel element, a channel pair element or an LFE); `nil` when the block starts
    /// with another element or is too short.
    public init?(firstChannelOf rawDataBlock: [UInt8]) {
        var reader = BitReader(rawDataBlock)
        do {
            let elementID = try reader.readBits(3)
            _ = try reader.readBits(4)   // element_instance_tag
            switch elementID {
            case 0, 3:   // ID_SCE, ID_LFE: individual_channel_stream(0): global_gain, then ics_info
                _ = try reader.readBits(8)
            case 1:      // ID_CPE: common_window, then ics_info, or the first channel's stream
                if try reader.readFlag() == false { _ = try reader.readBits(8) }
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
