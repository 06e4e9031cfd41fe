public import SystemPackage
public import AudioBitstreams

/// The Opus packets of an Ogg Opus file's first logical stream (RFC 7845), one packet each, as
/// stored: `OpusHead` and `OpusTags` read first (the pre-skip, the tags, cover and chapters),
/// then each audio packet put together from its pages (``/AudioBitstreams/OggPacketAssembler``),
/// each page's CRC checked, its duration from its table of contents (RFC 6716 3.1), at 48 kHz.
/// Pages of other streams are stepped over; a stream chained after the first ends the input.
///
/// The trim is the pre-skip and, from the stream's last page's granule position, the samples
/// presented (RFC 7845 4.5).
public struct OggOpusPacketInput: PacketFileSource {
    /// The file read.
    public let path: FilePath
    /// ``MediaFileFormat/oggOpus``.
    public var format: MediaFileFormat { .oggOpus }
    /// Opus at 48 kHz, `OpusHead` as its configuration.
    public var audioFormat: EncodedAudioFormat? { stream }
    /// The pre-skip, and the samples the last page's granule position presents.
    public let trim: GaplessTrim
    /// The tags, cover and chapters of `OpusTags`.
    public let metadata: StreamMetadata
    /// The identification header.
    public let head: OpusHeader
    /// The stream as `OpusHead` describes it.
    public let stream: EncodedAudioFormat
    /// Samples at 48 kHz of the packets read so far (the pre-skip included).
    public private(set) var decodedSamples: Int64 = 0
    /// Audio packets read so far.
    public private(set) var packetsRead = 0

    private let headers: OggOpusHeaders
    private var offset: Int64
    private var assembler = OggPacketAssembler(maximumPacketBytes: 1 << 20)
    private var queue: [[UInt8]] = []
    private var ended = false
    private var damage: [DamageEvent] = []

    /// Opens the Ogg Opus file at `path` and reads its headers.
    ///
    /// - Throws: `PipelineError.unsupported` for a file whose first stream is not Opus, or
    ///   whose header pages do not read.
    public init(path: FilePath) throws(PipelineError) {
        self.path = path
        headers = try OggOpusHeaders(path: path)
        head = headers.head
        offset = headers.audioStart
        metadata = StreamMetadata(vorbisComment: headers.comment)
        stream = EncodedAudioFormat(codec: .opus, sampleRate: 48000, channelCount: head.channelCount, framesPerPacket: 960,
                                    decoderConfiguration: head.bytes)
        let presented = OggOpusTrim(path: path)?.presentedSamples
        trim = GaplessTrim(priming: head.preSkip, validFrameCount: presented)
    }

    /// The next Opus packet, `nil` at the stream's end.
    ///
    /// - Throws: `PipelineError.unsupported` for a packet with no table of contents.
    public mutating func next() throws(PipelineError) -> MediaSample? {
        while queue.isEmpty {
            guard !ended, offset < headers.source.byteCount else { return nil }
            let start = offset
            let page: OggPage
            do { page = try OggOpusHeaders.page(headers.source, at: &offset, path: path) } catch {
                // A page that does not read is damage: the bytes to the next page of the stream
                // that does are stepped over, with the packet the lost page held a part of (the
                // assembler starts again, so the part before is not joined to the part after),
                // or, with none, the stream ends where it is.
                if let resume = nextReadablePage(after: start) {
                    damage.append(DamageEvent(.skippedBytes(count: resume - start), at: start,
                                              message: "\(error); \(resume - start) bytes skipped to the next page, at byte \(resume)"))
                    offset = resume
                    assembler = OggPacketAssembler(maximumPacketBytes: assembler.maximumPacketBytes)
                    continue
                }
                damage.append(DamageEvent(.skippedBytes(count: headers.source.byteCount - start), at: start, message: "\(error)"))
                ended = true
                return nil
            }
            if page.serialNumber != headers.serialNumber {
                // Another stream beginning after ours ended is a chained link: not ours.
                if page.flags.contains(.beginningOfStream), packetsRead > 0, !assembler.isInsidePacket { ended = true }
                continue
            }
            do { queue = try assembler.append(page) } catch { throw .unsupported("\(path): \(error)", path: path) }
            if page.flags.contains(.endOfStream) { ended = true }
        }
        let packet = queue.removeFirst()
        guard let samples = OpusPacket.sampleCount(packet) else {
            throw .unsupported("\(path): Opus packet \(packetsRead + 1) has no table of contents (RFC 6716 3.1)", path: path)
        }
        let sample = MediaSample(data: packet, presentationTime: MediaTime(value: decodedSamples, timescale: 48000),
                                 duration: MediaTime(value: Int64(samples), timescale: 48000), format: .audio(stream))
        decodedSamples += Int64(samples)
        packetsRead += 1
        return sample
    }

    /// The offset of the first page of this stream after `start` that reads (its capture
    /// pattern `OggS`, version 0 and the stream's serial number, then its CRC checked), `nil`
    /// when none does (RFC 3533 6: a reader resynchronises on the pattern). Only a candidate
    /// whose header is the stream's has its body read.
    private func nextReadablePage(after start: Int64) -> Int64? {
        let source = headers.source, size = source.byteCount
        let serial = headers.serialNumber
        var position = start + 1
        while position + Int64(OggPage.headerLength) <= size {
            guard let chunk = try? source.read(at: position, count: Int(min(Int64(1 << 16), size - position))), chunk.count >= OggPage.headerLength else {
                return nil
            }
            for index in 0...(chunk.count - 4) where chunk[index] == 0x4F && chunk[index + 1] == 0x67 && chunk[index + 2] == 0x67 && chunk[index + 3] == 0x53 {
                // Version 0, and the serial number (bytes 14–17, little-endian) of this stream.
                if index + 18 <= chunk.count {
                    let found = (14..<18).reduce(UInt32(0)) { $0 | UInt32(chunk[index + $1]) << (8 * UInt32($1 - 14)) }
                    guard chunk[index + 4] == 0, found == serial else { continue }
                }
                var candidate = position + Int64(index)
                let found = candidate
                if (try? OggOpusHeaders.page(source, at: &candidate, path: path)) != nil { return found }
            }
            position += Int64(chunk.count - 3)
        }
        return nil
    }

    /// How far through the stream.
    public var progress: MediaProgress {
        MediaProgress(mediaSeconds: Double(decodedSamples) / 48000, totalSeconds: trim.validFrameCount.map { Double($0 + Int64(trim.priming)) / 48000 })
    }

    /// Pages at the end that did not read.
    public mutating func takeDamage() -> [DamageEvent] {
        defer { damage = [] }
        return damage
    }
}
