package import ArgumentParser

/// `keyframe`: the command line of KeyFrameKit, run by the `keyframe` executable and, with
/// serving installed (``Serving``), by `keyframe-serve`.
package struct Keyframe: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "keyframe",
        abstract: "Capture, encode, package and inspect AAC audio.",
        discussion: """
            The audio path of the KeyFrameKit seeds: capture → encode AAC → ADTS → MP4/M4A → demux → \
            decode → play. See README.md.
            """,
        version: "0.1.0",
        subcommands: [Record.self, Publish.self, Encode.self, Convert.self, Tag.self, Chapters.self, Cut.self, Split.self, Join.self, Package.self, Serve.self, Mux.self, Demux.self, Decode.self, Play.self, Probe.self, Validate.self, Devices.self]
    )
}
