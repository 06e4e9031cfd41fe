/// Hands each playlist a live rendition writes to its ``LiveHLSPublication``, where a server
/// answers blocking playlist reloads (draft-pantos-hls-rfc8216bis 6.2.5.2) from it; does nothing
/// without one (VOD, or live without a server).
struct HLSPlaylistPublisher: Sendable {
    /// Where playlists go, if anywhere.
    let publication: LiveHLSPublication?

    /// Whether a server answers blocking reloads: the playlist says `CAN-BLOCK-RELOAD=YES`.
    var canBlockReload: Bool { publication != nil }

    /// Publishes `playlist`, once its file is written.
    func publish(_ playlist: HLSMediaPlaylist) {
        publication?.publish(playlist)
    }
}
