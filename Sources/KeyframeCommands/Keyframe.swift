package import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `keyframe`: the command line of KeyFrameKit, run by the `keyframe` executable and, with
/// serving installed (`Serving`), by `keyframe-serve`.
package struct Keyframe: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "keyframe",
        abstract: "Capture, encode, convert, tag, package, publish and inspect audio: AAC, MP3, Opus, FLAC and ALAC.",
        discussion: """
            Records from an ALSA device; converts any audio FFmpeg reads to gapless AAC-LC, HE-AAC or \
            HE-AAC v2 in M4A/MP4 or ADTS, to MP3, Opus (Ogg or MP4), FLAC or ALAC, or to WAV; edits M4A/M4B, MP3, Ogg Opus and FLAC files without \
            re-encoding (tags, chapters, cut, split, join); packages HLS and DASH and serves them over HTTP; publishes live \
            to RTMP, Icecast and SRT; probes, measures loudness and validates what it and others wrote. \
            'keyframe help COMMAND' explains each command.

            Exit status, the same for every command: 0 done, and the input was whole; 1 failed, \
            including a publish that delivered nothing; 2 an input cannot be read; 3 done with \
            damage: salvaged from a damaged input, or a publish destination that did not receive \
            everything (the summary and --json say what and where); 64 usage error.
            """,
        version: "0.1.0",
        subcommands: [Record.self, Publish.self, Encode.self, Convert.self, Tag.self, Chapters.self, Cut.self, Split.self, Join.self, Package.self, Serve.self, Mux.self, Demux.self, Decode.self, Play.self, Probe.self, Validate.self, Devices.self]
    )

    /// Parses the command line and runs the command, exiting with its `ExitStatus`: a
    /// `CommandFailure` exits with its own status, usage errors with 64, as
    /// swift-argument-parser's `main()` does for everything else.
    package static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let failure as CommandFailure {
            Terminal.error("Error: \(failure.description)\n")
            #if canImport(Glibc)
            Glibc.exit(failure.status.rawValue)
            #else
            Musl.exit(failure.status.rawValue)
            #endif
        } catch {
            exit(withError: error)
        }
    }
}
