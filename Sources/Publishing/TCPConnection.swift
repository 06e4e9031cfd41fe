internal import Dispatch
internal import MediaCore
#if canImport(Glibc)
internal import Glibc
#endif
internal import NIOCore
internal import NIOPosix
internal import NIOSSL
internal import NIOTLS
internal import ObjectStorage
internal import Synchronization

/// A TCP connection to a server, optionally over TLS (`rtmps://`, `icecasts://`), on SwiftNIO:
/// the ``ServerConnection`` of RTMP and Icecast.
///
/// The calls block the destination's thread (never an event loop's) with a deadline each: a
/// write waits until NIO has handed the bytes to the kernel, so a server that stops reading
/// makes ``send(_:deadline:)`` time out instead of buffering without bound.
package final class TCPConnection: ServerConnection {
    private let channel: any Channel
    private let inbound: Inbound

    private init(channel: any Channel, inbound: Inbound) {
        self.channel = channel
        self.inbound = inbound
    }

    /// Connects to `host`:`port` (resolving the name now, A and AAAA), with TLS when `tls`
    /// (verifying the server's certificate for `host` against the system's roots, or the PEM
    /// file `trustRoots` names), waiting no later than `deadline`.
    ///
    /// - Throws: ``PublishingError/Reason/unresolved``, ``PublishingError/Reason/connectionFailed``
    ///   or ``PublishingError/Reason/timedOut``; `describing` names the server in each message.
    package static func connect(host: String, port: Int, tls: Bool, trustRoots: String? = nil, describing name: String,
                                deadline: ContinuousClock.Instant) throws(PublishingError) -> TCPConnection {
        let inbound = Inbound()
        let sslContext: NIOSSLContext?
        if tls {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let trustRoots { configuration.trustRoots = .file(trustRoots) }
            do { sslContext = try NIOSSLContext(configuration: configuration) } catch {
                throw PublishingError(.connectionFailed, "\(name): cannot set up TLS: \(error)")
            }
        } else {
            sslContext = nil
        }
        let timeout = max(Duration.milliseconds(1), deadline - .now)
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.nanoseconds(timeout.inNanoseconds))
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        // The handshake's outcome has somewhere to go before it can happen.
                        inbound.expectHandshake(channel.eventLoop.makePromise(of: Void.self))
                        // SNI and the name checked: a host name, never an address literal.
                        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
                        let handler = try NIOSSLClientHandler(context: sslContext, serverHostname: isAddress ? nil : host)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    try channel.pipeline.syncOperations.addHandler(InboundHandler(inbound: inbound))
                }
            }
        let future = bootstrap.connect(host: host, port: port)
        let channel: any Channel
        do {
            channel = try wait(for: future, until: deadline, what: "\(name): connecting")
        } catch let error as PublishingError {
            // A connection made after we stopped waiting is closed when it comes.
            future.whenSuccess { $0.close(promise: nil) }
            throw error
        } catch {
            throw classify(error, name: name)
        }
        if let handshake = inbound.handshake {
            // The TLS handshake finishes on the first exchange; wait for it so that a
            // certificate the server cannot prove fails here, not at the first write.
            do {
                try wait(for: handshake, until: deadline, what: "\(name): TLS handshake")
            } catch {
                channel.close(promise: nil)
                if let error = error as? PublishingError, error.reason == .untrustedServer {
                    throw PublishingError(.untrustedServer, "\(name): the TLS handshake failed: the server's certificate is not trusted for "
                                          + "\(host) (a private authority: --ca-file), or the server does not speak TLS on port \(port)")
                }
                if let error = error as? PublishingError { throw PublishingError(error.reason, "\(name): \(error.message)") }
                throw PublishingError(.connectionFailed, "\(name): TLS handshake failed: \(error)")
            }
        }
        return TCPConnection(channel: channel, inbound: inbound)
    }

    package func send(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(PublishingError) {
        if let failure = inbound.failure { throw failure }
        let future = channel.writeAndFlush(ByteBuffer(bytes: bytes))
        do {
            try Self.wait(for: future, until: deadline, what: "sending")
        } catch let error as PublishingError {
            if error.reason == .timedOut { channel.close(promise: nil) }
            throw error
        } catch {
            throw inbound.failure ?? PublishingError(.connectionLost, "the connection ended: \(error)")
        }
    }

    package func receive(deadline: ContinuousClock.Instant) throws(PublishingError) -> [UInt8] {
        try inbound.take(until: deadline)
    }

    package func receiveAvailable() throws(PublishingError) -> [UInt8] {
        try inbound.take(until: nil)
    }

    package func close(graceful: Bool) {
        guard channel.isActive else { return }
        if graceful {
            // Every write has completed (each send waits for it): half-close, so that the
            // server reads the end of the stream, then wait briefly for it to close its side.
            let done = DispatchSemaphore(value: 0)
            channel.close(mode: .output).whenComplete { _ in done.signal() }
            done.wait(for: .seconds(2))
            _ = inbound.waitForEnd(timeout: .seconds(2))
        }
        channel.close(promise: nil)
    }

    deinit { channel.close(promise: nil) }

    /// Waits for `future` on this (non-event-loop) thread, until `deadline`.
    private static func wait<Value: Sendable>(for future: EventLoopFuture<Value>, until deadline: ContinuousClock.Instant,
                                              what: String) throws -> Value {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Value, any Error>?>(nil)
        future.whenComplete { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        let remaining = deadline - .now
        guard done.wait(for: remaining) == .success else {
            throw PublishingError(.timedOut, "\(what): no progress for \(Self.seconds(remaining)) s")
        }
        return try result.withLock { $0! }.get()
    }

    private static func seconds(_ duration: Duration) -> String {
        String(Int(duration.inSeconds.rounded(.up)))
    }

    /// The words for a socket error: the system's for an `errno` (`Connection refused`), as
    /// `strerror(3)` gives them; the error's own otherwise.
    private static func reason(_ error: any Error) -> String { socketErrorWords(error) }

    /// The reason for a failed connect: a name that did not resolve, a refusal, a timeout.
    private static func classify(_ error: any Error, name: String) -> PublishingError {
        if let error = error as? NIOConnectionError {
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return PublishingError(.unresolved, "\(name): the host name \(error.host) does not resolve")
            }
            let causes = error.connectionErrors.map { Self.reason($0.error) }
            return PublishingError(.connectionFailed, "\(name): cannot connect to \(error.host):\(error.port): "
                                   + (causes.isEmpty ? "\(error)" : Set(causes).sorted().joined(separator: "; ")))
        }
        if let error = error as? ChannelError, case .connectTimeout = error {
            return PublishingError(.timedOut, "\(name): the server did not answer the connection in time")
        }
        if error is SocketAddressError {
            return PublishingError(.unresolved, "\(name): the host name does not resolve")
        }
        return PublishingError(.connectionFailed, "\(name): cannot connect: \(error)")
    }
}

/// What the server sent, waiting for a reader: bytes, the end, an error.
private final class Inbound: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var ended = false
        var failure: PublishingError?
        var handshake: EventLoopPromise<Void>?
        var handshakeResult: EventLoopFuture<Void>?
    }

    /// What arrives and is not read is bounded: a server has no reason to send a publisher more.
    static let limit = 1 << 20

    private let state = Mutex(State())
    private let arrived = DispatchSemaphore(value: 0)

    var failure: PublishingError? { state.withLock { $0.failure } }

    func append(_ buffer: ByteBuffer) {
        let overflow = state.withLock { state -> Bool in
            guard state.bytes.count + buffer.readableBytes <= Self.limit else { return true }
            state.bytes += buffer.readableBytesView
            return false
        }
        if overflow {
            end(PublishingError(.protocolViolation, "the server sent more than \(Self.limit) bytes that were not read"))
        }
        arrived.signal()
    }

    /// The TLS handshake's outcome, once ``expectHandshake(_:)`` was called.
    var handshake: EventLoopFuture<Void>? { state.withLock { $0.handshakeResult } }

    /// Keeps `promise` for the TLS handshake: ``handshakeCompleted()`` or the end of the
    /// connection completes it. Called from the channel's initializer, before any event.
    func expectHandshake(_ promise: EventLoopPromise<Void>) {
        state.withLock { state in
            state.handshake = promise
            state.handshakeResult = promise.futureResult
        }
    }

    func end(_ failure: PublishingError?) {
        let handshake = state.withLock { state -> EventLoopPromise<Void>? in
            state.ended = true
            if state.failure == nil { state.failure = failure ?? PublishingError(.connectionLost, "the server closed the connection") }
            defer { state.handshake = nil }
            return state.handshake
        }
        handshake?.fail(failure ?? PublishingError(.connectionLost, "the server closed the connection"))
        arrived.signal()
    }

    func handshakeCompleted() {
        let handshake = state.withLock { state -> EventLoopPromise<Void>? in
            defer { state.handshake = nil }
            return state.handshake
        }
        handshake?.succeed()
    }

    func take(until deadline: ContinuousClock.Instant?) throws(PublishingError) -> [UInt8] {
        while true {
            let taken = state.withLock { state -> (bytes: [UInt8], failure: PublishingError?) in
                if !state.bytes.isEmpty {
                    defer { state.bytes = [] }
                    return (state.bytes, nil)
                }
                return ([], state.ended ? state.failure : nil)
            }
            if !taken.bytes.isEmpty { return taken.bytes }
            if let failure = taken.failure { throw failure }
            guard let deadline else { return [] }
            let remaining = deadline - .now
            guard remaining > .zero else { throw PublishingError(.timedOut, "the server did not answer in time") }
            arrived.wait(for: min(remaining, .seconds(3600)))
        }
    }

    /// Waits until the server closed its side (after our half-close), at most `timeout`.
    func waitForEnd(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !state.withLock({ $0.ended }) {
            let remaining = deadline - .now
            guard remaining > .zero else { return false }
            arrived.wait(for: remaining)
        }
        return true
    }
}

/// Hands what arrives to `Inbound`; notes the TLS handshake and the end of the connection.
private final class InboundHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let inbound: Inbound

    init(inbound: Inbound) { self.inbound = inbound }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        inbound.append(unwrapInboundIn(data))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            inbound.handshakeCompleted()
        } else if let event = event as? ChannelEvent, case .inputClosed = event {
            inbound.end(nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbound.end(nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let failure = error as? NIOSSLError, case .handshakeFailed = failure {
            inbound.end(PublishingError(.untrustedServer, "the TLS handshake failed: \(failure)"))
        } else {
            inbound.end(PublishingError(.connectionLost, "the connection failed: \(error)"))
        }
        context.close(promise: nil)
    }
}
