import ArgumentParser
import KeyFrameKit

/// The exit statuses of every command, one table for the README and the man pages.
///
/// | status | meaning |
/// |---|---|
/// | 0 | done, and the input was whole |
/// | 1 | failed, including "nothing delivered" |
/// | 2 | an input cannot be read |
/// | 3 | done with damage: salvaged from a damaged input, or a destination that did not receive everything |
/// | 64 | usage error (swift-argument-parser's `EX_USAGE`) |
enum ExitStatus: Int32, Sendable {
    /// Done, and the input was whole.
    case done = 0
    /// Failed, including a job that delivered nothing.
    case failed = 1
    /// An input cannot be read: missing, unreadable, or malformed where the job needed it.
    case unreadableInput = 2
    /// Done with damage: salvaged from a damaged input, or a destination that did not receive
    /// everything. The summary (and `--json`) says what and where.
    case damaged = 3
    /// A usage error: an unknown option, a missing argument, a value out of range.
    case usage = 64

    /// This status as swift-argument-parser's exit code, to throw from `run()`.
    var exitCode: ExitCode { ExitCode(rawValue) }
}

/// An error a subcommand reports: printed to stderr as `Error: <message>`, with exit status
/// ``status`` (``ExitStatus/failed`` unless said otherwise).
struct CommandFailure: Error, CustomStringConvertible {
    /// The message, naming the file and what is wrong.
    let description: String
    /// The status the process exits with.
    let status: ExitStatus

    init(_ description: String, status: ExitStatus = .failed) {
        self.description = description
        self.status = status
    }
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

    /// A failure for `error` met while working on the input `file`, naming it once
    /// (``message(_:naming:)``): ``ExitStatus/unreadableInput`` when `error` says `file` could
    /// not be read (``ExitStatus(reading:input:)``), else ``ExitStatus/failed``.
    init(_ error: any Error, naming file: String) {
        self.init(Self.message(error, naming: file), status: ExitStatus(reading: error, input: file))
    }
}

extension ExitStatus {
    /// The status for `error` met by a job reading `input`: ``unreadableInput`` when the error
    /// is about reading that input (a malformed stream, container or PCM file with no other file
    /// named, or a read of `input` that the system refused), else ``failed``. The decision is
    /// taken on the error's code and path, never on its words.
    init(reading error: any Error, input: String) {
        if let failure = error as? CommandFailure {
            self = failure.status
            return
        }
        let pipeline = PipelineError(error)
        // A bitrate the output cannot carry is the command line's to change.
        if case .bitrateOutOfRange? = pipeline.underlying(as: CodecError.self) {
            self = .usage
            return
        }
        let aboutInput = pipeline.path.map { URLPath.same($0.string, input) }
        switch pipeline.code {
        case .bitstream, .container, .pcmFile:
            self = aboutInput ?? true ? .unreadableInput : .failed
        case .stream:
            self = aboutInput == true ? .unreadableInput : .failed
        default:
            self = .failed
        }
    }
}

extension ExitStatus {
    /// Ends a job that salvaged what it could: warns of each event of `damage` (after
    /// `input: `, when given and the event does not name it already), then exits with
    /// ``damaged`` when one lost media (``/MediaCore/DamageEvent/losesData``). Call last in
    /// `run()`, after the summary.
    static func finish(damage: [DamageEvent], in input: String? = nil) throws {
        for event in damage {
            let text = event.description
            Terminal.warning(input.map { text.hasPrefix("\($0): ") ? text : "\($0): \(text)" } ?? text)
        }
        if damage.contains(where: \.losesData) { throw ExitStatus.damaged.exitCode }
    }
}
