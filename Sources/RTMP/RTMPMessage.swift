/// One RTMP message (RTMP 1.0 6.1): its header's fields and its payload, before it is cut into
/// chunks (``RTMPChunkWriter``) or after it is put back together (``RTMPChunkReader``).
public struct RTMPMessage: Sendable, Hashable {
    /// What the payload is.
    public var type: RTMPMessageType
    /// The message stream id (6.1.1): 0 for protocol control and `NetConnection` commands, the
    /// id `createStream` returned for a stream's commands, data and audio.
    public var streamID: UInt32
    /// Milliseconds, wrapping at 2³² (6.1.1; 5.3.1.3 for values of 0xFFFFFF and above).
    public var timestamp: UInt32
    /// The payload.
    public var payload: [UInt8]

    /// A message of `type` on message stream `streamID` at `timestamp` milliseconds.
    public init(type: RTMPMessageType, streamID: UInt32 = 0, timestamp: UInt32 = 0, payload: [UInt8]) {
        self.type = type
        self.streamID = streamID
        self.timestamp = timestamp
        self.payload = payload
    }
}
