/// A message type id (RTMP 1.0 5.3.1.2, 5.4, 7.1): what a message's payload is.
///
/// A struct over the byte, so that a type this module does not know still reads.
public struct RTMPMessageType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The type id byte.
    public var rawValue: UInt8

    /// The type `rawValue`.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Set Chunk Size (5.4.1).
    public static let setChunkSize = RTMPMessageType(rawValue: 1)
    /// Abort Message (5.4.2).
    public static let abort = RTMPMessageType(rawValue: 2)
    /// Acknowledgement (5.4.3).
    public static let acknowledgement = RTMPMessageType(rawValue: 3)
    /// User Control Message (6.2, 7.1.7).
    public static let userControl = RTMPMessageType(rawValue: 4)
    /// Window Acknowledgement Size (5.4.4).
    public static let windowAcknowledgementSize = RTMPMessageType(rawValue: 5)
    /// Set Peer Bandwidth (5.4.5).
    public static let setPeerBandwidth = RTMPMessageType(rawValue: 6)
    /// Audio Message (7.1.4): an FLV AUDIODATA tag body.
    public static let audio = RTMPMessageType(rawValue: 8)
    /// Video Message (7.1.5).
    public static let video = RTMPMessageType(rawValue: 9)
    /// Data Message in AMF3 (7.1.2).
    public static let dataAMF3 = RTMPMessageType(rawValue: 15)
    /// Shared Object Message in AMF3 (7.1.3).
    public static let sharedObjectAMF3 = RTMPMessageType(rawValue: 16)
    /// Command Message in AMF3 (7.1.1).
    public static let commandAMF3 = RTMPMessageType(rawValue: 17)
    /// Data Message in AMF0 (7.1.2): `@setDataFrame`, `onMetaData`.
    public static let dataAMF0 = RTMPMessageType(rawValue: 18)
    /// Shared Object Message in AMF0 (7.1.3).
    public static let sharedObjectAMF0 = RTMPMessageType(rawValue: 19)
    /// Command Message in AMF0 (7.1.1): `connect`, `_result`, `onStatus`, …
    public static let commandAMF0 = RTMPMessageType(rawValue: 20)
    /// Aggregate Message (7.1.6).
    public static let aggregate = RTMPMessageType(rawValue: 22)

    /// The type id as a number.
    public var description: String { "\(rawValue)" }
}
