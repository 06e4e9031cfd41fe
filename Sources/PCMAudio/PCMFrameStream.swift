import MediaCore

/// Reads whole interleaved PCM frames from a byte stream, up to a known byte count or to the end
/// of the stream: the part ``WAVReader`` and ``RawPCMReader`` share.
///
/// Memory is bounded by the request: a read asks the source for at most the bytes of the frames
/// requested (and of the frames the data has left), in pieces of at most 1 MiB, never for a
/// length taken from a header.
struct PCMFrameStream<Source: ByteSource> {
    private var source: Source
    /// Bytes of one frame (at least 1).
    let bytesPerFrame: Int
    /// Absolute offset of the first data byte.
    let dataOffset: Int64
    /// Absolute offset of the next byte to read.
    private(set) var offset: Int64
    /// Data bytes not read yet, or `nil` to read until the end of the stream.
    private var remaining: Int64?
    /// What the header declared, while a short stream has not been reported yet.
    private var unverifiedDeclaration: (declared: Int64, chunkOffset: Int64)?
    private var ended = false
    /// Frames delivered so far.
    private(set) var framesRead: Int64 = 0
    /// What was tolerated, oldest first.
    private(set) var issues: [WAVError] = []

    private static var pieceSize: Int { 1 << 20 }

    /// A stream of `bytesPerFrame`-byte frames from `source`, whose next byte is at `offset`.
    ///
    /// - Parameters:
    ///   - byteCount: the data's length if known; the frames end there.
    ///   - declaration: the length a header declared and where the header is, when the stream
    ///     may turn out shorter (reported once, at the end).
    init(source: Source, bytesPerFrame: Int, offset: Int64, byteCount: Int64?,
         declaration: (declared: Int64, chunkOffset: Int64)?) {
        self.source = source
        self.bytesPerFrame = max(1, bytesPerFrame)
        self.dataOffset = offset
        self.offset = offset
        self.remaining = byteCount
        self.unverifiedDeclaration = declaration
    }

    /// Records a tolerated problem found before the first read.
    mutating func note(_ issue: WAVError) { issues.append(issue) }

    /// Up to `maxFrames` whole frames (at least one), fewer only at the end of the data; `nil`
    /// once no whole frame is left.
    mutating func read(maxFrames: Int) throws(WAVError) -> [UInt8]? {
        guard !ended else { return nil }
        let frames = max(1, maxFrames)
        let (product, overflow) = frames.multipliedReportingOverflow(by: bytesPerFrame)
        var wanted = overflow ? Int.max / bytesPerFrame * bytesPerFrame : product
        if let remaining {
            let whole = remaining - remaining % Int64(bytesPerFrame)
            if whole < Int64(wanted) { wanted = Int(whole) }
            if wanted == 0 {
                ended = true
                if remaining > 0 {
                    issues.append(.partialFrame(byteCount: Int(remaining), bytesPerFrame: bytesPerFrame, offset: offset))
                }
                return nil
            }
        }
        var output: [UInt8] = []
        output.reserveCapacity(min(wanted, 64 * 1024))
        var sourceEnded = false
        while output.count < wanted {
            let count: Int
            do { count = try source.read(into: &output, maxCount: min(wanted - output.count, Self.pieceSize)) } catch {
                throw .stream(error)
            }
            if count == 0 {
                sourceEnded = true
                break
            }
        }
        offset += Int64(output.count)
        if let remaining { self.remaining = remaining - Int64(output.count) }
        if sourceEnded {
            ended = true
            if let declaration = unverifiedDeclaration {
                unverifiedDeclaration = nil
                issues.append(.dataBeyondFile(declared: declaration.declared, available: offset - dataOffset,
                                              offset: declaration.chunkOffset))
            }
            let partial = output.count % bytesPerFrame
            if partial > 0 {
                output.removeLast(partial)
                issues.append(.partialFrame(byteCount: partial, bytesPerFrame: bytesPerFrame, offset: offset - Int64(partial)))
            }
        }
        guard !output.isEmpty else { return nil }
        framesRead += Int64(output.count / bytesPerFrame)
        return output
    }
}

extension PCMFrameStream: Sendable where Source: Sendable {}
