// `keyframe-serve`: the command line with HTTP serving linked in (Hummingbird on SwiftNIO);
// `keyframe serve` and `keyframe record --serve` run here, so that `keyframe` itself stays small.
import HLSServer
import KeyFrameKit
import KeyframeCommands
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A Hummingbird server as the commands see one.
struct HTTPServer: Serving.Running {
    let running: LiveHLSServer.Running
    func stop() { running.stop() }
}

/// `name`'s value as a positive decimal number of seconds, when it is one.
func seconds(fromEnvironment name: String) -> Duration? {
    guard let value = getenv(name), let seconds = Double(String(cString: value)), seconds > 0, seconds < 1e6 else { return nil }
    return .milliseconds(Int64((seconds * 1000).rounded()))
}

/// How long a client may take no bytes of a response: 60 s, or `KEYFRAME_SEND_STALL` seconds
/// (the load tests shorten it to see a client that stopped reading let go).
let stallLimit = seconds(fromEnvironment: "KEYFRAME_SEND_STALL") ?? RequestHeadDeadline.defaultStallLimit

/// The header deadline (``RequestHeadDeadline``): 10 s, or `KEYFRAME_HEADER_DEADLINE` seconds
/// (a positive decimal; the load tests shorten it so that slow connections are seen closed).
let headerDeadline: Duration = {
    guard let value = getenv("KEYFRAME_HEADER_DEADLINE"), let seconds = Double(String(cString: value)), seconds > 0, seconds < 1e6 else {
        return RequestHeadDeadline.defaultDeadline
    }
    return .milliseconds(Int64((seconds * 1000).rounded()))
}()

// A server holds a descriptor per connection and per file being sent: take the hard limit on
// open files, not the soft one (often 1024), as servers commonly do.
var files = rlimit()
if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max {
    files.rlim_cur = files.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
}

Serving.install { publication, directory, host, port, options in
    let server = LiveHLSServer(publication: publication, directory: directory, allowedOrigin: options.allowedOrigin)
    let tls = options.tls.map { LiveHLSServer.TLSFiles(certificateChain: $0.certificateChain, privateKey: $0.privateKey) }
    return HTTPServer(running: try server.start(host: host, port: port, headerDeadline: headerDeadline, stallLimit: stallLimit, tls: tls))
}
Keyframe.main()
