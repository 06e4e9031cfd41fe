internal import RTMP

/// An RTMP destination as a session factory: `RTMPSession` over a `TCPConnection` (TLS for
/// `rtmps://`).
struct RTMPEndpoint: LiveEndpoint {
    let url: RTMPURL

    init(url text: String) throws(PublishingError) {
        do { url = try RTMPURL(text) } catch {
            throw PublishingError(.invalidDestination, "\(error)")
        }
    }

    var maskedURL: String { url.masked }
    var host: String { url.host }
    var port: Int { url.port }

    func makeSession(connect: @escaping TCPConnector, statistics: DestinationStatistics) -> any PublishingSession {
        let url = self.url
        return RTMPSession(url: url) { deadline throws(PublishingError) in try connect(url.host, url.port, url.isSecure, deadline) }
    }
}
