/// A protocol control message (RTMP 1.0 5.4) or a User Control Message (6.2): what the two
/// peers say about the connection itself, on chunk stream 2 and message stream 0.
public enum RTMPControlMessage: Sendable, Hashable {
    /// Set Chunk Size (5.4.1): the sender's chunks carry at most this many payload bytes from now
    /// on (1…2³¹−1; the top bit is 0).
    case setChunkSize(UInt32)
    /// Abort Message (5.4.2): drop the partly received message of this chunk stream.
    case abort(chunkStreamID: UInt32)
    /// Acknowledgement (5.4.3): the bytes received so far (wrapping at 2³²).
    case acknowledgement(sequenceNumber: UInt32)
    /// Window Acknowledgement Size (5.4.4): acknowledge after every so many bytes received.
    case windowAcknowledgementSize(UInt32)
    /// Set Peer Bandwidth (5.4.5): limit the output to this window; `limitType` 0 hard, 1 soft,
    /// 2 dynamic.
    case setPeerBandwidth(windowSize: UInt32, limitType: UInt8)
    /// User Control Message (6.2, 7.1.7).
    case userControl(RTMPUserControlEvent)

    /// The message carrying this control (message stream 0, timestamp 0).
    public var message: RTMPMessage {
        func be32(_ value: UInt32) -> [UInt8] {
            [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
             UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
        }
        switch self {
        case .setChunkSize(let size): return RTMPMessage(type: .setChunkSize, payload: be32(size & 0x7FFF_FFFF))
        case .abort(let id): return RTMPMessage(type: .abort, payload: be32(id))
        case .acknowledgement(let number): return RTMPMessage(type: .acknowledgement, payload: be32(number))
        case .windowAcknowledgementSize(let size): return RTMPMessage(type: .windowAcknowledgementSize, payload: be32(size))
        case .setPeerBandwidth(let size, let limit): return RTMPMessage(type: .setPeerBandwidth, payload: be32(size) + [limit])
        case .userControl(let event): return RTMPMessage(type: .userControl, payload: event.payload)
        }
    }

    /// The control message `message` carries, or `nil` when its type is not one of 5.4 or 6.2.
    ///
    /// - Throws: ``RTMPError/malformedControlMessage(type:length:)`` for a payload shorter than
    ///   its fields; ``RTMPError/invalidChunkSize(_:)`` for a chunk size of 0 or with its top bit set.
    public init?(_ message: RTMPMessage) throws(RTMPError) {
        let payload = message.payload
        func be32() throws(RTMPError) -> UInt32 {
            guard payload.count >= 4 else { throw .malformedControlMessage(type: message.type.rawValue, length: payload.count) }
            return payload[0..<4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        switch message.type {
        case .setChunkSize:
            let size = try be32()
            guard size >= 1, size <= 0x7FFF_FFFF else { throw .invalidChunkSize(size) }
            self = .setChunkSize(size)
        case .abort: self = .abort(chunkStreamID: try be32())
        case .acknowledgement: self = .acknowledgement(sequenceNumber: try be32())
        case .windowAcknowledgementSize: self = .windowAcknowledgementSize(try be32())
        case .setPeerBandwidth:
            let size = try be32()
            guard payload.count >= 5 else { throw .malformedControlMessage(type: message.type.rawValue, length: payload.count) }
            self = .setPeerBandwidth(windowSize: size, limitType: payload[4])
        case .userControl: self = .userControl(try RTMPUserControlEvent(payload: payload))
        default: return nil
        }
    }
}
