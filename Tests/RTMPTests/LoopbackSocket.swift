import Foundation
import MediaCore
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP socket to 127.0.0.1, for driving the state machine against a real server.
final class LoopbackSocket {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let descriptor: Int32

    /// Connects to 127.0.0.1:`port`.
    init(port: UInt16) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw Failure(description: "connect to 127.0.0.1:\(port): errno \(code)")
        }
    }

    deinit { close(descriptor) }

    /// Sends every byte.
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send: errno \(errno)") }
            offset += sent
        }
    }

    /// What arrives within `timeout` (empty when nothing did); `nil` at the end of the stream.
    func receive(timeout: Duration) throws -> [UInt8]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.inMilliseconds())
        guard poll(&poller, 1, milliseconds) > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw Failure(description: "recv: errno \(errno)") }
        return count == 0 ? nil : Array(buffer.prefix(count))
    }

    /// Ends our side (the server sees the end of the stream).
    func shutdownWriting() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// A port nothing listens on now (bound to port 0, then released).
    static func freePort() throws -> UInt16 {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(probe) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(probe, pointer, length) == 0 && getsockname(probe, pointer, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "cannot find a free port: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}
