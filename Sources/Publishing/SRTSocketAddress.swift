#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// One address of an SRT listener (IPv4 or IPv6), as `srt_connect` takes it.
struct SRTSocketAddress: Sendable {
    /// The address, in storage large enough for any family.
    var storage: sockaddr_storage
    /// The length of the address in `storage`.
    var length: socklen_t

    /// The address family (`AF_INET`, `AF_INET6`).
    var family: Int32 { Int32(storage.ss_family) }

    /// Every UDP address of `host` (a name, an IPv4 or IPv6 address) at `port`, in the resolver's
    /// order of preference.
    ///
    /// - Throws: ``PublishingError/Reason/unresolved`` when the name does not resolve.
    static func resolve(host: String, port: Int) throws(PublishingError) -> [SRTSocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_UDP)
        #else
        hints.ai_socktype = SOCK_DGRAM
        hints.ai_protocol = IPPROTO_UDP
        #endif
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            throw PublishingError(.unresolved, "cannot resolve the SRT host \(host): \(reason)")
        }
        defer { freeaddrinfo(list) }
        var addresses: [SRTSocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            defer { entry = current.pointee.ai_next }
            let info = current.pointee
            guard let source = info.ai_addr, info.ai_family == AF_INET || info.ai_family == AF_INET6,
                  Int(info.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size else { continue }
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { target in
                target.copyMemory(from: UnsafeRawBufferPointer(start: source, count: Int(info.ai_addrlen)))
            }
            let address = SRTSocketAddress(storage: storage, length: info.ai_addrlen)
            if !addresses.contains(where: { $0.bytes == address.bytes }) { addresses.append(address) }
        }
        guard !addresses.isEmpty else {
            throw PublishingError(.unresolved, "the SRT host \(host) has no IPv4 or IPv6 address")
        }
        return addresses
    }

    /// The address's bytes (for comparing).
    private var bytes: [UInt8] {
        withUnsafeBytes(of: storage) { Array($0.prefix(Int(length))) }
    }

    /// Calls `body` with the address as a `sockaddr` and its length.
    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, Int32) -> Result) -> Result {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), Int32(length))
        }
    }
}
