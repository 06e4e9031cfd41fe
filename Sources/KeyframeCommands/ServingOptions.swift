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
        guard !corsOrigin.isEmpty, !corsOrigin.contains(where: { $0 == "\r" || $0 == "\n" }) else {
            throw ValidationError("--cors-origin ORIGIN: *, an origin (https://example.com) or none")
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
