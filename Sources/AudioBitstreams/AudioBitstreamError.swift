public import MediaCore

/// What is wrong with an Opus, FLAC or ALAC structure: which structure, and why (cut short,
/// or a field no stream may hold).
public struct AudioBitstreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The structure read (`OpusHead`, `STREAMINFO`, `ALACSpecificConfig`).
    public var structure: String
    /// What is wrong, in words.
    public var reason: String

    /// An error in `structure`: `reason`.
    public init(_ structure: String, _ reason: String) {
        self.structure = structure
        self.reason = reason
    }

    /// `structure` cut short, as `error` says.
    public init(_ structure: String, truncated error: BinaryReadError) {
        self.init(structure, "cut short: \(error)")
    }

    /// `structure: reason`.
    public var description: String { "\(structure): \(reason)" }
}

/// Runs `body`, a read of `structure`, naming it in a short read's error.
@inlinable
func reading<T>(_ structure: String, _ body: () throws(BinaryReadError) -> T) throws(AudioBitstreamError) -> T {
    do { return try body() } catch { throw AudioBitstreamError(structure, truncated: error) }
}
