public import NIOCore
public import NIOHTTPTypes

/// Closes a connection whose next request head has not arrived whole within a deadline: the
/// defence against slowloris, a client that opens many connections and trickles each request's
/// header fields a byte at a time so that none is ever complete.
///
/// The clock starts when the connection opens and again once a response has ended (its last
/// byte handed to the socket) with no other request in hand; it stops when a request head has
/// been read whole. A request being answered (a blocking playlist reload that waits, a large
/// segment sent to a slow reader) is never cut short. An idle timeout is no defence: a byte a
/// second keeps a connection busy forever, while this deadline counts from the start of the head.
///
/// One handler per connection, after the HTTP/1 codec (it reads request parts and sees response
/// parts): ``LiveHLSServer/start(host:port:headerDeadline:stallLimit:tls:)`` adds it through Hummingbird's
/// `HTTP1Channel.Configuration.additionalChannelHandlers`; an app of your own can do the same:
///
/// ```swift
/// let app = Application(router: router, server: .http1(configuration: .init(
///     additionalChannelHandlers: [RequestHeadDeadline(.seconds(10))])))
/// ```
///
/// Not `Sendable`: it lives on its channel's event loop.
public final class RequestHeadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    /// Request parts, from the HTTP/1 codec.
    public typealias InboundIn = HTTPRequestPart
    /// Request parts, passed on unchanged.
    public typealias InboundOut = HTTPRequestPart
    /// Response parts, from the server.
    public typealias OutboundIn = HTTPResponsePart
    /// Response parts, passed on unchanged.
    public typealias OutboundOut = HTTPResponsePart

    /// The deadline the servers of this module use unless told otherwise: 10 seconds.
    public static let defaultDeadline: Duration = .seconds(10)

    private let deadline: TimeAmount
    private let stallLimit: TimeAmount
    private var timer: Scheduled<Void>?
    /// Runs while the socket takes no more bytes (the client stopped reading).
    private var stallTimer: Scheduled<Void>?
    /// Requests whose head has been read and whose response has not ended.
    private var unanswered = 0
    /// Out of the pipeline: a write's completion must not start the clock again.
    private var removed = false

    /// A handler that closes its connection when a request head takes longer than `deadline`.
    /// How long a response may wait for a client that stops reading (the socket takes no more
    /// bytes) before the connection is closed: 60 s.
    public static let defaultStallLimit: Duration = .seconds(60)

    /// A handler closing a connection whose request head takes longer than `deadline`, or
    /// whose client takes no bytes of a response for `stallLimit`.
    public init(_ deadline: Duration = RequestHeadDeadline.defaultDeadline, stallLimit: Duration = RequestHeadDeadline.defaultStallLimit) {
        self.deadline = Self.timeAmount(deadline)
        self.stallLimit = Self.timeAmount(stallLimit)
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(max(0, duration.inNanoseconds))
    }

    /// A socket that stops taking bytes starts the stall clock; one that takes them again stops it.
    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stallTimer?.cancel()
            stallTimer = nil
        } else if stallTimer == nil, !removed {
            stallTimer = context.eventLoop.assumeIsolated().scheduleTask(in: stallLimit) { [self] in
                stallTimer = nil
                if !context.channel.isWritable { context.close(promise: nil) }
            }
        }
        context.fireChannelWritabilityChanged()
    }

    /// Starts the clock if the connection is open already.
    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    /// Stops the clock.
    public func handlerRemoved(context: ChannelHandlerContext) {
        removed = true
        stop()
        stopStallClock()
    }

    /// Starts the clock: the connection has opened.
    public func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    /// Stops the clock: the connection has closed.
    public func channelInactive(context: ChannelHandlerContext) {
        stop()
        stopStallClock()
        context.fireChannelInactive()
    }

    /// Stops the clock when a request head has been read whole.
    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            unanswered += 1
            stop()
        }
        context.fireChannelRead(data)
    }

    /// Starts the clock again once a response's end has been written and no request is left.
    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        unanswered = max(0, unanswered - 1)
        // The clock starts again once the response's end has left for the socket, so that a
        // slow reader's response still queued here is not closed under it.
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { [self] result in
            promise?.completeWith(result)
            if case .success = result, unanswered == 0, context.channel.isActive { start(context) }
        }
        context.write(data, promise: written)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard timer == nil, !removed else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: deadline) { [self] in
            timer = nil
            // A head read since (its timer stopped) never gets here; this is a head not finished.
            if unanswered == 0 { context.close(promise: nil) }
        }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
    }

    private func stopStallClock() {
        stallTimer?.cancel()
        stallTimer = nil
    }
}

@available(*, unavailable)
extension RequestHeadDeadline: Sendable {}
