// Records 3 seconds as a live low-latency HLS rendition and serves it from a Vapor app: the
// KeyFrameKit recording publishes each playlist to a LiveHLSPublication, and one Vapor route
// forwards every request under /live/ to an HLSOrigin (blocking playlist reload, the hinted part
// held until it exists, segments and parts with HEAD and byte ranges).
//
//   serve-vapor DEVICE DIR PORT [ALSA_CONFIG_FILE]
//
// Serves http://127.0.0.1:PORT/live/index.m3u8 until SIGINT or SIGTERM. DEVICE and
// ALSA_CONFIG_FILE are as for record-m4a; `make examples` records from ALSA's `file` plugin.
import KeyFrameKit
import Vapor

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5, let port = Int(arguments[3]) else {
    print("usage: serve-vapor DEVICE DIR PORT [ALSA_CONFIG_FILE]")
    exit(2)
}
let directory = FilePath(arguments[2])

// The recording: 3 s, 1-s segments of 0.5-s parts, each playlist published.
let publication = LiveHLSPublication()
var options = try RecordingOptions(outputPath: directory, device: arguments[1],
                                   alsaConfiguration: arguments.count == 5 ? ALSAConfiguration(systemConfigurationAnd: [FilePath(arguments[4])]) : nil,
                                   frameLimit: 3 * AudioConfiguration.default.sampleRate, container: .hlsPlaylist)
options.hlsSegmentDuration = .seconds(1)
options.hlsPartDuration = .milliseconds(500)
options.hlsPublication = publication
let recording = try LiveEncoding(recording: options)

// The Vapor app: one route for GET and HEAD of everything under /live/.
let origin = HLSOrigin(publication: publication, directory: directory)
let app = try await Application.make(Environment(name: "production", arguments: ["serve-vapor"]))
app.http.server.configuration.hostname = "127.0.0.1"
app.http.server.configuration.port = port
app.get("live", "**") { request async -> Response in
    let answer = await origin.respond(to: HLSOrigin.Request(
        method: "GET", // a HEAD too: Vapor sends its headers (the length) without the body
        path: request.parameters.getCatchall(),
        query: ["_HLS_msn", "_HLS_part"].reduce(into: [:]) { query, name in query[name] = request.query[String.self, at: name] },
        range: request.headers.first(name: .range)))
    return answer.vaporResponse()
}

extension HLSOrigin.Response {
    /// The answer as a Vapor response; a file is sent in pieces as it is read.
    func vaporResponse() -> Response {
        var fields = HTTPHeaders(headers.filter { $0.name != "Content-Length" }.map { ($0.name, $0.value) })
        let code = HTTPResponseStatus(statusCode: status)
        switch body {
        case .empty:
            if let length = header("Content-Length") { fields.replaceOrAdd(name: .contentLength, value: length) }
            return Response(status: code, headers: fields)
        case .text(let text):
            return Response(status: code, headers: fields, body: .init(string: text))
        case .file(let file):
            return Response(status: code, headers: fields, body: .init(asyncStream: { writer in
                for chunk in IteratorSequence(file.chunks()) { try await writer.write(.buffer(ByteBuffer(bytes: chunk))) }
                try await writer.write(.end)
            }, count: file.range.count))
        }
    }
}

// Capture runs on a thread of its own; the app serves until SIGINT or SIGTERM.
try recording.start()
Thread.detachNewThread {
    while !recording.job.wait(timeout: .milliseconds(200)) {}
    do {
        let summary = try recording.finish()
        print("\(directory)/index.m3u8: \(summary.frames) frames recorded and published")
    } catch {
        print("serve-vapor: \(error)")
    }
}
print("serving http://127.0.0.1:\(port)/live/index.m3u8")
try await app.execute()
try await app.asyncShutdown()
