public import SystemPackage
internal import AudioBitstreams

/// What an Ogg Opus file's ends trim (RFC 7845 4.2 and 4.5): the pre-skip its `OpusHead` says,
/// and the granule position of its stream's last page, so that the samples presented are the
/// difference, at 48 kHz. (libavformat's duration counts the pre-skip.)
public struct OggOpusTrim: Sendable, Hashable {
    /// Samples at 48 kHz dropped at the start.
    public var preSkip: Int
    /// The last page's granule position: where the presented samples end, pre-skip included.
    public var endGranulePosition: Int64

    /// Samples at 48 kHz presented.
    public var presentedSamples: Int64 { max(0, endGranulePosition - Int64(preSkip)) }

    /// The trim of the Ogg Opus file at `path`; `nil` when it is not one, or no page of its
    /// stream within its last 128 KiB reads with a granule position.
    public init?(path: FilePath) {
        guard let headers = try? OggOpusHeaders(path: path) else { return nil }
        self.init(tailOf: headers.source, serialNumber: headers.serialNumber, preSkip: headers.head.preSkip, audioStart: headers.audioStart)
    }

    /// The trim of the Ogg Opus file whose bytes `source` holds, from its first page (`OpusHead`,
    /// alone on it: RFC 7845 3) and the last 128 KiB; `nil` when it is not one, or no page of its
    /// stream there reads with a granule position. Reads no more than those ends.
    public init?(source: some RandomAccessByteSource) {
        guard let first = try? source.read(at: 0, count: OggPage.headerLength + OggPage.maximumSegments * 256) else { return nil }
        var reader = ByteReader(first)
        guard let page = try? OggPage.read(&reader), page.flags.contains(.beginningOfStream),
              let packet = page.parts.first, packet.endsPacket, let head = try? OpusHeader(bytes: Array(packet.bytes)) else { return nil }
        self.init(tailOf: source, serialNumber: page.serialNumber, preSkip: head.preSkip, audioStart: Int64(reader.offset))
    }

    /// The last page of stream `serialNumber` that reads within the last 128 KiB of `source`
    /// (not before `audioStart`), its capture patterns tried from the end. The tail is read
    /// backwards 32 KiB at a time, and no further than the page found: a source read in ranges
    /// fetches little more than the blocks that hold the last page.
    private init?(tailOf source: some RandomAccessByteSource, serialNumber: UInt32, preSkip: Int, audioStart: Int64) {
        let size = source.byteCount
        let lowest = max(audioStart, size - 2 * 65_307)
        var tail: [UInt8] = []
        var start = size
        while start > lowest {
            let pieceStart = max(lowest, start - 32_768)
            guard let piece = try? source.read(at: pieceStart, count: Int(start - pieceStart)), piece.count == Int(start - pieceStart) else { return nil }
            tail = piece + tail
            start = pieceStart
            // The positions the new piece adds, from its end down.
            var index = min(piece.count - 1, tail.count - OggPage.headerLength)
            while index >= 0 {
                if tail[index] == 0x4F, tail[index + 1] == 0x67, tail[index + 2] == 0x67, tail[index + 3] == 0x53 {
                    var reader = ByteReader(tail, range: index..<tail.count)
                    if let page = try? OggPage.read(&reader), page.serialNumber == serialNumber, page.granulePosition >= 0 {
                        self.preSkip = preSkip
                        endGranulePosition = page.granulePosition
                        return
                    }
                }
                index -= 1
            }
        }
        return nil
    }
}
