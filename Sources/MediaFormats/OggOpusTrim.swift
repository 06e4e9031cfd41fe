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
        let source = headers.source
        let size = source.byteCount
        let start = max(headers.audioStart, size - 2 * 65_307)
        guard let tail = try? source.read(at: start, count: Int(size - start)) else { return nil }
        // The last page of the stream that reads: capture patterns tried from the end.
        var index = tail.count - OggPage.headerLength
        while index >= 0 {
            if tail[index] == 0x4F, tail[index + 1] == 0x67, tail[index + 2] == 0x67, tail[index + 3] == 0x53 {
                var reader = ByteReader(tail, range: index..<tail.count)
                if let page = try? OggPage.read(&reader), page.serialNumber == headers.serialNumber, page.granulePosition >= 0 {
                    preSkip = headers.head.preSkip
                    endGranulePosition = page.granulePosition
                    return
                }
            }
            index -= 1
        }
        return nil
    }
}
