import ArgumentParser

/// `keyframe`: the command line of KeyFrameKit.
@main
struct Keyframe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyframe",
        abstract: "Capture, encode, package and inspect AAC audio.",
        discussion: """
            The audio path of the KeyFrameKit seeds: capture → encode AAC → ADTS → MP4/M4A → demux → \
            decode → play. Commands arrive issue by issue; see README.md.
            """,
        version: "0.1.0",
        subcommands: [Probe.self, Encode.self, Decode.self, Mux.self, Demux.self]
    )
}
