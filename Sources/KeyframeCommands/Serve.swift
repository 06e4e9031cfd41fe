import ArgumentParser
import Dispatch
import KeyFrameKit

/// `keyframe serve DIR [--address HOST:PORT]`: a packaged directory over HTTP.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a directory `keyframe package` wrote (HLS playlists, DASH manifest, CMAF segments) over HTTP.",
        discussion: """
            Serves playlists (.m3u8), manifests (.mpd), init segments (.mp4) and segments (.m4s) of \
            DIR and its subdirectories, with their content types, HEAD and single byte ranges, until \
            Ctrl-C, and a player page at /. Nothing outside DIR. Loopback by default. Responses \
            carry Cache-Control, ETag and Last-Modified for caches and CDNs, and CORS headers \
            (--cors-origin); --tls-certificate and --tls-key serve HTTPS. \
            A live recording serves itself: `keyframe record --hls DIR --serve HOST:PORT`.
            """
    )

    @Argument(help: "The directory to serve.")
    var directory: String

    @Option(help: ArgumentHelp("Where to listen.", valueName: "HOST:PORT"))
    var address = "127.0.0.1:8080"

    @OptionGroup(title: "Serving")
    var serving: ServingOptions

    func validate() throws {
        guard Record.address(address) != nil else { throw ValidationError("--address HOST:PORT (e.g. 127.0.0.1:8080)") }
    }

    func run() throws {
        // A mistyped directory (or a file) is said before anything listens.
        guard FileSystemCalls.isDirectory(FilePath(directory)) else {
            let what = FileSystemCalls.exists(FilePath(directory)) ? "not a directory" : "no such directory"
            throw CommandFailure("\(directory): \(what); serve takes the directory `keyframe package` wrote", status: .unreadableInput)
        }
        try Serving.handOverUnlessInstalled()
        guard let (host, port) = Record.address(address) else { return }
        let running = try Serving.start(publication: nil, directory: FilePath(directory), host: host, port: port, options: serving.options)
        Terminal.error("serving \(directory) on \(serving.scheme)://\(host):\(port)/ (a player page; Ctrl-C stops)\n")
        let stop = DispatchSemaphore(value: 0)
        let signals = StopSignals { stop.signal() }
        stop.wait()
        signals.finishing()
        running.stop()
    }
}
