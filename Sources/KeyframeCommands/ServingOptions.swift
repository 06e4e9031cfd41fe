import ArgumentParser
import KeyFrameKit

/// The options of a command that serves over HTTP (`serve`, `record --serve`): CORS and HTTPS.
struct ServingOptions: ParsableArguments {
    @Option(name: .customLong("cors-origin"),
            help: ArgumentHelp("The Access-Control-Allow-Origin of every response: * (any page may play and analyse the media), an origin, or none.",
                               valueName: "ORIGIN"))
    var corsOrigin = "*"

    @Option(name: .customLong("tls-certificate"), help: ArgumentHelp("Serve HTTPS with this certificate chain (PEM); needs --tls-key.", valueName: "PEM"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The private key (PEM, unencrypted) of --tls-certificate.", valueName: "PEM"))
    var tlsKey: String?

    func validate() throws {
        guard (tlsCertificate == nil) == (tlsKey == nil) else { throw ValidationError("--tls-certificate and --tls-key go together") }
        // An origin is a scheme, a host and maybe a port (RFC 6454 6.2): no path, not even "/".
        let isOrigin = (corsOrigin.hasPrefix("http://") || corsOrigin.hasPrefix("https://"))
            && !corsOrigin.split(separator: "://", maxSplits: 1).last!.contains("/") && !corsOrigin.hasSuffix("://")
        guard corsOrigin == "*" || corsOrigin == "none" || (isOrigin && !corsOrigin.contains(where: { $0 == "\r" || $0 == "\n" || $0 == " " })) else {
            throw ValidationError("--cors-origin ORIGIN: *, an origin (https://example.com, no path) or none")
        }
    }

    /// The scheme the server answers on.
    var scheme: String { tlsCertificate == nil ? "http" : "https" }

    /// What the server is started with.
    var options: Serving.Options {
        Serving.Options(allowedOrigin: corsOrigin == "none" ? nil : corsOrigin,
                        tls: tlsCertificate.flatMap { certificate in tlsKey.map { (FilePath(certificate), FilePath($0)) } })
    }
}
