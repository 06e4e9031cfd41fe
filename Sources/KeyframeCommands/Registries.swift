package import KeyFrameKit

extension Keyframe {
    /// The formats the commands detect, name and list files by: KeyFrameKit's standard registry
    /// (``/MediaFormats/MediaFormatRegistry``), the one the jobs open files through by default.
    /// A build of the tool with a format of its own registers it in this value, and every
    /// command's checks and messages see it.
    package static let formats: MediaFormatRegistry = .standard

    /// The codecs the commands encode and decode with (``/AudioCodec/AudioCodecRegistry``):
    /// KeyFrameKit's standard registry, the one the format registry above decodes with.
    package static let codecs: AudioCodecRegistry = .standard

    /// The destinations the commands send to (``/Publishing/DestinationRegistry``): KeyFrameKit's
    /// live protocols (RTMP, Icecast, SRT) and object stores (`file://`).
    package static let destinations: DestinationRegistry = .standard
}
