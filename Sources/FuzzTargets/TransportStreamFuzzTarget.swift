import AACBitstream
import MediaCore
import MPEGTS

// The `ts` fuzz target: MPEG-2 transport streams (ISO/IEC 13818-1) through `TransportStreamReader`
// as they are, and the same bytes as AAC frames through `TransportStreamMuxer` and back.

extension FuzzTarget {
    /// Any bytes read as a transport stream give PES packets or a ``TransportStreamError``, never a
    /// trap: each packet within the input, its PTS 33 bits, its payload no longer than the input;
    /// every transport packet that parses writes back to bytes that parse to the same packet.
    /// Then the bytes cut into AAC frames (rate, grouping, start time, frame sizes and reconnects
    /// taken from them) and muxed read back without error or discontinuity to the same frames,
    /// grouped as asked, with the PTS the muxer says.
    static func transportStream(_ data: [UInt8]) {
        readTransportStream(data)
        muxAndReadBack(data)
        spliceInfo(data)
    }

    /// The bytes as a SCTE-35 section, and again with their CRC made right: a section or an
    /// error, never a trap; a section read writes back to bytes that read to the same section.
    private static func spliceInfo(_ data: [UInt8]) {
        var fixed = Array(data.dropLast(min(4, data.count)))
        if fixed.count >= 3 {
            let length = fixed.count + 4 - 3
            fixed[1] = fixed[1] & 0xF0 | UInt8(truncatingIfNeeded: length >> 8) & 0x0F
            fixed[2] = UInt8(truncatingIfNeeded: length)
        }
        let crc = MPEGCRC32.checksum(fixed)
        fixed += [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
        for bytes in [data, fixed] {
            guard let section = try? SpliceInfoSection(parsing: bytes) else { continue }
            let again = try? SpliceInfoSection(parsing: section.bytes)
            precondition(again == section, "a SCTE-35 section does not write back to itself")
        }
    }

    private static func readTransportStream(_ data: [UInt8]) {
        var reader = TransportStreamReader(bytes: data)
        do {
            while let packet = try reader.next() {
                precondition(packet.offset >= 0 && packet.offset % 188 == 0 && packet.offset < Int64(data.count), "a PES packet outside the input")
                precondition(packet.pes.payload.count <= data.count, "a PES payload longer than the input")
                precondition(packet.pes.presentationTime.map { (0..<(Int64(1) << 33)).contains($0) } ?? true, "a PTS beyond 33 bits")
            }
        } catch {
            precondition(PipelineError(error).code == .container, "a transport stream error that is not a container error")
            if let offset = error.offset {
                precondition(offset >= 0 && offset <= Int64(data.count), "a transport stream error outside the input: \(error)")
            }
        }
        precondition(reader.statistics.packetCount <= data.count / 188, "more transport packets than the input holds")
        var bytes = ByteReader(data)
        while let packet = try? TransportPacket(from: &bytes) {
            var again = ByteReader(packet.bytes)
            let reparsed = try? TransportPacket(from: &again)
            precondition(reparsed == packet || packet.adaptationFieldControl == 0, "a transport packet does not write back to itself")
        }
    }

    private static func muxAndReadBack(_ data: [UInt8]) {
        guard data.count >= 12 else { return }
        let rates = SamplingFrequencyIndex.frequencies
        let rate = rates[Int(data[0]) % rates.count]
        guard let config = try? AudioSpecificConfig(sampleRate: rate, channelCount: Int(data[1] % 6) + 1),
              var muxer = try? TransportStreamMuxer(audioSpecificConfig: config, framesPerPES: data[2] % 9 == 0 ? nil : Int(data[2] % 9))
        else { preconditionFailure("an AAC-LC configuration the muxer refuses") }
        // Any start: negative, near 2^33 in 90 kHz units, or near the end of Int64.
        let start = data[3..<11].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        // Frames of up to 255 × 8 bytes, 0xFF a frame as long as ADTS allows; at most 32 frames
        // and 80 kB (more than a PES packet holds), so that a run stays quick.
        let scale = Int(data[11] % 8) + 1
        var frames: [[UInt8]] = []
        var out = muxer.programTables()
        var index = 12
        var total = 0
        while index < min(data.count, 12 + 32) {
            let length = data[index] == 0xFF && total + 8184 <= 80_000 ? 8184 : min(Int(data[index]) * scale, max(0, 80_000 - total))
            total += length
            let frame = cyclicBytes(of: data, from: index, count: length)
            if data[index] & 0x0F == 0x0F { out += muxer.programTables() }   // a reconnect
            guard let bytes = try? muxer.write(frame: frame, sampleTime: start &+ Int64(frames.count) &* 1024) else {
                preconditionFailure("the muxer refuses a frame of \(length) bytes")
            }
            precondition(bytes.count % 188 == 0, "the muxer returned part of a packet")
            out += bytes
            frames.append(frame)
            index += 1
        }
        out += muxer.flush()
        var reader = TransportStreamReader(bytes: out)
        guard let packets = try? reader.readAll() else { preconditionFailure("the reader refuses what the muxer wrote") }
        precondition(reader.statistics.continuityErrorCount == 0 && reader.statistics.duplicatePacketCount == 0,
                     "the muxer's continuity counters do not continue")
        precondition(reader.programMapTable == muxer.programMapTable, "the PMT does not read back")
        var read: [[UInt8]] = []
        for packet in packets {
            precondition(packet.pes.presentationTime == muxer.presentationTime(sampleTime: start &+ Int64(read.count) &* 1024) & ((1 << 33) - 1),
                         "a PES packet's PTS does not read back")
            precondition(packet.programClockReference != nil && packet.randomAccessIndicator, "a PES packet without its PCR")
            var adts = ByteReader(packet.pes.payload)
            var count = 0
            while !adts.isAtEnd {
                var peek = adts
                guard let header = try? ADTSHeader(from: &peek), let frame = try? adts.readBytes(header.frameLength) else {
                    preconditionFailure("a PES payload that is not whole ADTS frames")
                }
                read.append(Array(frame[header.headerLength...]))
                count += 1
            }
            precondition(count >= 1 && count <= muxer.framesPerPES, "a PES packet with more frames than asked")
        }
        precondition(read.count == frames.count && zip(read, frames).allSatisfy { sameBytes($0, $1) }, "the muxed frames do not read back")
    }

    /// `count` bytes of `data` from `start` on, wrapping around to its beginning; copied a run at a
    /// time, so that the harness spends its time in the code under test.
    private static func cyclicBytes(of data: [UInt8], from start: Int, count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var position = start % data.count
        while bytes.count < count {
            let end = min(data.count, position + count - bytes.count)
            bytes.append(contentsOf: data[position..<end])
            position = end == data.count ? 0 : end
        }
        return bytes
    }
}
