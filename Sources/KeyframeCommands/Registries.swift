package import KeyFrameKit

extension Keyframe {
    /// The formats every command detects, names and opens files through: KeyFrameKit's
    /// standard registry (``/MediaFormats/MediaFormatRegistry``). A build of the tool with a
    /// format of its own registers it here, once, and every command sees it.
    package static let formats: MediaFormatRegistry = .standard
}
