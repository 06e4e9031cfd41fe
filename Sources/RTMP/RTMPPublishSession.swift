/// A publisher's whole RTMP session as a state machine over bytes (no I/O, no clock): it takes
/// what the server sent and returns what to send, and reports what happened as
/// ``RTMPSessionEvent``s.
///
/// The flow (RTMP 1.0 5.2, 7.2; what FFmpeg and OBS send):
///
/// 1. ``start()``: C0 + C1. With S0 + S1: C2. With S2: Set Chunk Size 4096 (5.4.1) and
///    `connect` (transaction 1).
/// 2. `connect`'s `_result`: `releaseStream`, `FCPublish` and `createStream`.
/// 3. `createStream`'s `_result` (the message stream id): `publish` (name, `live`).
/// 4. `onStatus` `NetStream.Publish.Start`: `@setDataFrame` `onMetaData` and the AAC sequence
///    header (FLV E.4.2.2, the AudioSpecificConfig), then ``audio(frame:sampleTime:)`` frames.
/// 5. ``finish()``: `FCUnpublish` and `deleteStream`.
///
/// All along, it answers the server's control messages: an Acknowledgement (5.4.3) each time the
/// bytes received cross the server's Window Acknowledgement Size (5.4.4), a Window
/// Acknowledgement Size to a Set Peer Bandwidth that changes the window (5.4.5), a Ping
/// Response to a Ping Request (7.1.7). Our own output is not held back by the peer bandwidth.
///
/// Chunk streams: 2 for protocol control (5.4, required), 3 for commands, 4 for audio, 5 for
/// `@setDataFrame` (FFmpeg puts both on one; separate ones keep audio headers compressed).
///
/// Timestamps are milliseconds of the sample clock from the session's first frame
/// (`samples × 1000 / rate`, rounded down, which never goes backwards), wrapping at 2³² and
/// written with extended timestamps from 0xFFFFFF on; never the wall clock. Metadata and the
/// sequence header have timestamp 0.
public struct RTMPPublishSession: Sendable {
    /// Where the session stands.
    public enum State: String, Sendable, Hashable, CustomStringConvertible {
        /// ``start()`` not called yet.
        case idle
        /// C0 + C1 sent, waiting for S0, S1, S2.
        case handshaking
        /// `connect` sent, waiting for its `_result`.
        case connecting
        /// `createStream` sent, waiting for its `_result`.
        case creatingStream
        /// `publish` sent, waiting for `NetStream.Publish.Start`.
        case startingPublish
        /// Audio may be sent.
        case publishing
        /// ``finish()`` was called.
        case finished
        /// The server refused or ended the session (see the ``RTMPSessionEvent/error(_:)`` event).
        case failed

        /// The state's name.
        public var description: String { rawValue }
    }

    /// Our chunk size, announced with Set Chunk Size right after the handshake (as FFmpeg does).
    public static let outgoingChunkSize = 4096
    /// Chunk stream of protocol control messages (RTMP 1.0 5.4).
    public static let controlChunkStream = RTMPChunkWriter.controlChunkStreamID
    /// Chunk stream of commands.
    public static let commandChunkStream = 3
    /// Chunk stream of audio messages.
    public static let audioChunkStream = 4
    /// Chunk stream of data messages (`@setDataFrame`).
    public static let dataChunkStream = 5

    /// The destination.
    public let url: RTMPURL
    /// Where the session stands.
    public private(set) var state = State.idle
    /// The message stream id `createStream` returned.
    public private(set) var streamID: UInt32?
    /// The metadata sent with `@setDataFrame` (``updateTitle(_:)`` changes its title).
    public private(set) var metadata: RTMPStreamMetadata
    /// Bytes received from the server, handshake included (the Acknowledgement's count).
    public private(set) var bytesReceived: Int64 = 0
    /// The server's Window Acknowledgement Size (0 until it says one).
    public private(set) var acknowledgementWindow: UInt32 = 0

    private let audioSpecificConfig: [UInt8]
    private var handshake: RTMPHandshake
    private var reader: RTMPChunkReader
    private var writer = RTMPChunkWriter()
    private var events: [RTMPSessionEvent] = []
    private var nextTransaction: Double = 1
    private var pending: [Double: String] = [:]
    private var acknowledged: Int64 = 0
    private var announcedWindow: UInt32?
    private var peerLimitType: UInt8?
    private var lastMilliseconds: Int64 = 0

    /// A session that publishes to `url` an AAC stream of `audioSpecificConfig` (serialized,
    /// ISO/IEC 14496-3 1.6.2.1) described by `metadata`; `handshake` by default has system
    /// random bytes; server messages longer than `maximumMessageLength` are an error.
    public init(url: RTMPURL, audioSpecificConfig: [UInt8], metadata: RTMPStreamMetadata, handshake: RTMPHandshake = RTMPHandshake(),
                maximumMessageLength: Int = RTMPChunkReader.defaultMaximumMessageLength) {
        self.url = url
        self.audioSpecificConfig = audioSpecificConfig
        self.metadata = metadata
        self.handshake = handshake
        reader = RTMPChunkReader(maximumMessageLength: maximumMessageLength)
    }

    /// C0 + C1: the first bytes to send.
    public mutating func start() -> [UInt8] {
        guard state == .idle else { return [] }
        state = .handshaking
        return handshake.c0c1
    }

    /// The events since the last call, oldest first.
    public mutating func takeEvents() -> [RTMPSessionEvent] {
        defer { events.removeAll() }
        return events
    }

    /// Takes bytes the server sent; returns the bytes to send in answer (possibly none).
    ///
    /// - Throws: ``RTMPError`` for bytes that break the protocol or the reader's limits; the
    ///   session is then unusable. A server's refusal is an ``RTMPSessionEvent/error(_:)`` event.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(RTMPError) -> [UInt8] {
        guard state != .idle, !bytes.isEmpty else { return [] }
        bytesReceived += Int64(bytes.count)
        var output: [UInt8] = []
        var rest = Array(bytes)[...]
        if !handshake.isComplete {
            let (send, consumed) = try handshake.receive(rest)
            output += send
            rest = rest.dropFirst(consumed)
            if handshake.isComplete {
                events.append(.handshakeDone)
                state = .connecting
                output += writer.setChunkSize(Self.outgoingChunkSize)
                output += command(.connect(application: url.application, tcURL: url.tcURL, transactionID: transaction("connect")))
            }
        }
        if handshake.isComplete, !rest.isEmpty {
            reader.append(rest)
            while let message = try reader.nextMessage() {
                output += try handle(message)
            }
        }
        if acknowledgementWindow > 0, bytesReceived - acknowledged >= Int64(acknowledgementWindow) {
            acknowledged = bytesReceived
            output += controlBytes(.acknowledgement(sequenceNumber: UInt32(truncatingIfNeeded: bytesReceived)))
        }
        return output
    }

    /// One raw AAC frame (no ADTS header) that starts `sampleTime` samples into the stream
    /// (``RTMPStreamMetadata/sampleRate``'s clock), as an audio message: the FLV tag
    /// `0xAF 0x01` + frame.
    ///
    /// - Throws: ``RTMPError/notPublishing(state:)`` before `NetStream.Publish.Start` or after
    ///   the end.
    public mutating func audio(frame: ArraySlice<UInt8>, sampleTime: Int64) throws(RTMPError) -> [UInt8] {
        guard state == .publishing, let streamID else { throw .notPublishing(state: state.description) }
        // The stream's sample clock, not this session's: after a reconnect the timestamps go on
        // from where the stream is, so a server or player joining the two sees time continue.
        let rate = Int64(max(metadata.sampleRate, 1))
        let elapsed = max(0, sampleTime)
        // elapsed × 1000 / rate, rounded down, without overflow.
        let milliseconds = max(lastMilliseconds, elapsed / rate * 1000 + elapsed % rate * 1000 / rate)
        lastMilliseconds = milliseconds
        let message = RTMPMessage(type: .audio, streamID: streamID, timestamp: UInt32(truncatingIfNeeded: milliseconds),
                                  payload: FLVAudioTag.rawFrameBytes(frame))
        return writer.write(message, chunkStreamID: Self.audioChunkStream)
    }

    /// The milliseconds of the last frame sent on the stream's sample clock (before the 2³² wrap).
    public var lastTimestamp: Int64 { lastMilliseconds }

    /// A new `@setDataFrame` `onMetaData` with `title`, at the last frame's time.
    ///
    /// - Throws: ``RTMPError/notPublishing(state:)`` when not publishing.
    public mutating func updateTitle(_ title: String) throws(RTMPError) -> [UInt8] {
        guard state == .publishing, let streamID else { throw .notPublishing(state: state.description) }
        metadata.title = title
        return writer.write(metadata.setDataFrame(streamID: streamID, timestamp: UInt32(truncatingIfNeeded: lastMilliseconds)),
                            chunkStreamID: Self.dataChunkStream)
    }

    /// `FCUnpublish` and `deleteStream` when a stream was created (nothing otherwise); the
    /// session is then finished. Close the connection after sending them.
    public mutating func finish() -> [UInt8] {
        defer { state = .finished }
        guard let streamID, state != .finished, state != .failed else { return [] }
        return command(.fcUnpublish(url.streamKey, transactionID: transaction("FCUnpublish")))
            + command(.deleteStream(streamID, transactionID: transaction("deleteStream")))
    }

    // MARK: - Messages from the server

    private mutating func handle(_ message: RTMPMessage) throws(RTMPError) -> [UInt8] {
        switch message.type {
        case .commandAMF0:
            return try handle(RTMPCommand(payload: message.payload))
        case .commandAMF3:
            // An AMF3 command message starts with a format byte, 0 for AMF0 values (7.1.1).
            guard message.payload.first == 0 else { return [] }
            return try handle(RTMPCommand(payload: Array(message.payload.dropFirst())))
        default:
            guard let control = try RTMPControlMessage(message) else { return [] }
            return handle(control)
        }
    }

    private mutating func handle(_ control: RTMPControlMessage) -> [UInt8] {
        switch control {
        case .windowAcknowledgementSize(let size):
            acknowledgementWindow = size
        case .setPeerBandwidth(let size, let limitType):
            // 5.4.5: hard (0) sets the window, soft (1) only lowers it, dynamic (2) is hard when
            // the previous limit was hard and is ignored otherwise.
            let hard = limitType == 0 || (limitType == 2 && peerLimitType == 0)
            let applies = hard || (limitType == 1 && announcedWindow.map { size < $0 } ?? true)
            if limitType != 2 { peerLimitType = limitType }
            if applies, announcedWindow != size {
                announcedWindow = size
                return controlBytes(.windowAcknowledgementSize(size))
            }
        case .userControl(.pingRequest(let time)):
            return controlBytes(.userControl(.pingResponse(time)))
        default:
            break
        }
        return []
    }

    private mutating func handle(_ command: RTMPCommand) throws(RTMPError) -> [UInt8] {
        guard state != .failed, state != .finished else { return [] }
        switch command.name {
        case "_result":
            switch pending.removeValue(forKey: command.transactionID) {
            case "connect" where state == .connecting:
                events.append(.connected)
                state = .creatingStream
                return self.command(.releaseStream(url.streamKey, transactionID: transaction("releaseStream")))
                    + self.command(.fcPublish(url.streamKey, transactionID: transaction("FCPublish")))
                    + self.command(.createStream(transactionID: transaction("createStream")))
            case "createStream" where state == .creatingStream:
                guard case .number(let value)? = command.arguments.first, value >= 0, value <= Double(UInt32.max),
                      value == value.rounded() else { throw .missingStreamID }
                let id = UInt32(value)
                streamID = id
                events.append(.streamCreated(id))
                state = .startingPublish
                return self.command(.publish(url.streamKey, transactionID: transaction("publish")), streamID: id)
            default:
                return []
            }
        case "_error":
            let answered = pending.removeValue(forKey: command.transactionID)
            let status = command.status
            if answered == "connect" || answered == "createStream" || answered == "publish" {
                fail(status.code.isEmpty ? RTMPStatus(level: "error", code: "", details: "\(answered ?? "") failed") : status)
            } else {
                events.append(.status(status))
            }
        case "onStatus":
            let status = command.status
            if status.code == "NetStream.Publish.Start", state == .startingPublish, let streamID {
                state = .publishing
                events.append(.publishing)
                return writer.write(metadata.setDataFrame(streamID: streamID), chunkStreamID: Self.dataChunkStream)
                    + writer.write(RTMPMessage(type: .audio, streamID: streamID, timestamp: 0,
                                               payload: FLVAudioTag.sequenceHeader(audioSpecificConfig).bytes),
                                   chunkStreamID: Self.audioChunkStream)
            } else if status.isError {
                fail(status)
            } else {
                events.append(.status(status))
            }
        case "onFCPublish", "onFCUnpublish":
            events.append(.status(command.status))
        case "close":
            fail(RTMPStatus(level: "error", code: "NetConnection.Connect.Closed"))
        default:
            break
        }
        return []
    }

    private mutating func fail(_ status: RTMPStatus) {
        state = .failed
        events.append(.error(status))
    }

    // MARK: - Messages to the server

    private mutating func transaction(_ name: String) -> Double {
        let id = nextTransaction
        nextTransaction += 1
        pending[id] = name
        return id
    }

    private mutating func command(_ command: RTMPCommand, streamID: UInt32 = 0) -> [UInt8] {
        writer.write(command.message(streamID: streamID), chunkStreamID: Self.commandChunkStream)
    }

    private mutating func controlBytes(_ control: RTMPControlMessage) -> [UInt8] {
        writer.write(control.message, chunkStreamID: Self.controlChunkStream)
    }
}
