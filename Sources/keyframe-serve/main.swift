// `keyframe-serve`: the command line with HTTP serving linked in (Hummingbird on SwiftNIO);
// `keyframe serve` and `keyframe record --serve` run here, so that `keyframe` itself stays small.
import HLSServer
import KeyFrameKit
import KeyframeCommands

/// A Hummingbird server as the commands see one.
struct HTTPServer: Serving.Running {
    let running: LiveHLSServer.Running
    func stop() { running.stop() }
}

Serving.install { publication, directory, host, port in
    HTTPServer(running: try LiveHLSServer(publication: publication, directory: directory).start(host: host, port: port))
}
Keyframe.main()
