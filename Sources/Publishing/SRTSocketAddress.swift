internal import Dispatch
internal import MediaCore
internal import Synchronization
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

    /// ``resolve(host:port:)`` waiting no later than `deadline`: getaddrinfo(3) has no timeout
    /// of its own, and a resolver that stops answering mid-stream must not hold the
    /// destination's thread. The lookup runs on a thread of its own; one that comes too late is
    /// dropped.
    ///
    /// - Throws: ``PublishingError/Reason/timedOut`` at the deadline, or what the lookup threw.
    static func resolve(host: String, port: Int, deadline: ContinuousClock.Instant) throws(PublishingError) -> [SRTSocketAddress] {
        let outcome = Mutex<Result<[SRTSocketAddress], PublishingError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = Result { () throws(PublishingError) in try resolve(host: host, port: port) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        let remaining = max(.zero, deadline - .now)
        guard done.wait(for: remaining) == .success, let result = outcome.withLock({ $0 }) else {
            throw PublishingError(.timedOut, "the name lookup of the SRT host \(host) did not answer in time")
        }
        return try result.get()
    }

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
            let reason = status == EAI_SYSTEM ? systemErrorWords(errno) : String(cString: gai_strerror(status))
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
