/// Cuts messages into chunks (RTMP 1.0 5.3): the sending half of a chunk stream.
///
/// - The basic header (5.3.1.1) takes one, two or three bytes for chunk stream ids 2…63,
///   64…319 and 320…65599.
/// - The first message of a chunk stream, one on another message stream, and one whose
///   timestamp is below the previous one's (a backward step, or the 2³² wrap) get a format 0
///   header with the absolute timestamp; the next on the same chunk stream and message stream a
///   format 1 header (delta, length, type) or, when length and type are the previous ones, a
///   format 2 header (delta only) (5.3.1.2). The rest of a message goes in format 3 chunks.
/// - A timestamp or delta of 0xFFFFFF or more is written as 0xFFFFFF with the 32-bit Extended
///   Timestamp after the message header (5.3.1.3), repeated after every format 3 chunk of the
///   same message, which is what nginx-rtmp, FFmpeg and librtmp read.
/// - Chunks carry at most ``chunkSize`` payload bytes: 128 until ``setChunkSize(_:)`` sends
///   the Set Chunk Size message (5.4.1) and switches.
public struct RTMPChunkWriter: Sendable {
    /// The chunk size every RTMP peer starts with (5.4.1).
    public static let defaultChunkSize = 128
    /// The chunk stream id of protocol control messages (5.4): 2.
    public static let controlChunkStreamID = 2

    private struct Previous: Sendable {
        var streamID: UInt32
        var type: RTMPMessageType
        var length: Int
        var timestamp: UInt32
    }

    /// The most payload bytes in one chunk.
    public private(set) var chunkSize = RTMPChunkWriter.defaultChunkSize
    /// Whether headers of format 1 and 2 are used (otherwise every message starts with format 0).
    public var compressesHeaders: Bool
    private var previous: [Int: Previous] = [:]

    /// A writer at the default chunk size; `compressesHeaders` as described above.
    public init(compressesHeaders: Bool = true) {
        self.compressesHeaders = compressesHeaders
    }

    /// The Set Chunk Size message (5.4.1) for `size` (1…2³¹−1), on chunk stream 2, after which
    /// this writer cuts chunks of `size`.
    public mutating func setChunkSize(_ size: Int) -> [UInt8] {
        let size = min(max(size, 1), 0x7FFF_FFFF)
        let bytes = write(RTMPControlMessage.setChunkSize(UInt32(size)).message, chunkStreamID: Self.controlChunkStreamID)
        chunkSize = size
        return bytes
    }

    /// `message` as chunks on chunk stream `chunkStreamID` (2…65599); its payload fits the
    /// message header's 24-bit length (less than 16 MiB).
    public mutating func write(_ message: RTMPMessage, chunkStreamID: Int) -> [UInt8] {
        precondition((2...65599).contains(chunkStreamID), "chunk stream ids are 2…65599 (RTMP 1.0 5.3.1.1)")
        precondition(message.payload.count <= 0xFF_FFFF, "an RTMP message is shorter than 16 MiB (RTMP 1.0 5.3.1.2.1)")
        let length = message.payload.count
        var format = 0
        var field = message.timestamp
        if compressesHeaders, let last = previous[chunkStreamID], last.streamID == message.streamID, message.timestamp >= last.timestamp {
            field = message.timestamp - last.timestamp
            format = last.type == message.type && last.length == length ? 2 : 1
        }
        previous[chunkStreamID] = Previous(streamID: message.streamID, type: message.type, length: length, timestamp: message.timestamp)
        let extended = field >= 0xFF_FFFF

        var bytes: [UInt8] = []
        bytes.reserveCapacity(length + 18 + (length / chunkSize) * (extended ? 7 : 3))
        Self.appendBasicHeader(format: format, chunkStreamID: chunkStreamID, to: &bytes)
        Self.append(extended ? 0xFF_FFFF : field, byteCount: 3, to: &bytes)
        if format <= 1 {
            Self.append(UInt32(length), byteCount: 3, to: &bytes)
            bytes.append(message.type.rawValue)
        }
        if format == 0 {
            // The message stream id is little-endian (5.3.1.2.1).
            for shift in stride(from: 0, through: 24, by: 8) { bytes.append(UInt8(truncatingIfNeeded: message.streamID >> UInt32(shift))) }
        }
        if extended { Self.append(field, byteCount: 4, to: &bytes) }
        var offset = 0
        repeat {
            if offset > 0 {
                Self.appendBasicHeader(format: 3, chunkStreamID: chunkStreamID, to: &bytes)
                if extended { Self.append(field, byteCount: 4, to: &bytes) }
            }
            let end = min(offset + chunkSize, length)
            bytes += message.payload[offset..<end]
            offset = end
        } while offset < length
        return bytes
    }

    /// Appends the basic header (5.3.1.1) of `format` on `chunkStreamID`.
    private static func appendBasicHeader(format: Int, chunkStreamID: Int, to bytes: inout [UInt8]) {
        let high = UInt8(format) << 6
        switch chunkStreamID {
        case 2...63:
            bytes.append(high | UInt8(chunkStreamID))
        case 64...319:
            bytes += [high, UInt8(chunkStreamID - 64)]
        default:
            let value = chunkStreamID - 64
            bytes += [high | 1, UInt8(value & 0xFF), UInt8(value >> 8)]
        }
    }

    private static func append(_ value: UInt32, byteCount: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }
}
