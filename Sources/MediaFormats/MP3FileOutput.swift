public import SystemPackage
internal import AudioBitstreams

/// An MP3 file being written: an ID3v2.4 tag (the stream's tags, its cover as `APIC`, its
/// chapters as `CHAP` and `CTOC`), an Info frame, then the encoder's frames as they come.
///
/// The Info frame (the Xing header with the LAME extension, ``/AudioBitstreams/MP3InfoTag``)
/// is written when the stream ends, over room kept for it: the frame count, the byte count, a
/// seek table, the encoder delay and padding from the stream's gapless numbers (LAME's delay is
/// the priming less the 529 samples of MP3 synthesis, a 12-bit field), and the CRCs. FFmpeg,
/// mpg123 and browsers trim the decode to the source's samples with it. The ID3 tag is written
/// again then with the same length, so that the last chapter ends at the stream's end.
///
/// Written under a temporary name and renamed when finished: nothing is left under the name on
/// an error. To standard output (``/MediaCore/FileByteSink/standardOutputPath``), where nothing
/// is rewritten, there is no Info frame, and the last chapter ends where it starts; `keyframe`
/// itself writes MP3 only to files.
public struct MP3FileOutput: PacketFileSink {
    /// The file written.
    public let path: FilePath
    /// ``MediaFileFormat/mp3``.
    public var format: MediaFileFormat { .mp3 }
    /// Audio frames written (the Info frame not counted).
    public private(set) var packets = 0
    /// The LAME tag's encoder field (nine characters): readers take the gapless numbers only
    /// from a tag whose encoder is `LAME`, `Lavc` or `Lavf`, and LAME codes the frames.
    public let encoderVersion: String

    private let sink: FileByteSink
    private var metadata = StreamMetadata()
    private var gapless: GaplessInfo?
    private var first: MPEGAudioFrameHeader?
    private var tagLength = 0
    private var infoLength = 0
    private var audioBytes: Int64 = 0
    private var musicCRC: UInt16 = 0
    private var constantBitrate = true
    private var seekPoints = SeekPoints()
    /// Room left in the ID3 tag for tags added later.
    static let tagPadding = 1024

    /// An MP3 file at `path`, its LAME tag naming `encoderVersion`.
    public init(path: FilePath, encoderVersion: String = "LAME3.100") throws(PipelineError) {
        self.path = path
        self.encoderVersion = encoderVersion
        do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
    }

    /// Keeps the tags (before the first frame) and the latest gapless numbers.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        switch event {
        case .metadata(let told) where first == nil: metadata = told
        case .gapless(let info): gapless = info
        default: break
        }
    }

    /// Writes one MPEG audio frame (the tag and room for the Info frame first, before the first).
    public mutating func write(_ packet: MediaSample) throws(PipelineError) {
        guard case .audio(let stream) = packet.format, stream.codec == .mp3 else {
            throw .unsupported("\(path): an MP3 file holds MPEG audio frames, not \(packet.format.mediaType == .audio ? "this codec" : "video")",
                               path: path)
        }
        guard let header = MPEGAudioFrameHeader(packet.data, at: 0) else {
            throw .unsupported("\(path): packet \(packets) is not an MPEG audio frame (no frame header)", path: path)
        }
        if first == nil { try writeHead(header) }
        if let first, header.bitrateIndex != first.bitrateIndex { constantBitrate = false }
        seekPoints.append(sample: Int64(packets) * Int64(header.samplesPerFrame), offset: audioBytes, samples: header.samplesPerFrame)
        do { try sink.write(packet.data) } catch { throw .stream(error) }
        musicCRC = CyclicRedundancyCheck.crc16(packet.data, preset: musicCRC)
        audioBytes += Int64(packet.data.count)
        packets += 1
    }

    private mutating func writeHead(_ header: MPEGAudioFrameHeader) throws(PipelineError) {
        first = header
        let tag = ID3v2Tag(metadata, duration: nil)
        let bytes = tag.frames.isEmpty ? [] : tag.bytes(padding: Self.tagPadding)
        tagLength = bytes.count
        infoLength = sink.canOverwrite ? MP3InfoTag.infoFrameHeader(like: header).frameLength : 0
        do { try sink.write(bytes + [UInt8](repeating: 0, count: infoLength)) } catch { throw .stream(error) }
    }

    /// Writes the Info frame and the final tag, and renames the file into place.
    public mutating func finish() throws(PipelineError) {
        guard let first else {
            sink.cancel()
            throw .unsupported("\(path): no MP3 frames were written", path: path)
        }
        do {
            if infoLength > 0 {
                let decoded = Int64(packets) * Int64(first.samplesPerFrame)
                let priming = Int(gapless?.priming ?? 0)
                let valid = gapless?.validLength ?? (decoded - Int64(priming))
                var info = MP3InfoTag(frameCount: packets, samplesPerFrame: first.samplesPerFrame, priming: priming, validSamples: valid)
                info.byteCount = Int(clamping: audioBytes + Int64(infoLength))
                // The seek table: for each percent of the stream, where its frame starts, as a fraction
                // of 256 of the bytes from the Info frame on.
                let total = Double(audioBytes + Int64(infoLength))
                info.tableOfContents = (0..<100).map { percent in
                    let offset = seekPoints.point(atOrBefore: decoded * Int64(percent) / 100)?.offset ?? 0
                    return UInt8(min(255, (Double(offset + Int64(infoLength)) * 256 / total).rounded(.down)))
                }
                info.isVariableBitrate = !constantBitrate
                info.encoderVersion = encoderVersion
                info.musicCRC = musicCRC
                let frame = info.frame(header: MP3InfoTag.infoFrameHeader(like: first))
                try sink.overwrite(frame, at: Int64(tagLength))
                if !metadata.chapters.isEmpty {
                    let duration = MediaTime(value: valid, timescale: Int32(first.sampleRate))
                    let tag = ID3v2Tag(metadata, duration: duration).bytes(padding: Self.tagPadding)
                    if tag.count == tagLength { try sink.overwrite(tag, at: 0) }
                }
            }
            try sink.commit()
        } catch {
            sink.cancel()
            throw .stream(error)
        }
    }

    /// Removes what was written.
    public mutating func cancel() { sink.cancel() }
}
