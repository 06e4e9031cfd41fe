/// A User Control Message's event (RTMP 1.0 6.2 and 7.1.7): a 16-bit event type, then its data.
public enum RTMPUserControlEvent: Sendable, Hashable {
    /// Stream Begin (0): the stream `id` became functional.
    case streamBegin(UInt32)
    /// Stream EOF (1): playback of stream `id` ended.
    case streamEOF(UInt32)
    /// Stream Dry (2): no more data on stream `id` for now.
    case streamDry(UInt32)
    /// Set Buffer Length (3): the client's buffer for stream `id`, in milliseconds.
    case setBufferLength(streamID: UInt32, milliseconds: UInt32)
    /// Stream Is Recorded (4).
    case streamIsRecorded(UInt32)
    /// Ping Request (6): the server's time, to be echoed in a ``pingResponse(_:)``.
    case pingRequest(UInt32)
    /// Ping Response (7): the time of the Ping Request answered.
    case pingResponse(UInt32)
    /// Any other event type, with its data.
    case other(type: UInt16, data: [UInt8])

    /// The event as a User Control Message's payload.
    public var payload: [UInt8] {
        func be32(_ value: UInt32) -> [UInt8] {
            [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
             UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
        }
        func event(_ type: UInt16, _ data: [UInt8]) -> [UInt8] {
            [UInt8(type >> 8), UInt8(type & 0xFF)] + data
        }
        switch self {
        case .streamBegin(let id): return event(0, be32(id))
        case .streamEOF(let id): return event(1, be32(id))
        case .streamDry(let id): return event(2, be32(id))
        case .setBufferLength(let id, let milliseconds): return event(3, be32(id) + be32(milliseconds))
        case .streamIsRecorded(let id): return event(4, be32(id))
        case .pingRequest(let time): return event(6, be32(time))
        case .pingResponse(let time): return event(7, be32(time))
        case .other(let type, let data): return event(type, data)
        }
    }

    /// The event of a User Control Message's `payload`.
    ///
    /// - Throws: ``RTMPError/malformedControlMessage(type:length:)`` when the payload is shorter
    ///   than the event's fields.
    public init(payload: [UInt8]) throws(RTMPError) {
        func be32(_ at: Int) throws(RTMPError) -> UInt32 {
            guard payload.count >= at + 4 else { throw .malformedControlMessage(type: RTMPMessageType.userControl.rawValue, length: payload.count) }
            return payload[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard payload.count >= 2 else { throw .malformedControlMessage(type: RTMPMessageType.userControl.rawValue, length: payload.count) }
        let type = UInt16(payload[0]) << 8 | UInt16(payload[1])
        switch type {
        case 0: self = .streamBegin(try be32(2))
        case 1: self = .streamEOF(try be32(2))
        case 2: self = .streamDry(try be32(2))
        case 3: self = .setBufferLength(streamID: try be32(2), milliseconds: try be32(6))
        case 4: self = .streamIsRecorded(try be32(2))
        case 6: self = .pingRequest(try be32(2))
        case 7: self = .pingResponse(try be32(2))
        default: self = .other(type: type, data: Array(payload.dropFirst(2)))
        }
    }
}
