public import MediaCore

/// Pulls ADTS frames out of any byte stream, reading it in chunks: memory stays at about one
/// chunk plus one frame however long the stream is.
///
/// - An ID3v2 tag (ID3v2.3/2.4 § 3.1) at the start, or between frames, is skipped and reported.
/// - Data that is not ADTS is skipped until two consecutive headers agree (or one header ends
///   exactly at the end of the stream); how many bytes and where is reported.
/// - A last frame cut short is reported as ``ADTSStreamEvent/truncatedFrame(offset:declaredLength:availableLength:)``,
///   never delivered padded.
/// - Protected frames have their CRC checked where the standard's region can be found
///   (``ADTSCRC``).
///
/// Events accumulate until ``takeEvents()`` collects them; ``statistics`` keeps running totals.
public struct ADTSReader<Source: ByteSource> {
    /// Running totals over the stream read so far.
    public struct Statistics: Sendable, Hashable {
        /// Frames delivered.
        public var frameCount = 0
        /// Bytes of delivered frames, headers included.
        public var frameBytes: Int64 = 0
        /// PCM frames the delivered frames decode to (1024 per raw data block).
        public var sampleCount: Int64 = 0
        /// Bytes skipped as not ADTS.
        public var skippedBytes: Int64 = 0
        /// Bytes of ID3v2 tags skipped.
        public var id3Bytes: Int64 = 0
        /// Damage events seen (skipped runs, truncations, CRC mismatches).
        public var damageCount = 0
    }

    private var source: Source
    private let chunkSize: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var bufferOffset: Int64 = 0
    private var sourceEnded = false
    private var synchronised = false
    private var lastFixedHeader: UInt32?
    private var pendingSkip: (offset: Int64, count: Int64)?
    private var events: [ADTSStreamEvent] = []

    /// Running totals.
    public private(set) var statistics = Statistics()

    /// A reader of `source` that reads `chunkSize` bytes at a time (at least 1).
    public init(source: Source, chunkSize: Int = 64 * 1024) {
        self.source = source
        self.chunkSize = max(1, chunkSize)
        buffer.reserveCapacity(self.chunkSize + 2 * ADTSHeader.maximumFrameLength)
    }

    /// The events met since the last call, oldest first.
    public mutating func takeEvents() -> [ADTSStreamEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// Absolute offset of the next unread byte.
    public var offset: Int64 { bufferOffset + Int64(start) }

    /// The next frame, or `nil` at the end of the stream.
    ///
    /// - Throws: ``AACBitstreamError/stream(_:)`` only: damage in the data is an event, not an error.
    public mutating func nextFrame() throws(AACBitstreamError) -> ADTSFrame? {
        while true {
            guard try ensure(7) else {
                let left = available
                if left > 0 { skip(left) }
                flushSkip()
                return nil
            }
            // Look as far ahead as the longest header (16 bytes) or an ID3v2 header (10) needs,
            // so that what is found never depends on how the stream was chunked.
            _ = try ensure(16)
            if isID3Tag(at: start), try skipID3Tag() { continue }
            if let frame = try frameAtCursor() {
                flushSkip()
                synchronised = true
                statistics.frameCount += 1
                statistics.frameBytes += Int64(frame.bytes.count)
                statistics.sampleCount += Int64(frame.header.sampleCount)
                if case .mismatch(let stored, let computed) = frame.crcStatus {
                    record(.crcMismatch(offset: frame.offset, stored: stored, computed: computed))
                }
                return frame
            }
            if sourceEnded && available == 0 { return nil }
            // Not a frame here: skip one byte (and any run without a sync byte) and look again.
            synchronised = false
            skip(1)
            // Stop at every byte that could start a frame (0xFF) or an ID3v2 tag ("I").
            if let next = buffer[start...].firstIndex(where: { $0 == 0xFF || $0 == 0x49 }) {
                skip(next - start)
            } else {
                skip(available)
            }
        }
    }

    /// Takes the frames that follow in step — each in the stream's fixed header as the last
    /// frame read, unprotected, one raw data block, whole in the buffer — appending their raw data
    /// blocks to `payloads` and their sizes to `sizes`, until `maxBytes` of payload would be
    /// passed. Stops at anything else, for ``nextFrame()`` to take: what is delivered, counted
    /// and reported is what ``nextFrame()`` would give, frame for frame, without a copy of each.
    mutating func takeRawDataBlocksInStep(into payloads: inout [UInt8], sizes: inout [Int], maxBytes: Int) {
        guard synchronised, pendingSkip == nil, let fixed = lastFixedHeader else { return }
        var taken = 0
        while true {
            // A read error is left for nextFrame() to meet, after the frames taken are delivered.
            guard (try? ensure(16)) == true else { return }
            // One pass over the frames that lie whole in the buffer. In step with `fixed` (which a
            // full parse accepted), a header's only free fields are aac_frame_length, the buffer
            // fullness and number_of_raw_data_blocks_in_frame (ISO/IEC 14496-3, 1.A.3.2.2).
            var cursor = start
            var frames = 0
            var frameBytes = 0
            var bytesWanted = 0   // > 0: the frame at the cursor needs this many bytes in the buffer
            buffer.withUnsafeBufferPointer { bytes in
                while cursor + 16 <= bytes.count {
                    guard ADTSHeader.hasSyncword(bytes[cursor], bytes[cursor + 1]), bytes[cursor + 1] & 0x01 == 1,
                          UInt32(bytes[cursor + 1]) << 16 | UInt32(bytes[cursor + 2] & 0xFD) << 8 | UInt32(bytes[cursor + 3] & 0xC0) == fixed,
                          bytes[cursor + 6] & 0x03 == 0 else { return }
                    let length = Int(bytes[cursor + 3] & 0x03) << 11 | Int(bytes[cursor + 4]) << 3 | Int(bytes[cursor + 5] >> 5)
                    let payload = length - 7
                    guard payload >= 0, taken + payload <= maxBytes else { return }
                    guard cursor + length <= bytes.count else {
                        bytesWanted = length
                        return
                    }
                    payloads.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[(cursor + 7)..<(cursor + length)]))
                    sizes.append(payload)
                    taken += payload
                    cursor += length
                    frames += 1
                    frameBytes += length
                }
                bytesWanted = 16
            }
            start = cursor
            statistics.frameCount += frames
            statistics.frameBytes += Int64(frameBytes)
            statistics.sampleCount += Int64(frames) * 1024
            guard bytesWanted > 0, (try? ensure(bytesWanted)) == true else { return }
        }
    }

    // MARK: - Frames

    /// The frame at the cursor if there is a credible one; consumes it.
    private mutating func frameAtCursor() throws(AACBitstreamError) -> ADTSFrame? {
        guard ADTSHeader.hasSyncword(buffer[start], buffer[start + 1]) else { return nil }
        var headerReader = ByteReader(buffer, range: start..<(start + min(available, 16)), baseOffset: bufferOffset)
        guard let header = try? ADTSHeader(from: &headerReader) else { return nil }
        let length = header.frameLength
        let fixed = fixedHeaderKey(at: start)
        // Believe a header without looking further only in step with frames already read and
        // with their fixed header; anything else must be confirmed by the header after it.
        let needsConfirmation = !synchronised || fixed != lastFixedHeader
        let haveFrame = try ensure(length)
        let frameStart = offset
        if !haveFrame {
            // The stream ends inside this frame: a cut recording if we were in step, else junk.
            guard !needsConfirmation else { return nil }
            record(.truncatedFrame(offset: frameStart, declaredLength: length, availableLength: available))
            flushSkip()
            discardRest()
            return nil
        }
        if needsConfirmation {
            _ = try ensure(length + 10)
            if available - length >= 4 {
                let next = start + length
                let agrees = ADTSHeader.hasSyncword(buffer[next], buffer[next + 1]) && fixedHeaderKey(at: next) == fixed
                if !agrees && !isID3Tag(at: next) { return nil }
            }
        }
        lastFixedHeader = fixed
        let frameBytes = Array(buffer[start..<(start + length)])
        start += length
        let status = ADTSCRC.status(of: header, frame: frameBytes[...])
        return ADTSFrame(header: header, offset: frameStart, bytes: frameBytes, crcStatus: status)
    }

    /// The fixed-header bits that stay the same from frame to frame (ID, layer, protection,
    /// profile, rate, channels; not the private, original and home bits).
    private func fixedHeaderKey(at index: Int) -> UInt32 {
        UInt32(buffer[index + 1]) << 16 | UInt32(buffer[index + 2] & 0xFD) << 8 | UInt32(buffer[index + 3] & 0xC0)
    }

    // MARK: - ID3v2

    private func isID3Tag(at index: Int) -> Bool {
        guard buffer.count - index >= 10 else { return false }
        return buffer[index] == 0x49 && buffer[index + 1] == 0x44 && buffer[index + 2] == 0x33
            && buffer[index + 3] != 0xFF && buffer[index + 4] != 0xFF
            && buffer[(index + 6)..<(index + 10)].allSatisfy { $0 < 0x80 }
    }

    /// Skips the ID3v2 tag at the cursor; returns false if it is not one after all.
    private mutating func skipID3Tag() throws(AACBitstreamError) -> Bool {
        let size = buffer[(start + 6)..<(start + 10)].reduce(Int64(0)) { $0 << 7 | Int64($1) }
        let hasFooter = buffer[start + 5] & 0x10 != 0
        let length = 10 + size + (hasFooter ? 10 : 0)
        flushSkip()
        let tagOffset = offset
        var left = length
        while left > 0 {
            guard try ensure(1) else { break }
            let step = Int(min(left, Int64(available)))
            start += step
            left -= Int64(step)
        }
        // Count what was there: a stream may end inside a tag that declares more.
        let skipped = length - left
        record(.id3Tag(offset: tagOffset, length: skipped))
        statistics.id3Bytes += skipped
        if left > 0 {
            record(.truncatedTag(offset: tagOffset, declaredLength: length, availableLength: skipped))
        }
        return true
    }

    // MARK: - Buffer

    private var available: Int { buffer.count - start }

    /// Makes at least `count` bytes available after the cursor if the stream has them.
    private mutating func ensure(_ count: Int) throws(AACBitstreamError) -> Bool {
        while available < count && !sourceEnded {
            if start > 0 {
                buffer.removeSubrange(0..<start)
                bufferOffset += Int64(start)
                start = 0
            }
            do {
                let read = try source.read(into: &buffer, maxCount: max(chunkSize, count - available))
                if read == 0 { sourceEnded = true }
            } catch {
                throw .stream(error)
            }
        }
        return available >= count
    }

    private mutating func skip(_ count: Int) {
        guard count > 0 else { return }
        if let pending = pendingSkip {
            pendingSkip = (pending.offset, pending.count + Int64(count))
        } else {
            pendingSkip = (offset, Int64(count))
        }
        start += count
    }

    private mutating func discardRest() {
        start = buffer.count
    }

    private mutating func flushSkip() {
        guard let pending = pendingSkip else { return }
        pendingSkip = nil
        statistics.skippedBytes += pending.count
        record(.skippedBytes(offset: pending.offset, count: pending.count))
    }

    private mutating func record(_ event: ADTSStreamEvent) {
        if event.isDamage { statistics.damageCount += 1 }
        events.append(event)
    }
}
