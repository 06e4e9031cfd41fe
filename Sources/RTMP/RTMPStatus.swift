/// A server's status report: the `info` object of an `onStatus` command (RTMP 1.0 7.2.2) or of
/// an `_error` answer, with its `level`, `code` and `description`.
///
/// nginx-rtmp refuses a second publisher of a name with level `error`, code
/// `NetStream.Publish.BadName` and description `Already publishing`; Adobe Media Server and
/// Wowza refuse a connection with `NetConnection.Connect.Rejected`.
public struct RTMPStatus: Sendable, Hashable, CustomStringConvertible {
    /// `status`, `warning` or `error`.
    public var level: String
    /// What happened, as a dotted code: `NetStream.Publish.Start`, `NetStream.Publish.BadName`, …
    public var code: String
    /// The server's words, possibly empty.
    public var details: String

    /// A status of `level` and `code` with `details`.
    public init(level: String, code: String, details: String = "") {
        self.level = level
        self.code = code
        self.details = details
    }

    /// The status an `info` object says (missing fields are empty).
    public init(info: AMF0Value) {
        level = info["level"]?.stringValue ?? ""
        code = info["code"]?.stringValue ?? ""
        details = info["description"]?.stringValue ?? ""
    }

    /// Whether the level is `error`.
    public var isError: Bool { level == "error" }

    /// Whether this is a refusal that trying again does not change: the stream name is taken or
    /// not allowed (`NetStream.Publish.BadName`, `.Denied`, `.Rejected`), or the connection or
    /// application is refused (`NetConnection.Connect.Rejected`, `.InvalidApp`, `.AppShutdown`).
    public var isRefusal: Bool {
        [
            "NetStream.Publish.BadName", "NetStream.Publish.Denied", "NetStream.Publish.Rejected",
            "NetConnection.Connect.Rejected", "NetConnection.Connect.InvalidApp", "NetConnection.Connect.AppShutdown",
        ].contains(code)
    }

    /// What the status means, in words that end with the server's own: "the server refused the
    /// stream name: already publishing".
    public var explanation: String {
        let what: String = switch code {
        case "NetStream.Publish.BadName": "the server refused the stream name"
        case "NetStream.Publish.Denied", "NetStream.Publish.Rejected": "the server refused to let us publish"
        case "NetConnection.Connect.Rejected", "NetConnection.Connect.AppShutdown": "the server refused the connection"
        case "NetConnection.Connect.InvalidApp": "the server has no such application"
        case "NetConnection.Connect.Closed": "the server closed the connection"
        case "": "the server reported an error"
        default: "the server reported \(code)"
        }
        guard !details.isEmpty else { return code.isEmpty || what.hasSuffix(code) ? what : "\(what) (\(code))" }
        return "\(what): \(Self.lowercasingFirstWord(details))"
    }

    /// `level code: details`.
    public var description: String { "\(level) \(code)" + (details.isEmpty ? "" : ": \(details)") }

    /// `text` with its first letter lowercased when it starts a word of lowercase letters
    /// ("Already publishing" → "already publishing"; "RTMP …" stays).
    private static func lowercasingFirstWord(_ text: String) -> String {
        guard let first = text.first, first.isUppercase else { return text }
        let second = text.dropFirst().first
        guard second.map({ $0.isLowercase || $0 == " " }) ?? true else { return text }
        return first.lowercased() + text.dropFirst()
    }
}
