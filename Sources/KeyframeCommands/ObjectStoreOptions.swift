import ArgumentParser
import KeyFrameKit

/// Where an object store's URL leads: the options of every command that takes one
/// (`s3://bucket/prefix`, `https://host/path`), over the registry's stores (``Keyframe/destinations``).
struct ObjectStoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The S3 endpoint of a store other than Amazon S3 (SeaweedFS, MinIO, Ceph), addressed path-style. "
            + "Default: AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, else Amazon S3 in the region (AWS_REGION, or the profile's).",
        valueName: "http[s]://host[:port]"))
    var s3Endpoint: String?

    @Option(help: ArgumentHelp(
        "The profile of ~/.aws/credentials and ~/.aws/config whose keys and region sign S3 requests, when "
            + "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set. Default: AWS_PROFILE, else default.",
        valueName: "name"))
    var s3Profile: String?

    init() {}

    /// The store `text` names: an object store's URL (`s3://bucket/prefix`,
    /// `https://user:password@host/path`), or `env:NAME`, the environment variable that holds
    /// one (a password kept off the command line); `nil` for a directory.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` for a URL that does not read or a
    ///   variable not set; ``PublishingError/Reason/refused`` for missing keys.
    func store(named text: String) throws(PublishingError) -> (any ObjectStore)? {
        let url = try Self.url(named: text)
        let registry = destinations
        guard registry.namesStore(url) else {
            if url != text { throw PublishingError(.invalidDestination, "env:\(text.dropFirst(4)): holds no object store's URL") }
            return nil
        }
        return try registry.store(for: url)
    }

    /// `text`, or with `env:NAME` the value of the environment variable `NAME`, trimmed.
    ///
    /// - Throws: ``PublishingError/Reason/invalidDestination`` for a variable not set or empty.
    static func url(named text: String) throws(PublishingError) -> String {
        guard text.hasPrefix("env:") else { return text }
        let name = String(text.dropFirst(4))
        guard let value = ProcessEnvironment.value(of: name), !value.isEmpty else {
            throw PublishingError(.invalidDestination, "env:\(name): the environment variable \(name) is not set, or empty")
        }
        return value.trimmingSpaces
    }

    /// The destinations, their S3 store reached at ``s3Endpoint`` with ``s3Profile``'s keys.
    var destinations: DestinationRegistry {
        guard s3Endpoint != nil || s3Profile != nil else { return Keyframe.destinations }
        var registry = Keyframe.destinations
        registry.register(DestinationRegistry.s3(endpoint: s3Endpoint, profile: s3Profile))
        return registry
    }
}
