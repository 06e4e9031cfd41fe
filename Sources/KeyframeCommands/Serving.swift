internal import MediaCore
internal import Synchronization
package import KeyFrameKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Serving over HTTP, which only `keyframe-serve` links (Hummingbird on SwiftNIO): `keyframe`
/// itself stays small (a command that does not serve does not pay for a server in memory), and
/// runs `keyframe-serve` with the same arguments for `serve` and `record --serve`.
package enum Serving {
    /// A running server.
    package protocol Running: Sendable {
        /// Stops it and waits for it.
        func stop()
    }

    /// How a server answers besides its files: CORS and HTTPS.
    package struct Options: Sendable {
        /// The `Access-Control-Allow-Origin` of every response; `nil` for no CORS headers.
        package var allowedOrigin: String? = "*"
        /// HTTPS: the certificate chain and private key, PEM; `nil` for HTTP.
        package var tls: (certificateChain: FilePath, privateKey: FilePath)?

        /// Plain HTTP, any origin allowed.
        package init(allowedOrigin: String? = "*", tls: (certificateChain: FilePath, privateKey: FilePath)? = nil) {
            self.allowedOrigin = allowedOrigin
            self.tls = tls
        }
    }

    /// Starts a server of `publication` (live) or of `directory`'s files, on `host:port`.
    package typealias Start = @Sendable (_ publication: LiveHLSPublication?, _ directory: FilePath, _ host: String, _ port: Int,
                                         _ options: Options) throws -> any Running

    private static let installed = Mutex<Start?>(nil)

    /// Makes serving available in this executable (`keyframe-serve` does, at launch).
    package static func install(_ start: @escaping Start) { installed.withLock { $0 = start } }

    /// The server, or, in an executable without one, this command run again by `keyframe-serve`
    /// beside it (this process is replaced, so this returns only where serving is installed).
    package static func start(publication: LiveHLSPublication?, directory: FilePath, host: String, port: Int,
                              options: Options = Options()) throws -> any Running {
        guard let start = installed.withLock({ $0 }) else { try handOver() }
        return try start(publication, directory, host, port, options)
    }

    /// In an executable without serving, replaces this process with `keyframe-serve` (found
    /// beside it) running the same arguments; call before anything is written or opened.
    package static func handOverUnlessInstalled() throws {
        guard installed.withLock({ $0 }) == nil else { return }
        try handOver()
    }

    private static func handOver() throws -> Never {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw CommandFailure("cannot find this executable (/proc/self/exe) to run keyframe-serve beside it") }
        let own = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let server = FilePath(own).removingLastComponent().appending("keyframe-serve").string
        var arguments = CommandLine.arguments
        arguments[0] = server
        let cArguments = arguments.map { strdup($0) } + [nil]
        execv(server, cArguments)
        let reason = systemErrorWords(errno)
        throw CommandFailure("serving needs keyframe-serve beside keyframe (\(server): \(reason)); `make install` installs both, "
                             + "or build it with `swift build --product keyframe-serve`")
    }
}
