public import SystemPackage

/// An AAC output file, as a ``/MediaCore/PacketSink``: ADTS or MP4/M4A, chosen by the name
/// (``MediaFileFormat/init(nameOf:)``).
///
/// An MP4 is gapless from the stream's ``/MediaCore/StreamEvent/gapless(_:)`` events: its edit
/// list's `media_time` is the priming and its duration exactly the valid length (ISO/IEC
/// 14496-12, 8.6.6), with iTunSMPB too. An encoder tells the priming before its first packet
/// and the valid length after its last, which the pump delivers before ``finish()``. ADTS
/// cannot carry them.
public struct AudioPacketOutput: PacketSink {
    private enum Writer {
        case adts(ADTSPacketWriter<FileByteSink>)
        case mp4(MP4Muxer)
    }

    private var writer: Writer
    /// The stream's gapless numbers, once told.
    public private(set) var gapless: GaplessInfo?
    /// PCM frames `packet` decodes to: its format's frames per packet (the AudioSpecificConfig's
    /// frame length), else an AAC-LC frame's 1024 (ISO/IEC 14496-3, 4.5.1.1).
    public static func frames(in packet: MediaSample) -> Int64 {
        if case .audio(let audio) = packet.format, audio.framesPerPacket > 0 { return Int64(audio.framesPerPacket) }
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

    /// Creates the output at `path`.
    ///
    /// - Parameters:
    ///   - path: the file to write; its extension chooses the container.
    ///   - fragmentDuration: write an MP4 fragmented (crash-safe), a fragment this long.
    ///   - inPlace: write ADTS under its own name from the start (a recording that must survive
    ///     a kill); a fragmented MP4 is always written in place.
    ///   - encoderName: the MP4's `©too` tag.
    ///   - metadata: the MP4's other tags (ADTS carries none).
    /// - Throws: `PipelineError.unsupported` when the name is not an AAC container;
    ///   `PipelineError.stream` or `PipelineError.container` when it cannot be created.
    public init(path: FilePath, fragmentDuration: MediaTime? = nil, inPlace: Bool = false,
                encoderName: String = "KeyFrameKit", metadata: ITunesMetadata = ITunesMetadata()) throws(PipelineError) {
        self.path = path
        switch MediaFileFormat(nameOf: path) {
        case .adts:
            format = .adts
            do { writer = .adts(ADTSPacketWriter(sink: try FileByteSink(path: path, atomic: !inPlace))) } catch {
                throw .stream(error)
            }
        case .mp4:
            format = .mp4
            let layout: MuxerConfiguration.Layout = fragmentDuration.map { .fragmented(fragmentDuration: $0) } ?? .fastStart
            let muxer: MP4Muxer
            do {
                muxer = try MP4Muxer(path: path, configuration: MuxerConfiguration(layout: layout, mediaTypes: .audio, encoderName: encoderName))
                try muxer.setMetadata(metadata)
                try muxer.start()
            } catch { throw .container(error) }
            writer = .mp4(muxer)
        default:
            throw .unsupported("\(path): unknown output type; AAC output is \(MediaFileFormat.extensionList(holding: .aac))")
        }
    }

    /// Keeps the stream's gapless numbers for the MP4's edit list. A fragmented file writes its
    /// edit list before the first sample, so the priming must come first; the valid length is
    /// set at the end (and rewritten into the moov then).
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        guard case .gapless(let info) = event else { return }
        gapless = info
        if case .mp4(let muxer) = writer { muxer.setGapless(priming: Int(info.priming), validFrameCount: info.validLength ?? 0) }
    }

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
