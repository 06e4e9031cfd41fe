public import SystemPackage
internal import AudioBitstreams

/// A native FLAC file being written (RFC 9639 6–8): `fLaC`, the STREAMINFO block, the stream's
/// tags as a VORBIS_COMMENT block, PADDING for later tags, then the encoder's frames as they come.
/// The STREAMINFO written first is the encoder's at open; when the stream ends, the final one it
/// tells in-band (``/MediaCore/StreamEvent/codecConfiguration(_:)``: the length and the MD5 of the
/// samples) is written over it, so `flac -t` checks every sample.
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
        packets += 1
    }

    private mutating func writeHeader(_ info: FLACStreamInfo) throws(PipelineError) {
        var fields = metadata.tags.map { VorbisComment.Field(VorbisComment.fieldName(ofTag: $0.key), $0.value) }
        // Chapters as the CHAPTERxxx fields podcast tools read (HH:MM:SS.mmm, then the name).
        for (index, chapter) in metadata.chapters.enumerated() where index < 999 {
            let number = String(format3: index + 1)
            fields.append(.init("CHAPTER\(number)", Self.clock(chapter.start.seconds)))
            fields.append(.init("CHAPTER\(number)NAME", chapter.title))
        }
        let blocks = [FLACMetadataBlock(type: .streamInfo, body: info.bytes),
                      FLACMetadataBlock(type: .vorbisComment, body: VorbisComment(vendor: vendor, fields: fields).bytes),
                      FLACMetadataBlock(type: .padding, body: Array(repeating: 0, count: Self.paddingBytes))]
        var header = Array("fLaC".utf8)
        for (index, block) in blocks.enumerated() { header += block.bytes(isLast: index == blocks.count - 1) }
        do { try sink.write(header) } catch { throw .stream(error) }
        headerWritten = true
    }

    /// `seconds` as `HH:MM:SS.mmm`.
    static func clock(_ seconds: Double) -> String {
        let milliseconds = Int((max(0, seconds) * 1000).rounded())
        let (h, m, s, ms) = (milliseconds / 3_600_000, milliseconds / 60_000 % 60, milliseconds / 1000 % 60, milliseconds % 1000)
        return String(format2: h) + ":" + String(format2: m) + ":" + String(format2: s) + "." + String(format3: ms)
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
            try sink.commit()
        } catch {
            sink.cancel()
            throw .stream(error)
        }
    }

    /// Removes what was written.
    public mutating func cancel() { sink.cancel() }
}

extension String {
    /// `value` in two digits, zero-padded.
    fileprivate init(format2 value: Int) { self = value < 10 ? "0\(value)" : "\(value)" }
    /// `value` in three digits, zero-padded.
    fileprivate init(format3 value: Int) { self = value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : "\(value)" }
}
