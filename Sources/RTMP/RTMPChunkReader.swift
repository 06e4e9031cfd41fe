/// Puts messages back together from chunks (RTMP 1.0 5.3): the receiving half of a chunk
/// stream, fed with bytes as they arrive.
///
/// - Chunks are cut at the peer's chunk size: 128 until a Set Chunk Size message (5.4.1)
///   arrives, which takes effect for the very next chunk; an Abort Message (5.4.2) drops the
///   partly received message of its chunk stream. Both are still delivered.
/// - Format 1 and 2 headers add their delta to the chunk stream's previous timestamp; a format
///   3 chunk that starts a message adds the previous header's timestamp field again, as FFmpeg
///   does (5.3.1.2.4). Extended timestamps (5.3.1.3) are read after the message header and after
///   every format 3 chunk of a chunk stream whose last header had one.
/// - Bounded: a message longer than ``maximumMessageLength``, more than
///   ``maximumBufferedBytes`` of unfinished messages or more than ``maximumChunkStreams``
///   chunk streams is an error; nothing is allocated for a message before its bytes arrive.
public struct RTMPChunkReader: Sendable {
    /// What a publisher accepts by default: a server sends commands of a few hundred bytes.
    public static let defaultMaximumMessageLength = 1 << 20

    private struct ChunkStream: Sendable {
        var streamID: UInt32 = 0
        var type = RTMPMessageType(rawValue: 0)
        var length = 0
        var timestamp: UInt32 = 0
        var timestampField: UInt32 = 0
        var extended = false
        var payload: [UInt8]?
    }

    /// The peer's chunk size: the most payload bytes in one of its chunks.
    public private(set) var chunkSize = RTMPChunkWriter.defaultChunkSize
    /// The longest message accepted.
    public let maximumMessageLength: Int
    /// The most bytes of unfinished messages kept, over all chunk streams.
    public let maximumBufferedBytes: Int
    /// The most chunk streams kept.
    public let maximumChunkStreams: Int
    /// Bytes given to ``append(_:)`` so far.
    public private(set) var bytesReceived: Int64 = 0

    private var buffer: [UInt8] = []
    private var position = 0
    private var streams: [Int: ChunkStream] = [:]
    private var buffered = 0

    /// A reader that accepts messages up to `maximumMessageLength` bytes, keeps at most
    /// `maximumBufferedBytes` of unfinished messages (by default four messages' worth) and
    /// `maximumChunkStreams` chunk streams.
    public init(maximumMessageLength: Int = RTMPChunkReader.defaultMaximumMessageLength,
                maximumBufferedBytes: Int? = nil, maximumChunkStreams: Int = 1024) {
        self.maximumMessageLength = max(0, maximumMessageLength)
        self.maximumBufferedBytes = maximumBufferedBytes ?? 4 * self.maximumMessageLength
        self.maximumChunkStreams = max(1, maximumChunkStreams)
    }

    /// Adds bytes received from the peer.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if position > 0, position * 2 >= buffer.count {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
        bytesReceived += Int64(bytes.count)
    }

    /// Bytes received but not yet read as chunks (an incomplete chunk).
    public var pendingByteCount: Int { buffer.count - position }

    /// The next complete message, or `nil` until more bytes arrive.
    ///
    /// - Throws: ``RTMPError/messageTooLong(length:limit:)``, ``RTMPError/tooMuchBuffered(bytes:limit:)``,
    ///   ``RTMPError/tooManyChunkStreams(limit:)``, ``RTMPError/chunkStreamWithoutHeader(chunkStreamID:format:)``,
    ///   ``RTMPError/inconsistentChunk(chunkStreamID:)``, ``RTMPError/invalidChunkSize(_:)`` and
    ///   ``RTMPError/malformedControlMessage(type:length:)`` (Set Chunk Size, Abort). After an
    ///   error the reader is not usable.
    public mutating func nextMessage() throws(RTMPError) -> RTMPMessage? {
        while true {
            guard let (message, consumed) = try nextChunk() else { return nil }
            position += consumed
            guard let message else { continue }
            if message.type == .setChunkSize || message.type == .abort {
                switch try RTMPControlMessage(message) {
                case .setChunkSize(let size)?:
                    chunkSize = Int(size)
                case .abort(let id)?:
                    if let dropped = streams[Int(id)]?.payload {
                        buffered -= dropped.count
                        streams[Int(id)]?.payload = nil
                    }
                default:
                    break
                }
            }
            return message
        }
    }

    /// Reads one chunk if all of it has arrived: the message it completes (if any) and the
    /// bytes it took. Nothing changes when it has not.
    private mutating func nextChunk() throws(RTMPError) -> (RTMPMessage?, Int)? {
        var cursor = position
        func byte() -> UInt8? {
            guard cursor < buffer.count else { return nil }
            defer { cursor += 1 }
            return buffer[cursor]
        }
        func bigEndian(_ count: Int) -> UInt32? {
            guard buffer.count - cursor >= count else { return nil }
            defer { cursor += count }
            return buffer[cursor..<(cursor + count)].reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard let first = byte() else { return nil }
        let format = Int(first >> 6)
        var id = Int(first & 0x3F)
        if id == 0 {
            guard let next = byte() else { return nil }
            id = 64 + Int(next)
        } else if id == 1 {
            guard let low = byte(), let high = byte() else { return nil }
            id = 64 + Int(low) + Int(high) * 256
        }
        let known = streams[id]
        guard format == 0 || known != nil else { throw .chunkStreamWithoutHeader(chunkStreamID: id, format: format) }
        if known == nil, streams.count >= maximumChunkStreams { throw .tooManyChunkStreams(limit: maximumChunkStreams) }
        var stream = known ?? ChunkStream()
        let inProgress = stream.payload != nil
        if inProgress, format != 3 { throw .inconsistentChunk(chunkStreamID: id) }

        if format <= 2 {
            guard let field = bigEndian(3) else { return nil }
            stream.timestampField = field
            stream.extended = field == 0xFF_FFFF
        }
        if format <= 1 {
            guard let length = bigEndian(3), let type = byte() else { return nil }
            stream.length = Int(length)
            stream.type = RTMPMessageType(rawValue: type)
        }
        if format == 0 {
            guard let id = bigEndian(4) else { return nil }
            stream.streamID = id.byteSwapped
        }
        if stream.extended {
            guard let value = bigEndian(4) else { return nil }
            // In a format 3 chunk it repeats the value the message header gave.
            if format <= 2 || !inProgress { stream.timestampField = value }
        }
        guard stream.length <= maximumMessageLength else {
            throw .messageTooLong(length: stream.length, limit: maximumMessageLength)
        }
        let have = stream.payload?.count ?? 0
        let count = min(chunkSize, stream.length - have)
        guard buffer.count - cursor >= count else { return nil }

        if !inProgress {
            stream.timestamp = format == 0 ? stream.timestampField : stream.timestamp &+ stream.timestampField
            stream.payload = []
        }
        buffered += count
        guard buffered <= maximumBufferedBytes else { throw .tooMuchBuffered(bytes: buffered, limit: maximumBufferedBytes) }
        stream.payload?.append(contentsOf: buffer[cursor..<(cursor + count)])
        cursor += count
        var message: RTMPMessage?
        if let payload = stream.payload, payload.count == stream.length {
            message = RTMPMessage(type: stream.type, streamID: stream.streamID, timestamp: stream.timestamp, payload: payload)
            buffered -= payload.count
            stream.payload = nil
        }
        streams[id] = stream
        return (message, cursor - position)
    }
}
