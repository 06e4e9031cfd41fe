internal import Glibc

/// Name resolution before a job starts (getaddrinfo(3)): a destination whose host does not
/// resolve is an error before the capture begins. Later failures are the connection's.
enum HostName {
    /// Whether `host` resolves to at least one address for a stream socket.
    static func resolves(_ host: String, port: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        if let result { freeaddrinfo(result) }
        return status == 0
    }
}
