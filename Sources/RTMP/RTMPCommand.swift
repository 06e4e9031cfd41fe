/// A command message in AMF0 (RTMP 1.0 7.1.1, 7.2): a name, a transaction id, a command object
/// (null for most) and arguments, one AMF0 value after the other.
///
/// The constructors make the commands a publisher sends, in the order of 7.2.1.1 (`connect`),
/// 7.2.1.3 (`createStream`), 7.2.2.6 (`publish`) and 7.2.2.3 (`deleteStream`), plus
/// `releaseStream`, `FCPublish` and `FCUnpublish`, which are not in the spec but which Flash
/// Media Live Encoder, FFmpeg and OBS send and CDN ingests expect.
public struct RTMPCommand: Sendable, Hashable {
    /// The command's name: `connect`, `_result`, `onStatus`, …
    public var name: String
    /// The transaction id: answers (`_result`, `_error`) carry the request's; 0 for none.
    public var transactionID: Double
    /// The command object (`connect`'s properties, `_result`'s server properties), or null.
    public var commandObject: AMF0Value
    /// The values after the command object.
    public var arguments: [AMF0Value]

    /// The command `name` with `transactionID`, `commandObject` and `arguments`.
    public init(name: String, transactionID: Double, commandObject: AMF0Value = .null, arguments: [AMF0Value] = []) {
        self.name = name
        self.transactionID = transactionID
        self.commandObject = commandObject
        self.arguments = arguments
    }

    /// The command read from an AMF0 command message's payload (type 20; for type 17, the
    /// payload after its leading format byte).
    ///
    /// - Throws: ``RTMPError/malformedCommand(offset:)`` when it does not start with a string and
    ///   a number; the AMF0 errors of ``AMF0Reader``.
    public init(payload: [UInt8]) throws(RTMPError) {
        var reader = AMF0Reader(payload)
        guard case .string(let name) = try reader.next(), case .number(let transaction) = try reader.next() else {
            throw .malformedCommand(offset: 0)
        }
        self.name = name
        transactionID = transaction
        commandObject = reader.isAtEnd ? .null : try reader.next()
        arguments = try reader.readAll()
    }

    /// The command's AMF0 bytes.
    public var payload: [UInt8] {
        AMF0Value.encode([.string(name), .number(transactionID), commandObject] + arguments)
    }

    /// The command as a message (type 20) on message stream `streamID`.
    public func message(streamID: UInt32 = 0) -> RTMPMessage {
        RTMPMessage(type: .commandAMF0, streamID: streamID, payload: payload)
    }

    /// The `info` object of `_error` and `onStatus` answers: the first argument, as a status.
    public var status: RTMPStatus {
        RTMPStatus(info: arguments.first ?? .null)
    }

    /// `connect` (7.2.1.1) as an encoder that publishes sends it: `app`, `type` `nonprivate`,
    /// `flashVer` and `tcUrl`, in that order (as FFmpeg does).
    public static func connect(application: String, tcURL: String, flashVersion: String = "FMLE/3.0 (compatible; KeyFrameKit)",
                               transactionID: Double = 1) -> RTMPCommand {
        RTMPCommand(name: "connect", transactionID: transactionID, commandObject: .object([
            AMF0Property("app", .string(application)),
            AMF0Property("type", .string("nonprivate")),
            AMF0Property("flashVer", .string(flashVersion)),
            AMF0Property("tcUrl", .string(tcURL)),
        ]))
    }

    /// `releaseStream`: frees `streamName` if an earlier session of ours still holds it.
    public static func releaseStream(_ streamName: String, transactionID: Double) -> RTMPCommand {
        RTMPCommand(name: "releaseStream", transactionID: transactionID, arguments: [.string(streamName)])
    }

    /// `FCPublish`: announces `streamName` to edge servers and CDN ingests.
    public static func fcPublish(_ streamName: String, transactionID: Double) -> RTMPCommand {
        RTMPCommand(name: "FCPublish", transactionID: transactionID, arguments: [.string(streamName)])
    }

    /// `createStream` (7.2.1.3): asks for a message stream; `_result` gives its id.
    public static func createStream(transactionID: Double) -> RTMPCommand {
        RTMPCommand(name: "createStream", transactionID: transactionID)
    }

    /// `publish` (7.2.2.6) of `streamName` with publishing type `live` (no recording asked
    /// of the server), sent on the created message stream.
    public static func publish(_ streamName: String, transactionID: Double) -> RTMPCommand {
        RTMPCommand(name: "publish", transactionID: transactionID, arguments: [.string(streamName), .string("live")])
    }

    /// `FCUnpublish`: the end of `streamName`, for edge servers and CDN ingests.
    public static func fcUnpublish(_ streamName: String, transactionID: Double) -> RTMPCommand {
        RTMPCommand(name: "FCUnpublish", transactionID: transactionID, arguments: [.string(streamName)])
    }

    /// `deleteStream` (7.2.2.3) of message stream `streamID`.
    public static func deleteStream(_ streamID: UInt32, transactionID: Double) -> RTMPCommand {
        RTMPCommand(name: "deleteStream", transactionID: transactionID, arguments: [.number(Double(streamID))])
    }
}
