internal import MediaCore
internal import Synchronization
internal import AACBitstream
internal import AudioBitstreams

/// A source connection to an Icecast mount: the stream over one HTTP request body, as its codec
/// is sent: AAC as ADTS (`audio/aac`), MP3 as its frames (`audio/mpeg`), Opus in Ogg
/// (`audio/ogg`, RFC 7845).
///
/// The request is `PUT /mount HTTP/1.1` (Icecast 2.4 and later), or `SOURCE /mount HTTP/1.0`
/// when the server does not know PUT (older Icecast, some relays), with the content type,
/// Basic authorization, and the stream's `ice-name`, `ice-description`, `ice-genre` and
/// `ice-audio-info`. The body lasts as long as the stream; closing the connection ends it.
///
/// The title (the song Icecast shows): for AAC and MP3, a second request to
/// `/admin/metadata?mode=updinfo`, which Icecast inserts into the stream as ICY metadata for
/// listeners that ask for it. An Ogg stream's title is its comment header's `TITLE`, which
/// Icecast reads itself: a new title ends the logical stream and starts another, chained, with
/// the same OpusHead and the new OpusTags (Ogg's only way to change a comment mid-stream).
/// FFmpeg, VLC and Icecast follow the chain; a player that does not (some browsers) stops at
/// the first stream's end.
///
/// A 401 answer is a wrong user or password, a 403 a mount in use or not allowed: both are
/// permanent refusals (``PublishingError/Reason/refused``).
package final class IcecastSession: PublishingSession {
    private let destination: IcecastDestination
    private let connect: @Sendable (_ host: String, _ port: Int, _ tls: Bool, _ deadline: ContinuousClock.Instant)
        throws(PublishingError) -> any ServerConnection
    private let connection = Mutex<(any ServerConnection)?>(nil)
    private let framing = Mutex<Framing?>(nil)
    private let userAgent: String

    /// A session to `destination`, connecting with `connect`.
    package init(destination: IcecastDestination, userAgent: String = "KeyFrameKit",
                 connect: @escaping @Sendable (_ host: String, _ port: Int, _ tls: Bool, _ deadline: ContinuousClock.Instant)
                     throws(PublishingError) -> any ServerConnection) {
        self.destination = destination
        self.userAgent = userAgent
        self.connect = connect
    }

    /// How the packets go into the body.
    private enum Framing {
        /// AAC: an ADTS header before each frame.
        case adts(ADTSHeader)
        /// MP3: the frames as they are.
        case mpegAudio
        /// Opus: Ogg pages of one logical stream; a title change chains another.
        case ogg(OggStreamWriter, head: OpusHeader, granule: Int64, chain: UInt32)
    }

    package func open(_ stream: PublishedStream, deadline: ContinuousClock.Instant) throws(PublishingError) {
        let framing: Framing
        switch stream.format.codec {
        case .aac:
            let aac = try stream.aacConfiguration(for: destination.maskedURL)
            do { framing = .adts(try ADTSHeader(audioSpecificConfig: aac, frameLength: 7)) } catch {
                throw PublishingError(.invalidDestination, "\(destination.maskedURL): the stream cannot be sent as ADTS: \(error)")
            }
        case .mp3:
            framing = .mpegAudio
        case .opus:
            let head: OpusHeader
            do { head = try OpusHeader(bytes: stream.format.decoderConfiguration) } catch {
                throw PublishingError(.invalidDestination, "\(destination.maskedURL): the Opus stream's OpusHead: \(error)")
            }
            framing = .ogg(OggStreamWriter(serialNumber: 1, pageDuration: 4800), head: head, granule: 0, chain: 0)
        default:
            throw PublishingError(.invalidDestination, "\(destination.maskedURL): Icecast takes AAC, MP3 or Opus, not \(stream.format.codec)")
        }
        self.framing.withLock { $0 = framing }
        do {
            try start(method: "PUT", version: "HTTP/1.1", stream: stream, deadline: deadline)
        } catch let error where error.reason == .protocolViolation {
            // An Icecast before 2.4 answers PUT with an error (or not in HTTP): speak its SOURCE
            // method.
            try start(method: "SOURCE", version: "HTTP/1.0", stream: stream, deadline: deadline)
        }
        if case .ogg = framing {
            // The Ogg stream's headers open the body; its comment header carries the title.
            try send(bytes: oggHeaders(title: stream.title), deadline: deadline)
        } else if let title = stream.title {
            // The title is a courtesy: a server that refuses it still gets the audio.
            try? update(title: title, deadline: deadline)
        }
    }

    /// The content type of the body.
    private var contentType: String {
        switch framing.withLock({ $0 }) {
        case .mpegAudio?: "audio/mpeg"
        case .ogg?: "audio/ogg"
        default: "audio/aac"
        }
    }

    /// The header pages of a (new, chained) Ogg Opus logical stream whose `OpusTags` holds
    /// `title`, and the stream's writer reset to follow them.
    private func oggHeaders(title: String?) -> [UInt8] {
        framing.withLock { framing -> [UInt8] in
            guard case .ogg(_, let opening, _, let chain)? = framing else { return [] }
            let head0 = opening
            // Each chained stream a serial number of its own.
            var writer = OggStreamWriter(serialNumber: 0x4B46_0000 | (chain & 0xFFFF), pageDuration: 4800)
            // A chained stream continues the encoder's output: nothing of it is priming.
            var head = head0
            if chain > 0 { head.preSkip = 0 }
            var comment = VorbisComment(vendor: userAgent)
            if let title { comment.fields.append(.init("TITLE", title)) }
            let pages = writer.append(head.bytes, granulePosition: 0) + writer.flush()
                + writer.append(comment.opusTagsPacket, granulePosition: 0) + writer.flush()
            framing = .ogg(writer, head: opening, granule: 0, chain: chain + 1)
            return pages.flatMap(\.bytes)
        }
    }

    private func send(bytes: [UInt8], deadline: ContinuousClock.Instant) throws(PublishingError) {
        guard let connection = connection.withLock({ $0 }) else { throw PublishingError(.connectionLost, "\(destination.maskedURL): not connected") }
        try connection.send(bytes, deadline: deadline)
    }

    package func send(frame: ArraySlice<UInt8>, timestamp: Int64, deadline: ContinuousClock.Instant) throws(PublishingError) {
        try send(frames: [QueuedFrame(data: Array(frame), timestamp: timestamp)], deadline: deadline)
    }

    /// Sends `frames` in one write, framed for the codec.
    package func send(frames: [QueuedFrame], deadline: ContinuousClock.Instant) throws(PublishingError) {
        guard let connection = connection.withLock({ $0 }), let current = framing.withLock({ $0 }) else {
            throw PublishingError(.connectionLost, "\(destination.maskedURL): not connected")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frames.reduce(0) { $0 + $1.data.count + 7 })
        switch current {
        case .adts(var header):
            for frame in frames {
                header.frameLength = 7 + frame.data.count
                do { bytes += try header.serialized() } catch {
                    throw PublishingError(.protocolViolation, "\(destination.maskedURL): a frame of \(frame.data.count) bytes does not fit ADTS: \(error)")
                }
                bytes += frame.data
            }
        case .mpegAudio:
            for frame in frames { bytes += frame.data }
        case .ogg(var writer, let head, var granule, let chain):
            for frame in frames {
                granule += Int64(OpusPacket.sampleCount(frame.data) ?? 960)
                bytes += writer.append(frame.data, granulePosition: granule).flatMap(\.bytes)
            }
            framing.withLock { $0 = .ogg(writer, head: head, granule: granule, chain: chain) }
        }
        try connection.send(bytes, deadline: deadline)
        // Icecast says nothing while it takes a source; anything it says now is its end.
        _ = try connection.receiveAvailable()
    }

    package func update(title: String, deadline: ContinuousClock.Instant) throws(PublishingError) {
        if case .ogg(var writer, _, let granule, _)? = framing.withLock({ $0 }) {
            // End this logical stream (its last page carries the packets held back), then chain
            // a new one whose comment header has the title.
            let end = writer.flush(endOfStream: true, granulePosition: granule).flatMap(\.bytes)
            try send(bytes: end + oggHeaders(title: title), deadline: deadline)
            return
        }
        let query = "mode=updinfo&mount=\(PercentEncoding.encoded(destination.mount))&song=\(PercentEncoding.encoded(title))&charset=UTF-8"
        let admin = try connect(destination.host, destination.port, destination.usesTLS, deadline)
        defer { admin.close(graceful: false) }
        try admin.send(Array(("GET /admin/metadata?\(query) HTTP/1.0\r\n" + commonHeaders + "\r\n").utf8), deadline: deadline)
        let answer = try Self.readHead(from: admin, deadline: deadline, name: destination.maskedURL)
        guard answer.status == 200 else {
            throw PublishingError(answer.status == 401 || answer.status == 403 ? .refused : .protocolViolation,
                                  "\(destination.maskedURL): the server did not take the title: \(answer.status) \(answer.reason)")
        }
    }

    package func finish(deadline: ContinuousClock.Instant) throws(PublishingError) {
        // The end of the body is the end of the stream: close our side and let the server
        // read to the end.
        connection.withLock { connection in
            connection?.close(graceful: true)
            connection = nil
        }
    }

    package func abort() {
        connection.withLock { connection in
            connection?.close(graceful: false)
            connection = nil
        }
    }

    // MARK: - The request

    private var commonHeaders: String {
        var credentials = Array("\(destination.user):\(destination.password)".utf8)
        defer { credentials.removeAll() }
        return "Host: \(URLReference.bracketed(destination.host)):\(destination.port)\r\n"
            + "Authorization: Basic \(Base64.encode(credentials))\r\n"
            + "User-Agent: \(userAgent)\r\n"
    }

    private func start(method: String, version: String, stream: PublishedStream, deadline: ContinuousClock.Instant) throws(PublishingError) {
        let connection = try connect(destination.host, destination.port, destination.usesTLS, deadline)
        var head = "\(method) \(PercentEncoding.encoded(destination.mount, keepingSlashes: true)) \(version)\r\n" + commonHeaders
        head += "Content-Type: \(contentType)\r\n"
        head += "Ice-Public: 0\r\n"
        head += "Ice-Audio-Info: ice-samplerate=\(stream.sampleRate);ice-channels=\(stream.channelCount);ice-bitrate=\(stream.bitrate / 1000)\r\n"
        head += "Ice-Bitrate: \(stream.bitrate / 1000)\r\n"
        if let title = stream.title { head += "Ice-Name: \(Self.headerValue(title))\r\n" }
        if let description = stream.description { head += "Ice-Description: \(Self.headerValue(description))\r\n" }
        if let genre = stream.genre { head += "Ice-Genre: \(Self.headerValue(genre))\r\n" }
        if method == "PUT" { head += "Expect: 100-continue\r\n" }
        head += "\r\n"
        do throws(PublishingError) {
            try connection.send(Array(head.utf8), deadline: deadline)
            let answer = try Self.readHead(from: connection, deadline: deadline, name: destination.maskedURL)
            switch answer.status {
            case 100, 200: break
            case 401:
                throw PublishingError(.refused, "\(destination.maskedURL): the server refused the source login (401 \(answer.reason)): check the user and password")
            case 403:
                throw PublishingError(.nameInUse, "\(destination.maskedURL): the server refused the mount (403 \(answer.reason)): it is in use, or not allowed for this source")
            case 400 where method == "PUT", 405 where method == "PUT", 501 where method == "PUT":
                throw PublishingError(.protocolViolation, "\(destination.maskedURL): the server does not take the \(method) method (\(answer.status) \(answer.reason))")
            case 408, 429, 500...:
                // Busy, overloaded, restarting: worth another try.
                throw PublishingError(.connectionFailed, "\(destination.maskedURL): the server answered \(answer.status) \(answer.reason)")
            default:
                // Any other answer (a 404 mount, a redirect, a 400 to SOURCE) will not change.
                throw PublishingError(.refused, "\(destination.maskedURL): the server answered \(answer.status) \(answer.reason)")
            }
        } catch {
            connection.close(graceful: false)
            throw error
        }
        self.connection.withLock { $0 = connection }
    }

    /// An HTTP response's status line (the headers after it are read and dropped).
    private static func readHead(from connection: any ServerConnection, deadline: ContinuousClock.Instant,
                                 name: String) throws(PublishingError) -> (status: Int, reason: String) {
        var bytes: [UInt8] = []
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while !bytes.suffix(bytes.count).containsSequence(end) {
            guard bytes.count < 16_384 else {
                throw PublishingError(.protocolViolation, "\(name): the server's answer has no end of headers in 16 KiB")
            }
            do { bytes += try connection.receive(deadline: deadline) } catch {
                if error.reason == .connectionLost, let line = statusLine(bytes) { return line }
                throw PublishingError(error.reason, "\(name): no answer from the server: \(error.message)")
            }
        }
        guard let line = statusLine(bytes) else {
            throw PublishingError(.protocolViolation, "\(name): the server's answer is not HTTP: \(String(decoding: bytes.prefix(40), as: UTF8.self))")
        }
        return line
    }

    private static func statusLine(_ bytes: [UInt8]) -> (status: Int, reason: String)? {
        guard let lineEnd = bytes.firstIndex(of: UInt8(ascii: "\r")) ?? bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let parts = String(decoding: bytes[..<lineEnd], as: UTF8.self).split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/") || parts[0].hasPrefix("ICE/"), let status = Int(parts[1]) else { return nil }
        return (status, parts.count > 2 ? String(parts[2]) : "")
    }

    /// A header value on one line: control characters become spaces.
    private static func headerValue(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in the array.
    fileprivate func containsSequence(_ needle: [UInt8]) -> Bool {
        guard count >= needle.count else { return false }
        for start in 0...(count - needle.count) where self[start..<(start + needle.count)].elementsEqual(needle) { return true }
        return false
    }
}
