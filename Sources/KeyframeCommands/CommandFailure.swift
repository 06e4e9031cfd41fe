/// An error a subcommand reports: printed to stderr as `Error: <message>` with exit status 1.
struct CommandFailure: Error, CustomStringConvertible {
    /// The message, naming the file and what is wrong.
    let description: String

    init(_ description: String) { self.description = description }
}
