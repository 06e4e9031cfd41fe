internal import CSRT
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// An SRT connection to a listening server (caller mode, live transmission), through libsrt
/// loaded with `dlopen` (``PublishingError/Reason/libraryMissing`` without it).
///
/// **Messages of 1316 bytes.** SRT's live mode carries one message per UDP packet: each
/// `srt_sendmsg2` is one message of at most ``messageSize`` (1316 bytes, seven 188-byte TS
/// packets, `SRTO_PAYLOADSIZE`), and a receiver such as srt-live-transmit or FFmpeg hands each
/// message on as one unit. ``send(_:deadline:)`` therefore buffers its bytes (the MPEG-TS
/// publisher sends whole TS packets) and sends only full 1316-byte messages; the remainder, less
/// than 7 packets, waits for the next send, and ``close(graceful:)`` sends it as a shorter
/// message (TS packets are whole, so nothing is padded). That delays a packet by at most 6 TS
/// packets' worth of the stream.
///
/// **The end of a stream.** A receiver holds every packet for the negotiated latency before it
/// delivers it, and drops what it holds when the connection closes; so closing right after the
/// last send, as FFmpeg's SRT output does, loses the last latency's worth of the stream (0.3 s
/// at a 300 ms latency) even with `SRTO_LINGER` on, since linger only waits for packets not
/// yet acknowledged. A graceful close therefore sends the remainder, waits until the listener
/// has acknowledged every packet, then one negotiated latency more (at most ``lingerTime`` in
/// all), and closes with `SRTO_LINGER` on.
///
/// **Failures.** A listener that disappears is noticed by libsrt after its peer-idle timeout
/// (5 s without a packet from it): ``send(_:deadline:)`` then throws
/// ``PublishingError/Reason/connectionLost``, as does ``receive(deadline:)``, which only
/// waits, since a publisher receives nothing over SRT.
///
/// One thread sends; ``close(graceful:)`` may come from any thread, at most once in effect.
/// The socket and the unsent remainder are guarded by a mutex; libsrt is called outside it.
package final class SRTConnection: ServerConnection {
    /// The size of every message but the last: seven 188-byte TS packets (`SRTO_PAYLOADSIZE`).
    package static let messageSize = 1316
    /// The longest a graceful close waits for the listener to acknowledge what was sent.
    package static let lingerTime: Duration = .seconds(3)
    /// How soon a connection attempt to a host's next address starts while the previous one has
    /// had no answer (a listener on IPv4 only, a name resolving to IPv6 first).
    static let attemptStagger: Duration = .milliseconds(250)

    /// Where the stream goes (its description is masked).
    package let destination: SRTDestination

    private struct State {
        /// The connected socket, until closed.
        var socket: SRTSOCKET
        /// Bytes not yet sent: less than one message.
        var pending: [UInt8] = []
        /// Whether ``close(graceful:)`` has run.
        var closed = false
    }

    private let state: Mutex<State>

    private init(socket: SRTSOCKET, destination: SRTDestination) {
        state = Mutex(State(socket: socket))
        self.destination = destination
    }

    deinit {
        let socket = state.withLock { state -> SRTSOCKET? in state.closed ? nil : state.socket }
        if let socket { Self.closeAbruptly(socket) }
    }

    /// Connects to `destination` as an SRT caller in live mode, by `deadline`.
    ///
    /// The host's addresses (IPv4 and IPv6, from `getaddrinfo`) are tried in order, a next one
    /// starting when the previous has not answered within ``attemptStagger``; the first to
    /// connect wins.
    ///
    /// - Throws: ``PublishingError/Reason/libraryMissing`` without libsrt,
    ///   ``PublishingError/Reason/unresolved`` when the host does not resolve,
    ///   ``PublishingError/Reason/refused`` when the listener refuses the stream for good (a
    ///   wrong or missing passphrase, a stream id it does not accept),
    ///   ``PublishingError/Reason/timedOut`` when no listener answered by `deadline`, and
    ///   ``PublishingError/Reason/connectionFailed`` for passing refusals. No message contains the
    ///   passphrase or the stream id.
    package static func connect(to destination: SRTDestination, deadline: ContinuousClock.Instant) throws(PublishingError) -> SRTConnection {
        guard kf_srt_load() == 0 else {
            throw PublishingError(.libraryMissing, "\(destination): " + String(cString: kf_srt_load_error()))
        }
        let addresses = try SRTSocketAddress.resolve(host: destination.host, port: destination.port, deadline: deadline)
        var attempts: [SRTSOCKET] = []
        defer { attempts.forEach(closeAbruptly) }
        var failures: [PublishingError] = []
        var next = 0
        var nextStart = ContinuousClock.now
        while true {
            let now = ContinuousClock.now
            if next < addresses.count, now >= nextStart || attempts.isEmpty, now < deadline {
                do throws(PublishingError) {
                    attempts.append(try startAttempt(to: addresses[next], destination: destination, deadline: deadline))
                } catch {
                    failures.append(error)
                }
                next += 1
                nextStart = now + attemptStagger
                continue
            }
            var index = 0
            while index < attempts.count {
                let socket = attempts[index]
                let status = kf_srt_getsockstate(socket)
                if status == SRTS_CONNECTED {
                    attempts.remove(at: index)
                    return SRTConnection(socket: socket, destination: destination)
                }
                if status == SRTS_CONNECTING || status == SRTS_OPENED || status == SRTS_INIT {
                    index += 1
                    continue
                }
                let error = SRTRejection.error(code: kf_srt_getrejectreason(socket), destination: destination)
                attempts.remove(at: index)
                closeAbruptly(socket)
                if error.isPermanent { throw error }
                failures.append(error)
            }
            if attempts.isEmpty && next >= addresses.count || now >= deadline {
                // A definite answer (a refusal, a failure to start) says more than silence.
                throw failures.first { $0.reason != .timedOut }
                    ?? PublishingError(.timedOut, "\(destination): no SRT listener answered at \(destination.endpoint) in time")
            }
            Self.pause(.milliseconds(5))
        }
    }

    /// Buffers `bytes` and sends every whole 1316-byte message (see the type's notes): the
    /// remainder waits for the next call or a graceful close.
    ///
    /// - Throws: ``PublishingError/Reason/connectionLost`` when the connection broke or was
    ///   closed, ``PublishingError/Reason/timedOut`` when libsrt did not take a message by
    ///   `deadline`.
    package func send(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(PublishingError) {
        let (socket, messages) = try state.withLock { state throws(PublishingError) -> (SRTSOCKET, [UInt8]) in
            guard !state.closed else { throw PublishingError(.connectionLost, "\(destination): the SRT connection is closed") }
            state.pending.append(contentsOf: bytes)
            let whole = state.pending.count - state.pending.count % Self.messageSize
            guard whole > 0 else { return (state.socket, []) }
            let messages = Array(state.pending[..<whole])
            state.pending.removeFirst(whole)
            return (state.socket, messages)
        }
        try checkConnected(socket)
        var start = 0
        while start < messages.count {
            try sendMessage(messages[start..<min(start + Self.messageSize, messages.count)], on: socket, deadline: deadline)
            start += Self.messageSize
        }
    }

    /// Waits until `deadline` and throws ``PublishingError/Reason/timedOut``: an SRT publisher
    /// receives nothing. Throws ``PublishingError/Reason/connectionLost`` as soon as the
    /// connection breaks or is closed.
    package func receive(deadline: ContinuousClock.Instant) throws(PublishingError) -> [UInt8] {
        while true {
            _ = try receiveAvailable()
            let remaining = deadline - .now
            guard remaining > .zero else {
                throw PublishingError(.timedOut, "\(destination): nothing to receive over SRT")
            }
            Self.pause(min(remaining, .milliseconds(20)))
        }
    }

    /// Nothing (an SRT publisher receives nothing); throws
    /// ``PublishingError/Reason/connectionLost`` when the connection broke or was closed.
    package func receiveAvailable() throws(PublishingError) -> [UInt8] {
        let socket = try state.withLock { state throws(PublishingError) -> SRTSOCKET in
            guard !state.closed else { throw PublishingError(.connectionLost, "\(destination): the SRT connection is closed") }
            return state.socket
        }
        try checkConnected(socket)
        return []
    }

    /// Ends the connection, once (later calls return at once).
    ///
    /// `graceful`: sends the buffered remainder as a last, shorter message, waits until the
    /// listener has acknowledged every packet and then one receiver latency (so that a
    /// receiver holding packets for their play time has delivered them; at most
    /// ``lingerTime`` in all), and closes with `SRTO_LINGER` on. Otherwise the remainder and
    /// anything unacknowledged are dropped (`SRTO_LINGER` off) and a ``send(_:deadline:)``
    /// waiting in libsrt returns with ``PublishingError/Reason/connectionLost``.
    package func close(graceful: Bool) {
        let taken = state.withLock { state -> (SRTSOCKET, [UInt8])? in
            guard !state.closed else { return nil }
            state.closed = true
            defer { state.pending = [] }
            return (state.socket, state.pending)
        }
        guard let (socket, remainder) = taken else { return }
        guard graceful, kf_srt_getsockstate(socket) == SRTS_CONNECTED else {
            Self.closeAbruptly(socket)
            return
        }
        let deadline = ContinuousClock.now + Self.lingerTime
        if !remainder.isEmpty { try? sendMessage(remainder[...], on: socket, deadline: deadline) }
        Self.drain(socket, latency: destination.latency, deadline: deadline)
        // Linger for what is left of the time (whole seconds, libsrt's unit): normally nothing is
        // unacknowledged by now, and a listener that stopped answering does not hold us longer.
        let left = Self.milliseconds(deadline - .now)
        var linger = kf_srt_linger(left > 0 ? 1 : 0, Int32((left + 999) / 1000))
        _ = Self.setOption(socket, SRTO_LINGER, &linger)
        kf_srt_close(socket)
    }

    // MARK: - libsrt

    /// Creates a socket for `address`, sets the live-mode options and starts a non-blocking
    /// connection (its state is polled by ``connect(to:deadline:)``).
    private static func startAttempt(to address: SRTSocketAddress, destination: SRTDestination,
                                     deadline: ContinuousClock.Instant) throws(PublishingError) -> SRTSOCKET {
        let socket = kf_srt_create_socket()
        guard socket != SRT_INVALID_SOCK else {
            throw PublishingError(.connectionFailed, "\(destination): cannot create an SRT socket: \(lastErrorText())")
        }
        do throws(PublishingError) {
            // SRTO_TRANSTYPE first: it resets the options it governs to the live defaults.
            try set(socket, SRTO_TRANSTYPE, Int32(bitPattern: SRTT_LIVE.rawValue), "transtype", destination)
            try set(socket, SRTO_PAYLOADSIZE, Int32(messageSize), "payloadsize", destination)
            try set(socket, SRTO_LATENCY, Int32(clamping: destination.latencyMilliseconds), "latency", destination)
            let remaining = milliseconds(deadline - .now)
            try set(socket, SRTO_CONNTIMEO, Int32(clamping: max(remaining, 1)), "conntimeo", destination)
            try set(socket, SRTO_SNDSYN, Int32(1), "sndsyn", destination)
            // Non-blocking connect (RCVSYN governs srt_connect): several addresses at once.
            try set(socket, SRTO_RCVSYN, Int32(0), "rcvsyn", destination)
            if let streamID = destination.streamID {
                try setString(socket, SRTO_STREAMID, streamID, "streamid", destination)
            }
            if let passphrase = destination.passphrase {
                try setString(socket, SRTO_PASSPHRASE, passphrase, "passphrase", destination)
                if let keyLength = destination.keyLength {
                    try set(socket, SRTO_PBKEYLEN, Int32(keyLength), "pbkeylen", destination)
                }
            }
            let status = address.withSockaddr { kf_srt_connect(socket, $0, $1) }
            guard status != SRT_ERROR else {
                if kf_srt_getlasterror(nil) == code(SRT_ECONNREJ) {
                    throw SRTRejection.error(code: kf_srt_getrejectreason(socket), destination: destination)
                }
                throw PublishingError(.connectionFailed, "\(destination): cannot connect: \(lastErrorText())")
            }
            return socket
        } catch {
            closeAbruptly(socket)
            throw error
        }
    }

    /// Sends one message (at most ``messageSize`` bytes), waiting no later than `deadline`.
    private func sendMessage(_ message: ArraySlice<UInt8>, on socket: SRTSOCKET, deadline: ContinuousClock.Instant) throws(PublishingError) {
        let remaining = Self.milliseconds(deadline - .now)
        guard remaining > 0 else {
            throw PublishingError(.timedOut, "\(destination): the SRT connection did not take data in time")
        }
        // SRTO_SNDTIMEO bounds the blocking send (SRTO_SNDSYN) by the caller's deadline.
        var timeout = Int32(clamping: remaining)
        _ = Self.setOption(socket, SRTO_SNDTIMEO, &timeout)
        let sent = message.withUnsafeBytes { bytes in
            kf_srt_sendmsg2(socket, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
        }
        guard sent == SRT_ERROR else { return }
        let code = kf_srt_getlasterror(nil)
        let text = Self.lastErrorText()
        if state.withLock({ $0.closed }) {
            throw PublishingError(.connectionLost, "\(destination): the SRT connection was closed")
        }
        if code == Self.code(SRT_EASYNCSND) || code == Self.code(SRT_ETIMEOUT) || code == Self.code(SRT_EASYNCFAIL) {
            throw PublishingError(.timedOut, "\(destination): the SRT connection did not take data in time")
        }
        throw PublishingError(.connectionLost, "\(destination): the SRT connection was lost: \(text)")
    }

    /// Throws ``PublishingError/Reason/connectionLost`` unless `socket` is connected.
    private func checkConnected(_ socket: SRTSOCKET) throws(PublishingError) {
        let status = kf_srt_getsockstate(socket)
        guard status == SRTS_CONNECTED else {
            throw PublishingError(.connectionLost, status == SRTS_BROKEN
                ? "\(destination): the SRT connection was lost (the listener stopped answering or closed it)"
                : "\(destination): the SRT connection is closed")
        }
    }

    /// Waits until the listener has acknowledged everything in `socket`'s send buffer, then one
    /// receiver `latency` more (a receiver holds each packet that long before delivering it, and
    /// drops what it holds when the connection closes), no later than `deadline`.
    private static func drain(_ socket: SRTSOCKET, latency: Duration, deadline: ContinuousClock.Instant) {
        while ContinuousClock.now < deadline && kf_srt_getsockstate(socket) == SRTS_CONNECTED {
            var blocks = 0
            var bytes = 0
            guard kf_srt_getsndbuffer(socket, &blocks, &bytes) == 0, blocks > 0 else { break }
            pause(.milliseconds(5))
        }
        // The negotiated latency (the larger of ours and the listener's), in milliseconds.
        var peerLatency: Int32 = 0
        var length = Int32(MemoryLayout<Int32>.size)
        let hold = kf_srt_getsockflag(socket, SRTO_PEERLATENCY, &peerLatency, &length) == 0
            ? Duration.milliseconds(Int(peerLatency)) : latency
        let end = min(deadline, .now + hold + .milliseconds(50))
        while ContinuousClock.now < end && kf_srt_getsockstate(socket) == SRTS_CONNECTED {
            pause(.milliseconds(5))
        }
    }

    /// Closes `socket` dropping what is unsent (`SRTO_LINGER` off).
    private static func closeAbruptly(_ socket: SRTSOCKET) {
        var linger = kf_srt_linger(0, 0)
        _ = setOption(socket, SRTO_LINGER, &linger)
        kf_srt_close(socket)
    }

    /// Sets an integer option; a refusal throws naming the option (never its value).
    private static func set(_ socket: SRTSOCKET, _ option: SRT_SOCKOPT, _ value: Int32, _ name: String,
                            _ destination: SRTDestination) throws(PublishingError) {
        var value = value
        guard setOption(socket, option, &value) else {
            throw PublishingError(.invalidDestination, "\(destination): libsrt refused SRTO_\(name.uppercased()): \(lastErrorText())")
        }
    }

    /// Sets a string option (its UTF-8 bytes, no terminator); a refusal throws naming the
    /// option (never its value).
    private static func setString(_ socket: SRTSOCKET, _ option: SRT_SOCKOPT, _ value: String, _ name: String,
                                  _ destination: SRTDestination) throws(PublishingError) {
        let bytes = Array(value.utf8)
        let status = bytes.withUnsafeBytes { kf_srt_setsockflag(socket, option, $0.baseAddress, Int32($0.count)) }
        guard status == 0 else {
            throw PublishingError(.invalidDestination, "\(destination): libsrt refused SRTO_\(name.uppercased()): \(lastErrorText())")
        }
    }

    /// Sets an option from a plain value; returns whether libsrt took it.
    private static func setOption<Value>(_ socket: SRTSOCKET, _ option: SRT_SOCKOPT, _ value: inout Value) -> Bool {
        withUnsafeBytes(of: &value) { kf_srt_setsockflag(socket, option, $0.baseAddress, Int32($0.count)) } == 0
    }

    /// The calling thread's last libsrt error in words.
    private static func lastErrorText() -> String {
        guard let text = kf_srt_getlasterror_str() else { return "unknown error" }
        return String(cString: text)
    }

    /// An `SRT_ERRNO` as `srt_getlasterror` returns it.
    private static func code(_ error: SRT_ERRNO) -> Int32 { Int32(truncatingIfNeeded: error.rawValue) }

    /// `duration` in whole milliseconds, rounded up.
    private static func milliseconds(_ duration: Duration) -> Int {
        Int(clamping: duration.inMilliseconds(roundingUp: true))
    }

    /// Sleeps the calling thread (a destination's own thread, never the cooperative pool).
    private static func pause(_ duration: Duration) {
        let (seconds, nanoseconds) = duration.secondsAndNanoseconds
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
