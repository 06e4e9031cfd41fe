public import MediaCore

/// Everything that can be wrong with RTMP bytes or an RTMP exchange: the one error type of the
/// RTMP module.
///
/// A server's refusal (an `_error` answer, an `onStatus` of level `error`) is not an error of
/// this type: ``RTMPPublishSession`` reports it as an event (``RTMPSessionEvent/error(_:)``)
/// with the server's words. These cases are bytes that break the protocol, limits that hostile
/// bytes would cross, and calls made in the wrong state.
public enum RTMPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `structure` ended before a field it needed.
    case truncated(structure: String, BinaryReadError)
    /// An AMF0 type marker (AMF0 spec 2.1) that this decoder does not take: reference (0x07),
    /// unsupported (0x0D), record set, XML, typed object, AMF3 switch, or no marker at all.
    case unsupportedAMF0Marker(UInt8, offset: Int64)
    /// AMF0 values nested deeper than the decoder's limit (objects, arrays).
    case amf0NestingTooDeep(limit: Int, offset: Int64)
    /// An AMF0 object property or ECMA array entry without the object-end marker where the
    /// spec (AMF0 2.5, 2.10) requires it after an empty key.
    case missingAMF0ObjectEnd(offset: Int64)
    /// The server's version byte (S0, RTMP 1.0 5.2.2) is not 3.
    case unsupportedVersion(UInt8)
    /// A message longer than the reader accepts (the message header's length, RTMP 1.0 5.3.1.2).
    case messageTooLong(length: Int, limit: Int)
    /// More bytes of partly received messages than the reader keeps, across chunk streams.
    case tooMuchBuffered(bytes: Int, limit: Int)
    /// More chunk streams than the reader keeps state for.
    case tooManyChunkStreams(limit: Int)
    /// A chunk of format 1, 2 or 3 (RTMP 1.0 5.3.1.2) on a chunk stream that never had the
    /// format 0 header it refers to.
    case chunkStreamWithoutHeader(chunkStreamID: Int, format: Int)
    /// A message header whose length changes in the middle of a message.
    case inconsistentChunk(chunkStreamID: Int)
    /// A Set Chunk Size (RTMP 1.0 5.4.1) of 0 or with its top bit set.
    case invalidChunkSize(UInt32)
    /// A protocol control or user control message (RTMP 1.0 5.4, 6.2) shorter than its fields.
    case malformedControlMessage(type: UInt8, length: Int)
    /// A command message (RTMP 1.0 7.1.1) whose first values are not a name and a transaction id.
    case malformedCommand(offset: Int64)
    /// The answer to `createStream` (RTMP 1.0 7.2.1.3) carries no stream id.
    case missingStreamID
    /// The URL cannot be used; `masked` shows it with the stream key as `****`.
    case invalidURL(masked: String, problem: RTMPURL.Problem)
    /// A call that the session's state does not allow (audio before publishing, after the end).
    case notPublishing(state: String)

    /// A sentence for people: what it is and, for bytes, where.
    public var description: String {
        switch self {
        case .truncated(let structure, let read):
            "RTMP \(structure) truncated: \(read)"
        case .unsupportedAMF0Marker(let marker, let offset):
            "AMF0 at byte \(offset): type marker \(marker) is not supported"
        case .amf0NestingTooDeep(let limit, let offset):
            "AMF0 at byte \(offset): values nested deeper than \(limit)"
        case .missingAMF0ObjectEnd(let offset):
            "AMF0 at byte \(offset): an empty property name not followed by the object-end marker"
        case .unsupportedVersion(let version):
            "RTMP handshake: the server speaks version \(version), not 3"
        case .messageTooLong(let length, let limit):
            "RTMP message of \(length) bytes, more than the \(limit) accepted"
        case .tooMuchBuffered(let bytes, let limit):
            "RTMP: \(bytes) bytes of unfinished messages, more than the \(limit) kept"
        case .tooManyChunkStreams(let limit):
            "RTMP: more than \(limit) chunk streams"
        case .chunkStreamWithoutHeader(let id, let format):
            "RTMP: a chunk of format \(format) on chunk stream \(id), which has no message header yet"
        case .inconsistentChunk(let id):
            "RTMP: chunk stream \(id) changes a message's header before the message ended"
        case .invalidChunkSize(let size):
            "RTMP: Set Chunk Size \(size) is not 1…2147483647"
        case .malformedControlMessage(let type, let length):
            "RTMP: control message of type \(type) is too short (\(length) bytes)"
        case .malformedCommand(let offset):
            "RTMP command at byte \(offset): no command name and transaction id"
        case .missingStreamID:
            "RTMP: the answer to createStream has no stream id"
        case .invalidURL(let masked, let problem):
            "\(masked): \(problem)"
        case .notPublishing(let state):
            "RTMP: the session is \(state), not publishing"
        }
    }
}

extension RTMPError {
    /// Runs `body`, turning a read past the end into ``truncated(structure:_:)``.
    static func reading<T>(_ structure: String, _ body: () throws(BinaryReadError) -> T) throws(RTMPError) -> T {
        do { return try body() } catch { throw .truncated(structure: structure, error) }
    }
}

extension RTMPError: PipelineErrorConvertible {
    /// ``/MediaCore/PipelineError/Code/network``: RTMP is spoken to a server.
    public static var pipelineErrorCode: PipelineError.Code { .network }
}
