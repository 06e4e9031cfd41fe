import Foundation

/// The lines FFmpeg 5.1 (Debian 12) prints at `-v warning` for every file of a kind, which say
/// nothing about the file in hand: the one place where the tests name them (DESIGN.md, "How we
/// know it works"). A peer's verdict is its stderr less these lines; any other line is a finding.
public enum PeerQuirk: String, CaseIterable, Sendable {
    /// ffprobe and ffmpeg, for any M4A with a cover (`covr`): the attached picture becomes a
    /// video stream that has no timescale.
    case coverHasNoTimescale = "stream 0, timescale not set"
    /// ffprobe and ffmpeg, for any HLS rendition whose init segment has a cover (`covr`, which
    /// packaging copies from its input): the HLS demuxer makes the picture's stream but not
    /// its picture ("Attached picture on stream 1 has invalid size, ignoring").
    case hlsCoverWithoutPicture = "has invalid size, ignoring"
    /// ffprobe and ffmpeg, for any QuickTime chapter track (a `text` track, which 5.1 maps to
    /// AV_CODEC_ID_BIN_DATA, 98314, a codec with no decoder), FFmpeg's own chapters included.
    case chapterTrackCodec = "Unsupported codec with id 98314"
    /// ffprobe and ffmpeg, for any ADTS file: lavf estimates its duration from the bitrate.
    case adtsDurationEstimate = "Estimating duration from bitrate"
    /// ffmpeg (not ffprobe), for any WAV without a channel mask (plain PCM `fmt `).
    case wavChannelLayoutGuess = "Guessed Channel Layout"

    /// Whether `line` is this quirk's line.
    public func matches<S: StringProtocol>(_ line: S) -> Bool { line.contains(rawValue) }

    /// `text` (a peer's stderr, or stdout and stderr together) less the lines of `quirks`, blank
    /// lines dropped; empty when the peer said nothing else.
    public static func filter(_ text: String, quirks: [PeerQuirk] = PeerQuirk.allCases) -> String {
        text.split(whereSeparator: \.isNewline)
            .filter { line in !line.allSatisfy(\.isWhitespace) && !quirks.contains { $0.matches(line) } }
            .joined(separator: "\n")
    }

    /// What `ffprobe -v warning FILE` says about `file`, quirks filtered; a non-zero exit status
    /// is said too. Empty for a file ffprobe reads cleanly.
    public static func ffprobeWarnings(_ file: String, quirks: [PeerQuirk] = PeerQuirk.allCases) throws -> String {
        let probe = try Subprocess.run("ffprobe", ["-v", "warning", "-hide_banner", file])
        return verdict(status: probe.status, tool: "ffprobe", filter(probe.standardError, quirks: quirks))
    }

    /// What `ffmpeg -v warning -i FILE [-map MAP] -f null -` says while decoding `file`, quirks
    /// filtered. Empty for a file ffmpeg decodes cleanly.
    public static func ffmpegWarnings(_ file: String, map: String? = nil, quirks: [PeerQuirk] = PeerQuirk.allCases) throws -> String {
        let decode = try Subprocess.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", file] + (map.map { ["-map", $0] } ?? []) + ["-f", "null", "-"])
        return verdict(status: decode.status, tool: "ffmpeg", filter(decode.standardError, quirks: quirks))
    }

    private static func verdict(status: Int32, tool: String, _ said: String) -> String {
        (status == 0 ? "" : "\(tool) exited \(status)\n") + said
    }
}

