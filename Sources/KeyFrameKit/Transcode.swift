/// The file-to-file jobs of `keyframe encode` and `keyframe decode`, streamed: memory holds one
/// chunk of PCM and one packet, however long the file.
public enum Transcode {
    /// How far a job has got.
    public struct Progress: Sendable {
        /// Seconds of media done.
        public var mediaSeconds: Double
        /// Seconds of media in all, when known.
        public var totalSeconds: Double?
    }

    /// What an encode produced.
    public struct EncodeSummary: Sendable {
        /// Input frames encoded.
        public var inputFrames: Int64
        /// AAC packets written.
        public var packets: Int64
        /// The encoder's priming (samples).
        public var priming: Int
        /// The padding after the input's end (samples).
        public var padding: Int
        /// Not fatal oddities of the input.
        public var warnings: [String]
    }

    /// Frames of PCM read per step.
    static let chunkFrames = 16 * 1024

    /// Encodes PCM from `input` to an ADTS file at `outputPath` (written under a temporary name and
    /// renamed when complete; nothing is left under `outputPath` on an error).
    public static func encodeToADTS(_ input: inout PCMFileReader, outputPath: String, bitrate: Int, coder: AACEncoder.Coder = .twoLoop,
                                    progress: (Progress) -> Void = { _ in }) throws(PipelineError) -> EncodeSummary {
        let format = input.format
        let encoder: AACEncoder
        do { encoder = try AACEncoder(format: format, bitrate: bitrate, coder: coder) } catch { throw .codec(error) }
        guard let config = encoder.audioSpecificConfig else { throw .unsupported("the encoder gave no AudioSpecificConfig") }
        let sink: FileByteSink
        do { sink = try FileByteSink(path: outputPath) } catch { throw .stream(error) }
        var writer: ADTSWriter<FileByteSink>
        do { writer = try ADTSWriter(sink: sink, audioSpecificConfig: config) } catch { throw .bitstream(error) }
        let frames: Int64
        do throws(PipelineError) {
            frames = try encode(&input, with: encoder, progress: progress) { packets throws(PipelineError) in
                try write(packets, to: &writer)
            }
            do { try sink.commit() } catch { throw .stream(error) }
        } catch {
            sink.cancel()
            throw error
        }
        return EncodeSummary(inputFrames: frames, packets: encoder.packetCount, priming: encoder.priming,
                             padding: encoder.padding ?? 0, warnings: input.warnings)
    }

    /// Feeds every chunk of `input` to `encoder`, then flushes it, handing each batch of packets
    /// to `deliver`; returns the input frames encoded. The loop ADTS and M4A encoding share.
    static func encode(_ input: inout PCMFileReader, with encoder: AACEncoder, progress: (Progress) -> Void,
                       deliver: ([MediaSample]) throws(PipelineError) -> Void) throws(PipelineError) -> Int64 {
        let format = input.format
        let total = input.frameCount.map { Double($0) / Double(format.sampleRate) }
        var frames: Int64 = 0
        while let chunk = try input.read(maxFrames: chunkFrames) {
            var packets: [MediaSample] = []
            var failure: CodecError?
            chunk.withUnsafeBytes { raw in
                do throws(CodecError) { packets = try encoder.encode(pcm: raw, format: format) } catch { failure = error }
            }
            if let failure { throw PipelineError.codec(failure) }
            try deliver(packets)
            frames += Int64(chunk.count / format.bytesPerFrame)
            progress(Progress(mediaSeconds: Double(frames) / Double(format.sampleRate), totalSeconds: total))
        }
        let last: [MediaSample]
        do { last = try encoder.flush() } catch { throw .codec(error) }
        try deliver(last)
        return frames
    }

    private static func write(_ packets: [MediaSample], to writer: inout ADTSWriter<FileByteSink>) throws(PipelineError) {
        do {
            for packet in packets { try writer.write(rawDataBlock: packet.data) }
        } catch {
            throw .bitstream(error)
        }
    }

    /// What a decode produced.
    public struct DecodeSummary: Sendable {
        /// The PCM layout written.
        public var format: PCMFormat
        /// Frames written.
        public var frames: Int64
        /// AAC packets decoded.
        public var packets: Int
        /// Damage met in the input (skipped bytes, truncation), one sentence each.
        public var damage: [String]
    }

    /// Where decoded PCM goes.
    public enum PCMDestination: Sendable {
        /// A WAV file.
        case wav(path: String)
        /// Raw interleaved PCM.
        case raw(path: String)
    }

    /// Decodes the ADTS file at `inputPath` to `destination`, as `sampleFormat` PCM. Like
    /// `ffmpeg -i IN.aac OUT.wav`, every decoded sample is kept: ADTS cannot say how much of the
    /// start is encoder priming.
    public static func decodeADTS(inputPath: String, to destination: PCMDestination, sampleFormat: PCMSampleFormat = .int16,
                                  progress: (Progress) -> Void = { _ in }) throws(PipelineError) -> DecodeSummary {
        var output = try PCMOutput(destination: destination)
        return try decodeADTS(inputPath: inputPath, into: &output, sampleFormat: sampleFormat, progress: progress)
    }

    /// Decodes the ADTS file at `inputPath` into `output` (a file, a player).
    static func decodeADTS(inputPath: String, into output: inout some PCMWriting, sampleFormat: PCMSampleFormat,
                           progress: (Progress) -> Void) throws(PipelineError) -> DecodeSummary {
        let source: FileByteSource
        do { source = try FileByteSource(path: inputPath) } catch { throw .stream(error) }
        let totalBytes = source.size()
        var reader = ADTSReader(source: source)
        let decoder: AACDecoder
        do { decoder = try AACDecoder(audioSpecificConfig: nil, outputSampleFormat: sampleFormat) } catch { throw .codec(error) }
        var damage: [String] = []
        var packets = 0
        do throws(PipelineError) {
            while true {
                let frame: ADTSFrame?
                do { frame = try reader.nextFrame() } catch { throw .bitstream(error) }
                damage += reader.takeEvents().filter(\.isDamage).map(\.description)
                guard let frame else { break }
                packets += 1
                let pcm: [UInt8]
                do { pcm = try decoder.decode(packet: frame.bytes) } catch { throw .codec(error) }
                try output.write(pcm, format: decoder.outputFormat)
                if let rate = decoder.outputFormat?.sampleRate, packets % 64 == 0 {
                    let seconds = Double(decoder.deliveredFrameCount) / Double(rate)
                    let total = totalBytes.map { bytes in seconds * Double(bytes) / Double(max(reader.offset, 1)) }
                    progress(Progress(mediaSeconds: seconds, totalSeconds: total))
                }
            }
            let last: [UInt8]
            do { last = try decoder.flush() } catch { throw .codec(error) }
            try output.write(last, format: decoder.outputFormat)
            guard let format = decoder.outputFormat else {
                throw .unsupported("\(inputPath): no AAC frames could be decoded")
            }
            try output.finish()
            return DecodeSummary(format: format, frames: decoder.deliveredFrameCount, packets: packets, damage: damage)
        } catch {
            output.cancel()
            throw error
        }
    }
}
