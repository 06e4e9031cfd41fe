internal import MPEGTS
internal import Synchronization

/// An SRT destination as a session factory: MPEG-TS (``/MPEGTS/TransportStreamMuxer``) over an
/// `SRTConnection`.
struct SRTEndpoint: LiveEndpoint {
    let destination: SRTDestination

    init(url: String) throws(PublishingError) { destination = try SRTDestination(url: url) }

    var maskedURL: String { destination.description }
    var host: String { destination.host }
    var port: Int { destination.port }

    func makeSession(connect: @escaping TCPConnector, statistics: DestinationStatistics) -> any PublishingSession {
        SRTSession(destination: destination) { destination, deadline throws(PublishingError) in
            CountedConnection(try SRTConnection.connect(to: destination, deadline: deadline), statistics: statistics)
        }
    }
}

/// A caller connection to an SRT listener carrying one MPEG-TS program: AAC in ADTS, MP3, or
/// Opus (``/MPEGTS/TransportStreamMuxer/init(format:framesPerPES:)``).
///
/// Opening sends the PAT and PMT at once (a receiver that joins, or a reconnect, can start
/// decoding from the first PES); the muxer repeats them every 100 ms of audio. Finishing
/// flushes the PES being grouped and closes with SRT's linger, so that the end of the stream
/// is delivered (``SRTConnection/close(graceful:)``).
final class SRTSession: PublishingSession {
    private struct State {
        var connection: (any ServerConnection)?
        var muxer: TransportStreamMuxer?
    }

    private let destination: SRTDestination
    private let connect: @Sendable (SRTDestination, ContinuousClock.Instant) throws(PublishingError) -> any ServerConnection
    private let state = Mutex(State())

    init(destination: SRTDestination,
         connect: @escaping @Sendable (SRTDestination, ContinuousClock.Instant) throws(PublishingError) -> any ServerConnection) {
        self.destination = destination
        self.connect = connect
    }

    func open(_ stream: PublishedStream, deadline: ContinuousClock.Instant) throws(PublishingError) {
        var muxer: TransportStreamMuxer
        do { muxer = try TransportStreamMuxer(format: stream.format) } catch {
            throw PublishingError(.invalidDestination, "\(destination): the stream cannot go in MPEG-TS: \(error)")
        }
        if stream.carriesTimedMetadata { muxer.carryTimedMetadata() }
        let connection = try connect(destination, deadline)
        do {
            try connection.send(muxer.programTables(), deadline: deadline)
        } catch {
            connection.close(graceful: false)
            throw error
        }
        state.withLock { $0 = State(connection: connection, muxer: muxer) }
    }

    func send(frame: ArraySlice<UInt8>, timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError) {
        let (connection, bytes) = try state.withLock { state throws(PublishingError) -> ((any ServerConnection)?, [UInt8]) in
            guard var muxer = state.muxer else { return (nil, []) }
            defer { state.muxer = muxer }
            do { return (state.connection, try muxer.write(frame: frame, sampleTime: timestamp)) } catch {
                throw PublishingError(.protocolViolation, "\(destination): \(error)")
            }
        }
        guard let connection else { throw PublishingError(.connectionLost, "\(destination): not connected") }
        if !bytes.isEmpty { try connection.send(bytes, deadline: deadline) }
    }

    /// Sends the transport packets of `frames` in one write.
    func send(frames: [QueuedFrame], deadline: ContinuousClock.Instant) throws(PublishingError) {
        let (connection, bytes) = try state.withLock { state throws(PublishingError) -> ((any ServerConnection)?, [UInt8]) in
            guard var muxer = state.muxer else { return (nil, []) }
            defer { state.muxer = muxer }
            var bytes: [UInt8] = []
            for frame in frames {
                do { bytes += try muxer.write(frame: frame.data, sampleTime: frame.timestamp) } catch {
                    throw PublishingError(.protocolViolation, "\(destination): \(error)")
                }
            }
            return (state.connection, bytes)
        }
        guard let connection else { throw PublishingError(.connectionLost, "\(destination): not connected") }
        if !bytes.isEmpty { try connection.send(bytes, deadline: deadline) }
    }

    /// Sends `tag` as a PES packet of the timed ID3 stream at `timestamp`.
    func send(timedMetadata tag: [UInt8], timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError) {
        let (connection, bytes) = state.withLock { state -> ((any ServerConnection)?, [UInt8]) in
            guard var muxer = state.muxer else { return (nil, []) }
            defer { state.muxer = muxer }
            return (state.connection, muxer.write(timedMetadata: tag, sampleTime: timestamp))
        }
        guard let connection else { throw PublishingError(.connectionLost, "\(destination): not connected") }
        if !bytes.isEmpty { try connection.send(bytes, deadline: deadline) }
    }

    func finish(deadline: ContinuousClock.Instant) throws(PublishingError) {
        let (connection, tail) = state.withLock { state -> ((any ServerConnection)?, [UInt8]) in
            defer { state = State() }
            guard var muxer = state.muxer else { return (state.connection, []) }
            return (state.connection, muxer.flush())
        }
        guard let connection else { return }
        defer { connection.close(graceful: true) }
        if !tail.isEmpty { try connection.send(tail, deadline: deadline) }
    }

    func abort() {
        let connection = state.withLock { state -> (any ServerConnection)? in
            defer { state = State() }
            return state.connection
        }
        connection?.close(graceful: false)
    }
}
