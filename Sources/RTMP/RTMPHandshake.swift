/// The client's side of the simple handshake (RTMP 1.0 5.2): C0 and C1 out, S0 and S1 in, C2
/// (S1 echoed) out, S2 in.
///
/// - C0 (5.2.2) is the version, 3. C1 (5.2.3) is 1536 bytes: a 4-byte time, 4 zero bytes and
///   1528 random bytes. The zero bytes mark the simple handshake (no digest), which
///   nginx-rtmp, SRS and CDN ingests accept from encoders.
/// - S0 must be version 3. C2 (5.2.4) echoes S1 whole, as FFmpeg does for a server that does
///   not use the digest handshake.
/// - S2 is read and not checked: servers echo C1 with times of their own.
///
/// Feed it the server's bytes with ``receive(_:)`` until ``isComplete``; what it did not take
/// is the start of the chunk streams.
public struct RTMPHandshake: Sendable {
    /// The protocol version of C0 and S0.
    public static let version: UInt8 = 3
    /// The size of C1, C2, S1 and S2.
    public static let packetSize = 1536

    /// C0 and C1, to send first.
    public let c0c1: [UInt8]
    /// Whether S0, S1 and S2 have all been read.
    public private(set) var isComplete = false
    private var received: [UInt8] = []
    private var sentC2 = false

    /// A handshake whose C1 carries `time` (milliseconds of the client's choosing; 0 is usual)
    /// and `random` (1528 bytes; cut or zero-padded to that length).
    public init(time: UInt32 = 0, random: [UInt8]) {
        var bytes: [UInt8] = [Self.version]
        bytes.reserveCapacity(1 + Self.packetSize)
        for shift in [24, 16, 8, 0] { bytes.append(UInt8(truncatingIfNeeded: time >> UInt32(shift))) }
        bytes += [0, 0, 0, 0]
        bytes += random.prefix(Self.packetSize - 8)
        bytes += [UInt8](repeating: 0, count: 1 + Self.packetSize - bytes.count)
        c0c1 = bytes
    }

    /// A handshake with random bytes from the system's generator.
    public init(time: UInt32 = 0) {
        var generator = SystemRandomNumberGenerator()
        self.init(time: time, random: (0..<(Self.packetSize - 8)).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// Takes the server's bytes: returns C2 when S1 has just arrived (otherwise nothing to send)
    /// and how many of `bytes` belong to the handshake (the rest are chunks).
    ///
    /// - Throws: ``RTMPError/unsupportedVersion(_:)`` when S0 is not 3.
    public mutating func receive(_ bytes: ArraySlice<UInt8>) throws(RTMPError) -> (send: [UInt8], consumed: Int) {
        guard !isComplete else { return ([], 0) }
        let total = 1 + 2 * Self.packetSize
        let taken = min(bytes.count, total - received.count)
        received += bytes.prefix(taken)
        if let version = received.first, version != Self.version { throw .unsupportedVersion(version) }
        var send: [UInt8] = []
        if !sentC2, received.count >= 1 + Self.packetSize {
            send = Array(received[1..<(1 + Self.packetSize)])
            sentC2 = true
        }
        if received.count == total {
            isComplete = true
            received = []
        }
        return (send, taken)
    }
}
