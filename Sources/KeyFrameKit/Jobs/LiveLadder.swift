internal import AACBitstream
internal import MediaCore
internal import MediaStreaming
internal import Synchronization
internal import SystemPackage

/// A live ladder's master playlist (RFC 8216 4.3.4.2): written into the HLS directory, and put
/// into its replicas beside a player page (`index.html`) that plays it, once every rendition has
/// written its first playlist (so that no store holds a master naming a playlist it has not
/// got); written again at the end with each rendition's measured peak and average bitrates.
/// Until then each `BANDWIDTH` is its encoder's bitrate and a tenth more (a CMAF segment's boxes
/// and a bitrate's swing), `AVERAGE-BANDWIDTH` the bitrate and a twentieth.
final class LiveLadderMaster: Sendable {
    /// One rendition: its directory and what it was asked for.
    struct Rung: Sendable {
        var directory: String
        var bitrate: Int
        var codecs: String
        var channelCount: Int
        var timescale: Int
    }

    private struct State: Sendable {
        var started: Set<Int> = []
        var written = false
        var finished: [Int: [(bytes: Int, duration: Int64)]] = [:]
    }

    let directory: FilePath
    let rungs: [Rung]
    let replicas: [ObjectStoreReplica]
    private let state = Mutex(State())

    init(directory: FilePath, rungs: [Rung], replicas: [ObjectStoreReplica]) {
        self.directory = directory
        self.rungs = rungs
        self.replicas = replicas
    }

    /// Rendition `index` has written its first playlist: the master is written once all have.
    func started(_ index: Int) throws(PipelineError) {
        let all = state.withLock { state -> Bool in
            guard !state.started.contains(index) else { return false }
            state.started.insert(index)
            return state.started.count == rungs.count
        }
        guard all else { return }
        // Two seconds, one at the peak and one at the bitrate: the average between.
        try write(rungs.map { rung in
            [(bytes: Int((Double(rung.bitrate) * 1.1 / 8).rounded(.up)), duration: Int64(rung.timescale)),
             (bytes: rung.bitrate / 8, duration: Int64(rung.timescale))]
        })
        let page = Array(HLSOrigin.playerPage(playing: "master.m3u8").utf8)
        for replica in replicas { replica.put("index.html", page, attributes: HLSOrigin.objectAttributes(ofName: "index.html", contents: page)) }
    }

    /// Rendition `index` has ended with `segments`: once all have, the master is written again
    /// with their measured bitrates.
    func finished(_ index: Int, segments: [HLSSegmentOutput.WrittenSegment]) throws(PipelineError) {
        let all = state.withLock { state -> [[(bytes: Int, duration: Int64)]]? in
            state.finished[index] = segments.map { (bytes: $0.byteCount, duration: $0.duration) }
            guard state.finished.count == rungs.count, state.started.count == rungs.count else { return nil }
            return rungs.indices.map { state.finished[$0] ?? [] }
        }
        guard let all else { return }
        try write(all)
    }

    /// A recording cancelled: the master playlist and page written go, here and in the stores.
    func cancel() {
        guard state.withLock({ state in
            defer { state.written = false }
            return state.written
        }) else { return }
        try? FileSystemCalls.unlink(directory.appending("master.m3u8"))
        for replica in replicas {
            replica.remove("master.m3u8")
            replica.remove("index.html")
        }
    }

    /// Writes `master.m3u8` naming each rung with `segments` as its measure, locally and into
    /// the replicas.
    private func write(_ segments: [[(bytes: Int, duration: Int64)]]) throws(PipelineError) {
        let renditions = zip(rungs, segments).map { rung, segments in
            StreamManifests.Rendition(path: rung.directory, segments: segments, timescale: rung.timescale, channelCount: rung.channelCount,
                                      codecs: rung.codecs, priming: 0)
        }.filter { !$0.segments.isEmpty }
        let text = StreamManifests.masterPlaylist(renditions)
        let bytes = Array(text.utf8)
        try FileByteSink.write(bytes, to: directory.appending("master.m3u8"))
        state.withLock { $0.written = true }
        let attributes = HLSOrigin.objectAttributes(ofName: "master.m3u8", contents: bytes, live: true)
        for replica in replicas { replica.put("master.m3u8", bytes, attributes: attributes) }
    }
}

/// A rendition of a live ladder: its ``/MediaStreaming/HLSSegmentOutput``, telling the
/// ladder's master when its first playlist is written and when it ends.
struct LiveLadderRendition: RecordingOutput {
    var output: HLSSegmentOutput
    let index: Int
    let master: LiveLadderMaster
    private var started = false

    init(_ output: HLSSegmentOutput, index: Int, master: LiveLadderMaster) {
        self.output = output
        self.index = index
        self.master = master
    }

    static func frames(in element: MediaSample) -> Int64 { HLSSegmentOutput.frames(in: element) }

    mutating func write(_ element: MediaSample) throws(PipelineError) {
        try output.write(element)
        if !started, !output.segments.isEmpty {
            started = true
            try master.started(index)
        }
    }

    mutating func receive(_ event: StreamEvent) throws(PipelineError) { try output.receive(event) }

    mutating func finish() throws(PipelineError) {
        try output.finish()
        if !started {
            started = true
            try master.started(index)
        }
        try master.finished(index, segments: output.segments)
    }

    mutating func cancel() {
        output.cancel()
        master.cancel()
    }

    mutating func checkpoint() throws(PipelineError) {}
    mutating func salvage() { output.salvage() }

    mutating func discard() {
        output.cancel()
        master.cancel()
    }
}
