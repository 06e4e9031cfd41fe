internal import MediaCore

/// The player page an origin answers `/` with: an `<audio>` element fed by a small Media Source
/// Extensions loader of ours (Debian has no hls.js), for a package (VOD) and for a live
/// rendition (blocking playlist reload), falling back to the browser's own HLS where MSE is
/// missing.
///
/// Gapless from our own signals: the init segment's edit list moves the encoder's priming
/// before 0, where the source buffer's `appendWindowStart` (0) trims it; a finished playlist's
/// `EXTINF` sum is the priming plus the valid length (the last sample's `trun` duration ends
/// there), so that sum in the track's timescale less the edit's media time is the exact valid
/// length, which becomes `appendWindowEnd`. Chromium trims a frame at the window by how far the
/// frame's own end crosses it, so the loader gives the last sample its whole frame back before
/// appending it, and the padding is trimmed too. The page is plain HTML: labelled controls
/// (`aria-labelledby`: `<label for>` cannot name an `<audio>`, which is not labelable), a
/// chapter list of buttons (from `chapters.vtt` beside the playlist, when there is one), no
/// autoplay, and for a live stream the latency behind live announced politely (`aria-live`).
///
/// The page names what it plays from the init segment's iTunes items (`moov/udta/meta/ilst`,
/// which packaging copies from the input): `©nam` is the document's title, the heading and the
/// audio's name, `©ART` (else `aART`) the artist under it, and the first `covr` picture (type 13
/// JPEG, 14 PNG) an `<img>` from a Blob URL of that MIME type; without a title, the playlist's
/// file name. The boxes are read bounds-checked (a size of 1 is a largesize, 0 runs to the
/// parent's end, one that does not fit ends the list), text goes in by `textContent`, and a
/// damaged item list leaves the name to the file. Beside it, the bitrate of the rendition
/// playing: a ladder variant's `BANDWIDTH` and `AVERAGE-BANDWIDTH`, else a media playlist's
/// `EXT-X-BITRATE`, else its segments' bytes over their durations as they are fetched.
extension HLSOrigin {
    /// The playlist the page plays: the live playlist, else `master.m3u8` when the directory
    /// has one (a ladder), else ``playlistName``.
    var pagePlaylist: String {
        if publication == nil, FileSystemCalls.exists(directory.appending("master.m3u8")) { return "master.m3u8" }
        return playlistName
    }

    /// The page's HTML, playing `playlist` (a path relative to the page).
    public func playerPage(playing playlist: String? = nil) -> String {
        Self.playerPage(playing: playlist ?? pagePlaylist)
    }

    /// The page's HTML, playing `playlist` (a path relative to the page): what a store that
    /// serves a package over HTTP keeps beside its playlist as `index.html`.
    public static func playerPage(playing playlist: String) -> String {
        // A JavaScript string literal: quotes, backslashes and line terminators escaped, and `<`
        // so that no `</script>` ends the script.
        var source = ""
        for scalar in playlist.unicodeScalars {
            switch scalar {
            case "\\": source += "\\\\"
            case "\"": source += "\\\""
            case "<": source += "\\u003C"
            case "\n": source += "\\n"
            case "\r": source += "\\r"
            case "\u{2028}": source += "\\u2028"
            case "\u{2029}": source += "\\u2029"
            default: source.unicodeScalars.append(scalar)
            }
        }
        return pageTemplate.replacing("__PLAYLIST__", with: source)
    }

    /// `GET /`: the player page.
    func pageResponse() -> Response {
        let page = playerPage()
        return Response(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", cacheControl(.page)),
                                               ("ETag", Self.entityTag(text: page)), ("Content-Length", String(page.utf8.count))],
                        body: .text(page))
    }

    /// The page, with `__PLAYLIST__` where the playlist goes: `Resources/player.html`, embedded
    /// in the module when it is built (so an installed binary carries it), its last line end
    /// dropped.
    static let pageTemplate: String = {
        let text = String(decoding: PackageResources.player_html, as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }()
}
