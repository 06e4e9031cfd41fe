public import SystemPackage

/// An AAC output file, as a ``/MediaCore/PacketSink``: ADTS or MP4/M4A, chosen by the name
/// (``MediaFileFormat/init(nameOf:)``).
///
/// An MP4 is gapless from the stream's ``/MediaCore/StreamEvent/gapless(_:)`` events: its edit
/// list's `media_time` is the priming and its duration exactly the valid length (ISO/IEC
/// 14496-12, 8.6.6), with iTunSMPB too. An encoder tells the priming before its first packet
/// and the valid length after its last, which the pump delivers before ``finish()``. ADTS
/// cannot carry them.
///
/// Tags and chapters come the same way, as ``/MediaCore/StreamEvent/metadata(_:)``: an MP4
/// writes them as iTunes items (`ITunesMetadata.init(_:)`) and chapters (a Nero `chpl`
/// and a QuickTime chapter track); a fragmented MP4 writes its movie with the first fragment,
/// so it takes the tags told before the first packet and no chapters. ADTS carries neither.
public struct AudioPacketOutput: PacketFileSink {
    private enum Writer {
        case adts(ADTSPacketWriter<FileByteSink>)
        case mp4(MP4Muxer)
    }

    private var writer: Writer
    /// The stream's gapless numbers, once told.
    public private(set) var gapless: GaplessInfo?
    /// PCM frames `packet` decodes to: its format's frames per packet (the AudioSpecificConfig's
    /// frame length), else, for packets that vary (FLAC, ALAC), its duration at the format's
    /// rate, else an AAC-LC frame's 1024 (ISO/IEC 14496-3, 4.5.1.1).
    public static func frames(in packet: MediaSample) -> Int64 {
        if case .audio(let audio) = packet.format {
            if audio.framesPerPacket > 0 { return Int64(audio.framesPerPacket) }
            let duration = packet.duration
            if audio.sampleRate > 0, duration.value > 0, duration.timescale > 0 {
                return duration.value * Int64(audio.sampleRate) / Int64(duration.timescale)
            }
        }
        return 1024
    }
    /// The file written.
    public let path: FilePath
    /// The container written.
    public let format: MediaFileFormat
    /// Packets written.
    public private(set) var packets: Int64 = 0
    /// Frames the packets decode to (1024 each), priming included.
    public private(set) var packetFrames: Int64 = 0

    /// Creates the output at `path`, of the container its name says, through the format
    /// registry (``MediaFormatRegistry/containers``).
    ///
    /// - Parameters:
    ///   - path: the file to write; its extension chooses the container.
    ///   - fragmentDuration: write an MP4 fragmented (crash-safe), a fragment this long.
    ///   - inPlace: write ADTS under its own name from the start (a recording that must survive
    ///     a kill); a fragmented MP4 is always written in place.
    ///   - encoderName: the MP4's `©too` tag.
    /// - Throws: `PipelineError.unsupported` when the name is not an AAC container;
    ///   `PipelineError.stream` or `PipelineError.container` when it cannot be created.
    public init(path: FilePath, fragmentDuration: MediaTime? = nil, inPlace: Bool = false,
                encoderName: String = "KeyFrameKit") throws(PipelineError) {
        self = try MediaFormatRegistry.containers.packetOutput(path, as: AudioPacketOutput.self, options: MediaFormatRegistry.OutputOptions(
            fragmentDuration: fragmentDuration, inPlace: inPlace, encoderName: encoderName))
    }

    /// Creates an ADTS file at `path`; `inPlace` writes it under its own name from the start.
    public init(adtsPath path: FilePath, inPlace: Bool = false) throws(PipelineError) {
        self.path = path
        format = .adts
        do { writer = .adts(ADTSPacketWriter(sink: try FileByteSink(path: path, atomic: !inPlace))) } catch {
            throw .stream(error)
        }
    }

    /// Creates an MP4 at `path`: fast-start (moov first), or fragmented in place with
    /// fragments of `fragmentDuration`; `encoderName` is its `©too` tag. The packets' codec is
    /// described by the first of `audioCodecs` that does (AAC's by default).
    public init(mp4Path path: FilePath, fragmentDuration: MediaTime? = nil, encoderName: String = "KeyFrameKit",
                audioCodecs: [AudioCodecDescription] = [.aac]) throws(PipelineError) {
        self.path = path
        format = .mp4
        let layout: MuxerConfiguration.Layout = fragmentDuration.map { .fragmented(fragmentDuration: $0) } ?? .fastStart
        let muxer: MP4Muxer
        do {
            var configuration = MuxerConfiguration(layout: layout, mediaTypes: .audio, encoderName: encoderName)
            configuration.audioCodecs = audioCodecs
            muxer = try MP4Muxer(path: path, configuration: configuration)
            try muxer.start()
        } catch { throw .container(error) }
        writer = .mp4(muxer)
    }

    /// Keeps the stream's gapless numbers for the MP4's edit list, and its tags and chapters.
    /// A fragmented file writes its edit list and tags before the first sample, so the priming
    /// and tags must come first; the valid length is set at the end (and rewritten into the
    /// moov then).
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        guard case .mp4(let muxer) = writer else {
            if case .gapless(let info) = event { gapless = info }
            return
        }
        switch event {
        case .gapless(let info):
            gapless = info
            muxer.setGapless(priming: Int(info.priming), validFrameCount: info.validLength ?? 0)
        case .metadata(let told):
            metadata = told
            // Once a fragmented movie is written its tags are fixed; chapters need a whole movie.
            if !muxer.configuration.isFragmented || packets == 0 {
                do { try muxer.setMetadata(ITunesMetadata(told)) } catch { throw .container(error) }
            }
            if !muxer.configuration.isFragmented {
                do { try muxer.setChapters(told.movieChapters) } catch { throw .container(error) }
            }
        case .timedMetadata, .marker, .loudness:
            // Not carried in an MP4 or ADTS file yet.
            break
        case .codecConfiguration:
            // The sample entry keeps the configuration at open: a FLAC STREAMINFO whose length
            // and MD5 are 0, "unknown" (RFC 9639 8.2), as a fragmented file must write it.
            break
        }
    }

    /// The stream's tags and chapters, once told.
    public private(set) var metadata: StreamMetadata?

    /// Writes one AAC packet.
    public mutating func write(_ packet: MediaSample) throws(PipelineError) {
        do {
            switch writer {
            case .adts(var adts):
                defer { writer = .adts(adts) }
                try adts.write(packet)
            case .mp4(let muxer):
                try muxer.append(packet)
            }
        } catch {
            throw PipelineError(error)
        }
        packets += 1
        packetFrames += Self.frames(in: packet)
    }

    /// Pushes ADTS bytes to the file without committing (a crash-safe checkpoint); a
    /// fragmented MP4 flushes itself at each fragment.
    public mutating func checkpoint() throws(PipelineError) {
        guard case .adts(let adts) = writer else { return }
        let sink = adts.byteSink
        do { try sink.flush() } catch { throw .stream(error) }
    }

    /// Completes the file: an MP4 gets its gapless edit list and its moov.
    public mutating func finish() throws(PipelineError) {
        do {
            switch writer {
            case .adts(var adts):
                defer { writer = .adts(adts) }
                try adts.finish()
            case .mp4(let muxer):
                if let gapless, gapless.validLength == nil {
                    // The stream never told its length (a job stopped before its encoder was
                    // flushed): what the packets hold after the priming, never an empty edit.
                    muxer.setGapless(priming: Int(gapless.priming), validFrameCount: max(0, packetFrames - gapless.priming))
                }
                try muxer.finish()
            }
        } catch {
            throw PipelineError(error)
        }
    }

    /// Completes what was written after a failure, for a recording, which keeps what it has:
    /// an MP4 gets its moov with a gapless length of what the written packets hold (at most the
    /// valid length told), where the muxer can still write it; an ADTS file written in place
    /// keeps its frames.
    public mutating func salvage() {
        switch writer {
        case .adts:
            cancel()
        case .mp4(let muxer):
            if let gapless {
                let held = packetFrames - gapless.priming
                muxer.setGapless(priming: Int(gapless.priming), validFrameCount: max(0, min(gapless.validLength ?? held, held)))
            }
            if (try? muxer.finish()) == nil { muxer.cancel() }
        }
    }

    /// Removes the file, even one written in place (a recording that never started).
    public mutating func discard() {
        switch writer {
        case .adts(var adts):
            adts.discard()
            writer = .adts(adts)
        case .mp4(let muxer):
            muxer.cancel()
        }
    }

    /// Abandons the file (one written in place keeps what it has).
    public mutating func cancel() {
        switch writer {
        case .adts(var adts):
            adts.cancel()
            writer = .adts(adts)
        case .mp4(let muxer):
            muxer.cancel()
        }
    }
}
