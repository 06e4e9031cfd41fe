internal import MediaCore

/// The keys an S3 request is signed with, and the region it goes to, found as the AWS command
/// line and SDKs find them: the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`, `AWS_REGION` or `AWS_DEFAULT_REGION`), then the shared files
/// `~/.aws/credentials` and `~/.aws/config` (`AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`)
/// for a profile (`AWS_PROFILE`, else `default`). Instance metadata and STS are not asked.
public struct S3Credentials: Sendable, CustomStringConvertible {
    /// The access key ID (`AKIA…`).
    public var accessKeyID: String
    /// The secret access key: never printed (``description`` masks it).
    public var secretAccessKey: String
    /// A temporary session's token, sent as `x-amz-security-token`.
    public var sessionToken: String?

    /// Credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The access key ID, the secret masked.
    public var description: String { "\(accessKeyID):****" }

    /// The credentials and region found for `profile` (`nil`: `AWS_PROFILE`, else `default`):
    /// a `profile` given with keys in the credentials file, its keys; else the environment's
    /// keys when it has both, else the profile's in the credentials file; the
    /// environment's region, else the profile's in the config file (`[profile NAME]`, or
    /// `[default]`), else the credentials file's.
    ///
    /// - Parameters:
    ///   - environment: looks up an environment variable (an empty one counts as unset).
    ///   - readFile: reads a file's text, `nil` when it cannot be read.
    /// - Throws: ``ObjectStoreError`` saying where credentials were looked for, when none were found.
    public static func resolve(profile: String? = nil, environment lookUp: (String) -> String?,
                               readFile: (String) -> String?) throws(ObjectStoreError) -> (credentials: S3Credentials, region: String?) {
        func environment(_ name: String) -> String? { lookUp(name).flatMap { $0.isEmpty ? nil : $0 } }
        let explicitProfile = profile != nil
        let profile = profile ?? environment("AWS_PROFILE") ?? "default"
        let home = environment("HOME") ?? "/root"
        let credentialsPath = environment("AWS_SHARED_CREDENTIALS_FILE") ?? home + "/.aws/credentials"
        let configPath = environment("AWS_CONFIG_FILE") ?? home + "/.aws/config"
        let stored = readFile(credentialsPath).map { sections(of: $0) } ?? [:]
        let configured = readFile(configPath).map { sections(of: $0) } ?? [:]
        let configSection = profile == "default" ? configured["default"] : configured["profile \(profile)"] ?? configured[profile]
        let region = environment("AWS_REGION") ?? environment("AWS_DEFAULT_REGION") ?? configSection?["region"] ?? stored[profile]?["region"]
        // A profile named by the caller wins over the environment's keys, as the AWS CLI's
        // --profile does.
        if explicitProfile, let section = stored[profile], let key = section["aws_access_key_id"],
           let secret = section["aws_secret_access_key"] {
            return (S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: section["aws_session_token"]), region)
        }
        if let key = environment("AWS_ACCESS_KEY_ID"), let secret = environment("AWS_SECRET_ACCESS_KEY") {
            return (S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: environment("AWS_SESSION_TOKEN")), region)
        }
        if let section = stored[profile], let key = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] {
            return (S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: section["aws_session_token"]), region)
        }
        throw ObjectStoreError(.credentials, "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give the profile "
                      + "'\(profile)' aws_access_key_id and aws_secret_access_key in \(credentialsPath)")
    }

    /// The `[section]`s of an INI file (the AWS shared files' syntax), each a table of its
    /// `key = value` lines; `#` and `;` start comments.
    static func sections(of text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast()).trimmingSpaces
                if let current, sections[current] == nil { sections[current] = [:] }
            } else if let current, let equals = line.firstIndex(of: "=") {
                sections[current]?[String(line[..<equals]).trimmingSpaces.lowercased()] = String(line[line.index(after: equals)...]).trimmingSpaces
            }
        }
        return sections
    }
}
