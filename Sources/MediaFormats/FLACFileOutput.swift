public import SystemPackage
internal import AudioBitstreams

/// A native FLAC file being written (RFC 9639 6–8): `fLaC`, the STREAMINFO block, a SEEKTABLE,
/// the stream's tags and chapters as a VORBIS_COMMENT block, its cover as a PICTURE block,
/// PADDING for later tags, then the encoder's frames as they come.
/// The STREAMINFO written first is the encoder's at open; when the stream ends, the final one it
/// tells in-band (``/MediaCore/StreamEvent/codecConfiguration(_:)``: the length and the MD5 of the
/// samples) is written over it, so `flac -t` checks every sample; so is the seek table, a point
/// at each hundredth of the stream (100 kept, the unused ones placeholders).
///
/// Written under a temporary name and renamed when finished: nothing is left under the name on
/// an error.
public struct FLACFileOutput: PacketFileSink {
    /// The file written.
    public let path: FilePath
    /// ``MediaFileFormat/flac``.
    public var format: MediaFileFormat { .flac }
    /// Frames written.
    public private(set) var packets = 0
    /// Who wrote it, in the VORBIS_COMMENT block.
    public let vendor: String

    private let sink: FileByteSink
    private var metadata = StreamMetadata()
    private var headerWritten = false
    private var finalStreamInfo: FLACStreamInfo?
    private var seekPoints = SeekPoints()
    private var samplesWritten: Int64 = 0
    private var audioBytes: Int64 = 0
    /// Seek points kept in the SEEKTABLE (18 bytes each).
    static let seekPointCount = 100
    /// Where the SEEKTABLE's body starts: after `fLaC`, STREAMINFO and the table's block header.
    static let seekTableOffset: Int64 = 4 + 4 + Int64(FLACStreamInfo.byteCount) + 4
    /// Padding left for tags added later (what `flac` leaves: 8 KiB).
    static let paddingBytes = 8192

    /// A FLAC file at `path`, its VORBIS_COMMENT vendor `vendor`.
    public init(path: FilePath, vendor: String = "KeyFrameKit") throws(PipelineError) {
        self.path = path
        self.vendor = vendor
        do { sink = try FileByteSink(path: path) } catch { throw .stream(error) }
    }

    /// Keeps the tags (before the first frame) and the final STREAMINFO.
    public mutating func receive(_ event: StreamEvent) throws(PipelineError) {
        switch event {
        case .metadata(let told) where !headerWritten: metadata = told
        case .codecConfiguration(let format) where format.codec == .flac:
            finalStreamInfo = try? FLACStreamInfo(bytes: format.decoderConfiguration)
        default: break
        }
    }

    /// Writes one FLAC frame (the header first, before the first).
    public mutating func write(_ packet: MediaSample) throws(PipelineError) {
        if !headerWritten {
            guard case .audio(let stream) = packet.format, stream.codec == .flac else {
                throw .unsupported("\(path): a FLAC file holds FLAC frames, not \(packet.format.mediaType == .audio ? "this codec" : "video")",
                                   path: path)
            }
            let info: FLACStreamInfo
            do { info = try FLACStreamInfo(bytes: stream.decoderConfiguration) } catch {
                throw .unsupported("\(path): the encoder's STREAMINFO does not parse: \(error)", path: path)
            }
            try writeHeader(info)
        }
        do { try sink.write(packet.data) } catch { throw .stream(error) }
        let samples = Int(packet.duration.value)
        seekPoints.append(sample: samplesWritten, offset: audioBytes, samples: samples)
        samplesWritten += Int64(samples)
        audioBytes += Int64(packet.data.count)
        packets += 1
    }

    private mutating func writeHeader(_ info: FLACStreamInfo) throws(PipelineError) {
        var blocks = [FLACMetadataBlock(type: .streamInfo, body: info.bytes),
                      FLACMetadataBlock(type: .seekTable, body: seekTable(points: [])),
                      FLACMetadataBlock(type: .vorbisComment, body: VorbisComment(metadata, vendor: vendor).bytes)]
        // A cover FLAC's 24-bit block length cannot say is left out rather than cut.
        if let cover = metadata.coverArt, case let picture = FLACPicture(image: cover).bytes, picture.count < 1 << 24 {
            blocks.append(FLACMetadataBlock(type: .picture, body: picture))
        }
        blocks.append(FLACMetadataBlock(type: .padding, body: Array(repeating: 0, count: Self.paddingBytes)))
        var header = Array("fLaC".utf8)
        for (index, block) in blocks.enumerated() { header += block.bytes(isLast: index == blocks.count - 1) }
        do { try sink.write(header) } catch { throw .stream(error) }
        headerWritten = true
    }

    /// A SEEKTABLE body (RFC 9639 8.5) of 100 points: `points`, then placeholders.
    private func seekTable(points: [SeekPoints.Point]) -> [UInt8] {
        var writer = ByteWriter()
        for point in points.prefix(Self.seekPointCount) {
            writer.write(UInt64(point.sample))
            writer.write(UInt64(point.offset))
            writer.write(UInt16(clamping: point.samples))
        }
        for _ in min(points.count, Self.seekPointCount)..<Self.seekPointCount {
            writer.write(UInt64.max)
            writer.write(UInt64(0))
            writer.write(UInt16(0))
        }
        return writer.bytes
    }

    /// Writes the final STREAMINFO over the first and renames the file into place.
    public mutating func finish() throws(PipelineError) {
        guard headerWritten else {
            sink.cancel()
            throw .unsupported("\(path): no FLAC frames were written", path: path)
        }
        do {
            // After `fLaC` and STREAMINFO's block header.
            if let finalStreamInfo { try sink.overwrite(finalStreamInfo.bytes, at: 8) }
            if sink.canOverwrite {
                // A point at each hundredth of the stream, each a frame's start, once.
                var chosen: [SeekPoints.Point] = []
                for percent in 0..<100 {
                    if let point = seekPoints.point(atOrBefore: samplesWritten * Int64(percent) / 100),
                       point.sample != chosen.last?.sample { chosen.append(point) }
                }
                try sink.overwrite(seekTable(points: chosen), at: Self.seekTableOffset)
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
