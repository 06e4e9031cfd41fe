import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// srt-live-transmit (srt-tools) as an SRT listener on a loopback UDP port, writing what it
/// receives to its standard output (``RunningProcess/standardOutputSoFar``) and exiting when the
/// caller disconnects.
public enum SRTListener {
    /// Starts one on `port` with `latency` ms and `extra` URL parameters (`&passphrase=…`);
    /// returns once the port is bound.
    public static func start(port: Int, latency: Int = 120, extra: String = "") throws -> RunningProcess {
        let process = try RunningProcess("srt-live-transmit",
                                         ["-q", "-a:no", "srt://:\(port)?mode=listener&latency=\(latency)\(extra)", "file://con"])
        let hex = String(format: ":%04X ", port)
        try RunningProcess.waitUntil("srt-live-transmit to listen on \(port)", timeout: .seconds(5)) {
            guard process.isRunning else {
                throw Subprocess.Failure(description: "srt-live-transmit exited: \(process.standardErrorSoFar)")
            }
            let table = (try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8)) ?? ""
            return table.split(separator: "\n").contains {
                $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map { "\($0) ".hasSuffix(hex) } ?? false
            }
        }
        return process
    }
}

extension LocalPort {
    /// A UDP port nobody uses now (bound to 0 on 127.0.0.1, read back, released).
    public static func freeUDP() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard socket >= 0 else { throw Subprocess.Failure(description: "socket: \(errno)") }
        defer { Glibc.close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else { throw Subprocess.Failure(description: "bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
