import KeyFrameKit

/// An error a subcommand reports: printed to stderr as `Error: <message>` with exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    /// The message, naming the file and what is wrong.
    let description: String

    init(_ description: String) { self.description = description }
}

extension CommandFailure {
    /// The words for `error`, naming `file` once: as they are when they already name it (a
    /// ``/MediaCore/PipelineError`` whose path is `file`, or words that say it), else after
    /// `file: `. Only the message is shaped here; no decision depends on it.
    static func message(_ error: any Error, naming file: String) -> String {
        let text = "\(error)"
        if let failure = error as? PipelineError, failure.path?.string == file { return text }
        return text.contains(file) ? text : "\(file): \(text)"
    }

    /// A failure for `error`, naming `file` once (``message(_:naming:)``).
    init(_ error: any Error, naming file: String) { self.init(Self.message(error, naming: file)) }
}
