internal import AACBitstream
package import RTMP
internal import Synchronization

/// Publishing to an RTMP server (`rtmp://`, `rtmps://`): ``RTMPPublishSession``'s state machine
/// over a ``ServerConnection``.
///
/// ``open(_:deadline:)`` connects, does the handshake and `connect` … `publish`, and returns
/// once the server said `NetStream.Publish.Start` and the metadata and the AAC sequence header
/// are sent. Each ``send(frame:timestamp:deadline:)`` first reads what the server sent
/// meanwhile, answering acknowledgements and pings, and fails when the server ended the stream.
///
/// Errors name the destination with its stream key as `****` (server words included):
/// - a refusal (`NetStream.Publish.BadName`, `NetConnection.Connect.Rejected`, …) is
///   ``PublishingError/Reason/refused``, in the server's words: "rtmp://host/app/****: the
///   server refused the stream name: already publishing";
/// - another `error` status is ``PublishingError/Reason/connectionLost``;
/// - bytes that break the protocol are ``PublishingError/Reason/protocolViolation``;
/// - the connection's own failures keep their reason (all passing).
package final class RTMPSession: PublishingSession {
    /// Makes the connection to the server (TCP, or TLS for `rtmps`), waiting no later than the
    /// deadline.
    package typealias Connect = @Sendable (ContinuousClock.Instant) throws(PublishingError) -> any ServerConnection

    private struct Live: Sendable {
        var machine: RTMPPublishSession
        var connection: any ServerConnection
    }

    /// The destination.
    package let url: RTMPURL
    private let connect: Connect
    private let live = Mutex<Live?>(nil)
    private let connection = Mutex<(any ServerConnection)?>(nil)
    private let aborted = Mutex(false)

    /// A session publishing to `url` through the connections `connect` makes.
    package init(url: RTMPURL, connect: @escaping Connect) {
        self.url = url
        self.connect = connect
    }

    /// A session publishing to `destination` (`rtmp[s]://host[:port]/app[/instance]/key`).
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` when the URL cannot be used.
    package convenience init(destination: String, connect: @escaping Connect) throws(PublishingError) {
        do {
            self.init(url: try RTMPURL(destination), connect: connect)
        } catch {
            throw PublishingError(.invalidDestination, error.description)
        }
    }

    /// Connects, does the handshake, `connect`, `createStream` and `publish`, and returns once
    /// the server started the stream and `@setDataFrame` and the AAC sequence header are sent.
    ///
    /// - Throws: ``PublishingError/Reason/refused`` for the server's refusal, in its words; the
    ///   connection's errors; ``PublishingError/Reason/protocolViolation`` for bad bytes.
    package func open(_ stream: PublishedStream, deadline: ContinuousClock.Instant) throws(PublishingError) {
        let config: [UInt8]
        let aac = try stream.aacConfiguration(for: url.masked)
        do { config = try aac.serialized() } catch {
            throw PublishingError(.invalidDestination, "\(url.masked): the stream's AudioSpecificConfig cannot be written: \(error)")
        }
        let metadata = RTMPStreamMetadata(sampleRate: stream.sampleRate, channelCount: stream.channelCount,
                                          bitrate: stream.bitrate, title: stream.title)
        var machine = RTMPPublishSession(url: url, audioSpecificConfig: config, metadata: metadata)
        let connection = try connect(deadline)
        self.connection.withLock { $0 = connection }
        if aborted.withLock({ $0 }) {
            connection.close(graceful: false)
            throw PublishingError(.connectionLost, "\(url.masked): aborted")
        }
        do throws(PublishingError) {
            try connection.send(machine.start(), deadline: deadline)
            while machine.state != .publishing {
                let bytes: [UInt8]
                do { bytes = try connection.receive(deadline: deadline) } catch {
                    throw explained(error, during: machine.state)
                }
                try process(bytes, in: &machine, connection: connection, deadline: deadline)
            }
        } catch {
            connection.close(graceful: false)
            throw masked(error)
        }
        live.withLock { $0 = Live(machine: machine, connection: connection) }
    }

    /// Answers what the server sent meanwhile, then sends `frames` as audio messages in one
    /// write.
    package func send(frames: [QueuedFrame], deadline: ContinuousClock.Instant) throws(PublishingError) {
        try withLive { (live: inout Live) throws(PublishingError) in
            let available = try live.connection.receiveAvailable()
            if !available.isEmpty { try process(available, in: &live.machine, connection: live.connection, deadline: deadline) }
            var bytes: [UInt8] = []
            for frame in frames {
                do { bytes += try live.machine.audio(frame: frame.data[...], sampleTime: frame.timestamp) } catch {
                    throw PublishingError(.protocolViolation, "\(url.masked): \(error)")
                }
            }
            try live.connection.send(bytes, deadline: deadline)
        }
    }

    /// Answers what the server sent meanwhile (acknowledgements, pings), then sends `frame` as
    /// an audio message at `timestamp` samples (milliseconds from the session's first frame).
    ///
    /// - Throws: the server's refusal or end of the stream (an `error` status); the connection's
    ///   errors. The session is closed after an error.
    package func send(frame: ArraySlice<UInt8>, timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError) {
        try withLive { (live: inout Live) throws(PublishingError) in
            let available = try live.connection.receiveAvailable()
            if !available.isEmpty { try process(available, in: &live.machine, connection: live.connection, deadline: deadline) }
            let bytes: [UInt8]
            do { bytes = try live.machine.audio(frame: frame, sampleTime: timestamp) } catch {
                throw PublishingError(.protocolViolation, "\(url.masked): \(error)")
            }
            try live.connection.send(bytes, deadline: deadline)
        }
    }

    /// Sends a new `@setDataFrame` `onMetaData` with `title`.
    package func update(title: String, deadline: ContinuousClock.Instant) throws(PublishingError) {
        try withLive { (live: inout Live) throws(PublishingError) in
            let bytes: [UInt8]
            do { bytes = try live.machine.updateTitle(title) } catch {
                throw PublishingError(.protocolViolation, "\(url.masked): \(error)")
            }
            try live.connection.send(bytes, deadline: deadline)
        }
    }

    /// Sends `FCUnpublish` and `deleteStream` and closes the connection gracefully (nothing
    /// when the session is not open).
    package func finish(deadline: ContinuousClock.Instant) throws(PublishingError) {
        guard let current = live.withLock({ value -> Live? in
            defer { value = nil }
            return value
        }) else { return }
        var machine = current.machine
        defer { current.connection.close(graceful: true) }
        do throws(PublishingError) {
            let available = try current.connection.receiveAvailable()
            if !available.isEmpty { try process(available, in: &machine, connection: current.connection, deadline: deadline) }
            try current.connection.send(machine.finish(), deadline: deadline)
        } catch {
            throw masked(error)
        }
    }

    /// Closes the connection at once, from any thread: a call waiting on it throws.
    package func abort() {
        aborted.withLock { $0 = true }
        connection.withLock { $0 }?.close(graceful: false)
    }

    // MARK: -

    /// Runs `body` on the open session; an error closes it.
    private func withLive(_ body: (inout Live) throws(PublishingError) -> Void) throws(PublishingError) {
        let result = live.withLock { (value: inout Live?) -> Result<Void, PublishingError> in
            guard var current = value else {
                return .failure(PublishingError(.connectionLost, "\(url.masked): the session is not open"))
            }
            do throws(PublishingError) {
                try body(&current)
                value = current
                return .success(())
            } catch {
                value = nil
                current.connection.close(graceful: false)
                return .failure(error)
            }
        }
        if case .failure(let error) = result { throw masked(error) }
    }

    /// Feeds `bytes` to `machine`, sends its answer, and throws on a server's error status.
    private func process(_ bytes: [UInt8], in machine: inout RTMPPublishSession, connection: any ServerConnection,
                         deadline: ContinuousClock.Instant) throws(PublishingError) {
        let answer: [UInt8]
        do { answer = try machine.receive(bytes) } catch {
            throw PublishingError(.protocolViolation, "\(url.masked): \(error)")
        }
        if !answer.isEmpty { try connection.send(answer, deadline: deadline) }
        for event in machine.takeEvents() {
            guard case .error(let status) = event else { continue }
            let reason: PublishingError.Reason = status.code == "NetStream.Publish.BadName" ? .nameInUse
                : status.isRefusal ? .refused : .connectionLost
            throw PublishingError(reason, "\(url.masked): \(status.explanation)")
        }
    }

    /// The connection's `error` while waiting for the server in `state`, explained where the
    /// state says more: nginx-rtmp closes the connection on an unknown application.
    private func explained(_ error: PublishingError, during state: RTMPPublishSession.State) -> PublishingError {
        guard error.reason == .connectionLost else { return error }
        switch state {
        case .handshaking:
            return PublishingError(.connectionLost, "\(url.masked): the server closed the connection during the RTMP handshake (\(error.message))")
        case .connecting:
            return PublishingError(.connectionLost,
                                   "\(url.masked): the server closed the connection after `connect` (is the application \"\(url.application)\" right?)")
        default:
            return error
        }
    }

    /// `error` with the stream key shown as `****` wherever it appears (servers repeat it).
    private func masked(_ error: PublishingError) -> PublishingError {
        var message = error.message
        for secret in [url.streamKey, String(url.streamKey.prefix { $0 != "?" })] where secret.count >= 3 {
            message = message.replacing(secret, with: "****")
        }
        return PublishingError(error.reason, message)
    }
}
