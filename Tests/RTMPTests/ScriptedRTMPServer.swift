import RTMP

/// The server's half of an RTMP session, scripted by a test: it reads what the client sends
/// (C0 C1, C2, then chunks) and writes S0 S1 S2 and messages, all as bytes.
struct ScriptedRTMPServer {
    var writer = RTMPChunkWriter()
    var reader = RTMPChunkReader(maximumMessageLength: 1 << 24)
    private var handshakeBytes: [UInt8] = []
    private var handshakeDone = false
    /// C1 as the client sent it.
    private(set) var c1: [UInt8] = []
    /// C2 as the client sent it.
    private(set) var c2: [UInt8] = []
    /// What the server sends as S1: time 0, zero, a recognisable pattern.
    let s1: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0] + (0..<(RTMPHandshake.packetSize - 8)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }

    /// S0 and S1.
    var s0s1: [UInt8] { [3] + s1 }
    /// S2: C1 echoed.
    var s2: [UInt8] { c1 }

    /// Reads the client's bytes; returns the messages they complete.
    mutating func read(_ bytes: [UInt8]) throws -> [RTMPMessage] {
        var rest = bytes[...]
        if !handshakeDone {
            let needed = 1 + 2 * RTMPHandshake.packetSize - handshakeBytes.count
            handshakeBytes += rest.prefix(needed)
            rest = rest.dropFirst(needed)
            if handshakeBytes.count >= 1 + RTMPHandshake.packetSize, c1.isEmpty {
                c1 = Array(handshakeBytes[1..<(1 + RTMPHandshake.packetSize)])
            }
            if handshakeBytes.count == 1 + 2 * RTMPHandshake.packetSize {
                c2 = Array(handshakeBytes.suffix(RTMPHandshake.packetSize))
                handshakeDone = true
            }
        }
        reader.append(rest)
        var messages: [RTMPMessage] = []
        while let message = try reader.nextMessage() { messages.append(message) }
        return messages
    }

    /// A command message from the server on chunk stream 3.
    mutating func command(_ name: String, _ transaction: Double, _ object: AMF0Value = .null, _ arguments: [AMF0Value] = [],
                          streamID: UInt32 = 0) -> [UInt8] {
        writer.write(RTMPCommand(name: name, transactionID: transaction, commandObject: object, arguments: arguments).message(streamID: streamID),
                     chunkStreamID: 3)
    }

    /// An `onStatus` with `level`, `code` and `description` on message stream `streamID`.
    mutating func onStatus(_ level: String, _ code: String, _ description: String, streamID: UInt32 = 1) -> [UInt8] {
        command("onStatus", 0, .null, [.object([AMF0Property("level", .string(level)), AMF0Property("code", .string(code)),
                                                AMF0Property("description", .string(description))])], streamID: streamID)
    }

    /// A control message on chunk stream 2.
    mutating func control(_ control: RTMPControlMessage) -> [UInt8] {
        writer.write(control.message, chunkStreamID: 2)
    }

    /// The commands among `messages`.
    static func commands(_ messages: [RTMPMessage]) throws -> [RTMPCommand] {
        try messages.filter { $0.type == .commandAMF0 }.map { try RTMPCommand(payload: $0.payload) }
    }
}
