public import SystemPackage
internal import AudioBitstreams

/// An Ogg Opus file being written (RFC 7845): the identification header `OpusHead` alone on the
/// first page, with the stream's real pre-skip; the comment header `OpusTags` on the pages after
/// it, with the tags, the chapters as `CHAPTERxxx` fields and the cover as a
/// `METADATA_BLOCK_PICTURE`; then the audio packets, on pages of up to a second, each page's
/// granule position the 48 kHz samples decoded through its last packet, pre-skip included. The
/// last page's granule position is the pre-skip plus the stream's valid length, so a decoder
/// trims the padding (RFC 7845 4.5) and presents exactly the source's samples.
///
/// Pages are checksummed (RFC 3533 6). The serial number is derived from the stream's first
/// bytes, so the same input writes the same file. Written under a temporary name and renamed
/// when finished; nothing is rewritten, so standard output
/// (``/MediaCore/FileByteSink/standardOutputPath``) works as well, though `keyframe` itself
/// writes Ogg Opus only to files.
public struct OggOpusFileOutput: PacketFileSink {
    /// The file written.
    public let path: FilePath
    /// ``MediaFileFormat/oggOpus``.
    public var format: MediaFileFormat { .oggOpus }
    /// Audio packets written.
    public private(set) var packets = 0
    /// The vendor string of `OpusTags`.
    public let vendor: String

    private let sink: FileByteSink
    private var metadata = StreamMetadata()
    private var gapless: GaplessInfo?
    private var stream: OggStreamWriter?
    private var preSkip = 0
    private var granule: Int64 = 0

    /// An Ogg Opus file at `path`, its `OpusTags` vendor `vendor`.
    public init(path: FilePath, vendor: String = "KeyFrameKit") throws(PipelineError) {
        self.path = path
        self.vendor = vendor
        do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
    }

    /// Keeps the tags (before the first packet) and the latest gapless numbers.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        switch event {
        case .metadata(let told) where stream == nil: metadata = told
        case .gapless(let info): gapless = info
        default: break
        }
    }

    /// Writes one Opus packet (the two header packets first, before the first).
    public mutating func write(_ packet: MediaSample) throws(PipelineError) {
        if stream == nil { try writeHeaders(packet) }
        // Each packet's duration at 48 kHz, the rate of every Opus granule position.
        let duration = packet.duration.timescale == 48000 ? packet.duration.value
            : packet.duration.value * 48000 / Int64(max(1, packet.duration.timescale))
        granule += duration
        guard var stream else { return }
        let pages = stream.append(packet.data, granulePosition: granule)
        self.stream = stream
        try write(pages)
        packets += 1
    }

    private mutating func writeHeaders(_ packet: MediaSample) throws(PipelineError) {
        guard case .audio(let audio) = packet.format, audio.codec == .opus else {
            throw .unsupported("\(path): an Ogg Opus file holds Opus packets, not \(packet.format.mediaType == .audio ? "this codec" : "video")",
                               path: path)
        }
        var head: OpusHeader
        do { head = try OpusHeader(bytes: audio.decoderConfiguration) } catch {
            throw .unsupported("\(path): the encoder's OpusHead does not parse: \(error)", path: path)
        }
        if let priming = gapless?.priming, priming >= 0, priming <= Int64(UInt16.max) { head.preSkip = Int(priming) }
        preSkip = head.preSkip
        let headBytes = head.bytes
        // FNV-1a of the header and the first packet: a serial number that differs between streams
        // and is the same for the same input.
        var hash: UInt32 = 2_166_136_261
        for byte in headBytes + packet.data.prefix(64) { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        var writer = OggStreamWriter(serialNumber: hash, pageDuration: 48000)
        // OpusHead alone on the first page; OpusTags ends its own page(s) (RFC 7845 3).
        var pages = writer.append(headBytes, granulePosition: 0)
        pages += writer.flush()
        pages += writer.append(VorbisComment(metadata, vendor: vendor, withPicture: true).opusTagsPacket, granulePosition: 0)
        pages += writer.flush()
        stream = writer
        try write(pages)
    }

    private func write(_ pages: [OggPage]) throws(PipelineError) {
        for page in pages {
            do { try sink.write(page.bytes) } catch { throw .stream(error) }
        }
    }

    /// Writes the last page, its granule position trimming the padding, and renames the file
    /// into place.
    public mutating func finish() throws(PipelineError) {
        guard var stream, packets > 0 else {
            sink.cancel()
            throw .unsupported("\(path): no Opus packets were written", path: path)
        }
        // The end: the pre-skip plus the valid samples, never past what the packets decode to.
        let end = gapless?.validLength.map { min(granule, Int64(preSkip) + $0) } ?? granule
        do {
            try write(stream.flush(endOfStream: true, granulePosition: end))
            self.stream = stream
        } catch {
            sink.cancel()
            throw error
        }
        do { try sink.commit() } catch {
            sink.cancel()
            throw .stream(error)
        }
    }

    /// Removes what was written.
    public mutating func cancel() { sink.cancel() }
}
