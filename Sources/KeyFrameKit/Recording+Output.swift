internal import Synchronization

/// The file end of a ``Recording``: a raw PCM file, a WAV writer, an ADTS writer or an MP4
/// muxer, written from the delivery thread and finalized by ``Recording/finish()``. The first
/// write error is kept (later writes are skipped) and thrown by ``finish(frames:)``.
final class RecordingOutput: Sendable {
    private enum Writer {
        case raw(FileByteSink)
        case wav(WAVWriter<FileByteSink>, FileByteSink)
        case adts(ADTSWriter<FileByteSink>, FileByteSink)
        case m4a(MP4Muxer)

        var isRaw: Bool {
            if case .raw = self { true } else { false }
        }
    }

    private struct State {
        var writer: Writer?
        var failure: PipelineError?
        var pcmFrames: Int64 = 0
        var framesSinceCheckpoint = 0
        var priming = 0
        /// Frames of the AAC packets written (1024 each), priming included.
        var packetFrames: Int64 = 0
    }

    private let options: Recording.Options
    private let state = Mutex(State())
    private let onFailure: @Sendable () -> Void

    /// - Parameter onFailure: called once, on the writing thread, when a write first fails.
    init(options: Recording.Options, onFailure: @escaping @Sendable () -> Void) {
        self.options = options
        self.onFailure = onFailure
    }

    /// Creates the file (and, for ADTS and M4A, the writer that needs the stream's `config`).
    func open(audioSpecificConfig config: AudioSpecificConfig?, priming: Int) throws(PipelineError) {
        let options = self.options
        try state.withLock { state throws(PipelineError) in
            state.writer = try Self.makeWriter(options: options, audioSpecificConfig: config, priming: priming)
            state.priming = priming
        }
    }

    private static func makeWriter(options: Recording.Options, audioSpecificConfig config: AudioSpecificConfig?,
                                   priming: Int) throws(PipelineError) -> Writer {
        let writer: Writer
        switch options.container {
        case .pcm:
            do { writer = .raw(try FileByteSink(path: options.outputPath, atomic: false)) } catch { throw .stream(error) }
        case .wav:
            let sink: FileByteSink
            do { sink = try FileByteSink(path: options.outputPath, atomic: false) } catch { throw .stream(error) }
            do { writer = .wav(try WAVWriter(sink: sink, format: options.configuration.pcmFormat), sink) } catch {
                sink.discard()
                throw .wav(error)
            }
        case .aac:
            guard let config else { throw .unsupported("ADTS output needs the encoder's AudioSpecificConfig") }
            let sink: FileByteSink
            do { sink = try FileByteSink(path: options.outputPath, atomic: false) } catch { throw .stream(error) }
            do { writer = .adts(try ADTSWriter(sink: sink, audioSpecificConfig: config), sink) } catch {
                sink.discard()
                throw .bitstream(error)
            }
        case .m4a:
            let muxer = MP4Muxer(configuration: MuxerConfiguration(
                outputPath: options.outputPath, mediaTypes: .audio,
                fragmentDuration: options.crashSafe ? MediaTime(value: 1, timescale: 1) : nil,
                encoderName: "KeyFrameKit (libavcodec aac)"))
            do { try muxer.start() } catch { throw .container(error) }
            // A fragmented file writes its edit list before the first sample; the valid length
            // is set at the end (and rewritten into the moov then).
            muxer.setGapless(priming: priming, validFrameCount: 0)
            writer = .m4a(muxer)
        }
        return writer
    }

    /// Writes captured PCM (`.pcm`, `.wav`).
    func write(pcm sample: MediaSample) {
        let frames = sample.data.count / max(options.configuration.pcmFormat.bytesPerFrame, 1)
        let failed = state.withLock { state -> Bool in
            guard state.failure == nil, let writer = state.writer else { return false }
            do throws(PipelineError) {
                switch writer {
                case .raw(let sink):
                    do throws(ByteStreamError) { try sink.write(sample.data) } catch { throw .stream(error) }
                case .wav(var wav, let sink):
                    do throws(WAVError) { try wav.write(sample.data) } catch { throw .wav(error) }
                    state.writer = .wav(wav, sink)
                case .adts, .m4a:
                    throw .unsupported("PCM written to an AAC output")
                }
                state.pcmFrames += Int64(frames)
                try checkpoint(&state, frames: frames)
                return false
            } catch {
                state.failure = error
                return true
            }
        }
        if failed { onFailure() }
    }

    /// Writes encoded packets (`.aac`, `.m4a`).
    func write(packets: [MediaSample]) {
        let failed = state.withLock { state -> Bool in
            guard state.failure == nil, let writer = state.writer else { return false }
            do throws(PipelineError) {
                switch writer {
                case .adts(var adts, let sink):
                    do throws(AACBitstreamError) {
                        for packet in packets { try adts.write(rawDataBlock: packet.data) }
                    } catch { throw .bitstream(error) }
                    state.writer = .adts(adts, sink)
                case .m4a(let muxer):
                    do throws(MP4Error) {
                        for packet in packets { try muxer.append(packet) }
                    } catch { throw .container(error) }
                case .raw, .wav:
                    throw .unsupported("AAC packets written to a PCM output")
                }
                state.packetFrames += Int64(packets.count * AACEncoder.framesPerPacket)
                try checkpoint(&state, frames: packets.count * AACEncoder.framesPerPacket)
                return false
            } catch {
                state.failure = error
                return true
            }
        }
        if failed { onFailure() }
    }

    /// Crash-safe: once a second of audio, pushes what is buffered to the file (and the WAV
    /// sizes into its header). A fragmented M4A is flushed by the muxer at each fragment.
    private func checkpoint(_ state: inout State, frames: Int) throws(PipelineError) {
        guard options.crashSafe else { return }
        state.framesSinceCheckpoint += frames
        guard state.framesSinceCheckpoint >= options.configuration.sampleRate, let writer = state.writer else { return }
        state.framesSinceCheckpoint = 0
        switch writer {
        case .raw(let sink), .adts(_, let sink):
            do { try sink.flush() } catch { throw .stream(error) }
        case .wav(var wav, let sink):
            do { try wav.updateHeader() } catch { throw .wav(error) }
            state.writer = .wav(wav, sink)
            do { try sink.flush() } catch { throw .stream(error) }
        case .m4a:
            break
        }
    }

    /// Finalizes the file; `frames` is the number of frames encoded (for the M4A's edit list).
    /// Returns the PCM frames written (`.pcm`, `.wav`), or `frames`.
    func finish(frames: Int64) throws(PipelineError) -> Int64 {
        try state.withLock { state throws(PipelineError) -> Int64 in
            guard let writer = state.writer else { throw .unsupported("the recording's output was never opened") }
            state.writer = nil
            if let failure = state.failure {
                // Keep what was written: an M4A still gets its moov if the muxer can write it
                // (a full disk may have freed up; a muxer error leaves nothing to save).
                if case .m4a(let muxer) = writer {
                    let written = max(0, min(frames, state.packetFrames - Int64(state.priming)))
                    muxer.setGapless(priming: state.priming, validFrameCount: written)
                    if (try? muxer.finish()) == nil { muxer.cancel() }
                } else {
                    Self.cancel(writer)
                }
                throw failure
            }
            do throws(PipelineError) {
                switch writer {
                case .raw(let sink), .adts(_, let sink):
                    do throws(ByteStreamError) { try sink.commit() } catch { throw .stream(error) }
                    return writer.isRaw ? state.pcmFrames : frames
                case .wav(var wav, let sink):
                    do throws(WAVError) { try wav.finish() } catch { throw .wav(error) }
                    do throws(ByteStreamError) { try sink.commit() } catch { throw .stream(error) }
                    return state.pcmFrames
                case .m4a(let muxer):
                    muxer.setGapless(priming: state.priming, validFrameCount: frames)
                    do throws(MP4Error) { try muxer.finish() } catch { throw .container(error) }
                    return frames
                }
            } catch {
                Self.cancel(writer)
                throw error
            }
        }
    }

    /// Gives up: files written in place keep what they hold; an unfinished M4A is removed
    /// unless it is fragmented (crash-safe), whose written fragments stay.
    func cancel() {
        state.withLock { state in
            if let writer = state.writer { Self.cancel(writer) }
            state.writer = nil
        }
    }

    /// Removes the file: for a recording that never started.
    func discard() {
        state.withLock { state in
            switch state.writer {
            case .raw(let sink), .wav(_, let sink), .adts(_, let sink): sink.discard()
            case .m4a(let muxer): muxer.cancel()
            case nil: break
            }
            state.writer = nil
        }
    }

    private static func cancel(_ writer: Writer) {
        switch writer {
        case .raw(let sink), .wav(_, let sink), .adts(_, let sink): sink.cancel()
        case .m4a(let muxer): muxer.cancel()
        }
    }
}
