internal import AudioBitstreams
public import SystemPackage

/// The gapless signals of the files KeyFrameKit writes besides MP4, checked against the stream
/// they describe, without decoding: an MP3's LAME tag against its frames, an Ogg Opus stream's
/// granule positions against its packets. (A FLAC file's MD5 needs a decode: KeyFrameKit's
/// standard registry checks it with libFLAC.)
public enum NativeFileValidation {
    /// An MP3: the ID3v2 tag reads; every byte after it is a frame (an ID3v1 tag at the end
    /// excepted); the Info frame's LAME tag holds the frame count, byte count and music CRC
    /// of the frames after it, its own CRC matches, and its delay and padding leave samples to
    /// present. Without an Info frame, a warning: no decoder can trim the encoder delay.
    public static func mp3(_ path: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let file = path.string
        var input = try MP3FrameInput(path: path)
        var findings: [ValidationFinding] = []
        var frames = 0
        var musicCRC: UInt16 = 0
        while let frame = try input.next() {
            musicCRC = CyclicRedundancyCheck.crc16(frame.data, preset: musicCRC)
            frames += 1
        }
        for lost in input.takeDamage() {
            findings.append(ValidationFinding(.error, file: file, location: "byte \(lost.offset ?? input.offset)", rule: "MPEG audio frames",
                                              expected: "a whole frame (or an ID3v1 tag)", found: lost.message))
        }
        let offset = input.offset
        let firstFrame = input.firstFrameOffset
        let infoLength = Int64(input.infoLength)
        guard let info = input.info else {
            findings.append(ValidationFinding(.warning, file: file, location: "frame 0", rule: "Info frame (LAME tag)",
                                              expected: "the encoder delay and padding, so decoders trim them", found: "none"))
            return findings
        }
        let location = "frame 0 (Info)"
        if info.frameCount != frames {
            findings.append(ValidationFinding(.error, file: file, location: location, rule: "Xing frame count against the frames",
                                              expected: "\(frames)", found: "\(info.frameCount)"))
        }
        // The frames from the Info frame on (as FFmpeg writes it; some encoders count without the
        // Info frame, or with the ID3v2 tag before it).
        let streamBytes = offset - firstFrame
        if let count = info.byteCount, count != 0, ![streamBytes, streamBytes - infoLength, offset].contains(Int64(count)) {
            findings.append(ValidationFinding(.error, file: file, location: location, rule: "Xing byte count against the stream",
                                              expected: "\(streamBytes)", found: "\(count)"))
        }
        if !info.tagCRCMatches {
            findings.append(ValidationFinding(.error, file: file, location: location, rule: "LAME tag CRC-16",
                                              expected: "the CRC of the frame's first 190 bytes", found: "another"))
        }
        if info.musicCRC != 0, info.musicCRC != musicCRC {
            findings.append(ValidationFinding(.error, file: file, location: location, rule: "LAME music CRC against the frames",
                                              expected: "0x\(String(musicCRC, radix: 16))", found: "0x\(String(info.musicCRC, radix: 16))"))
        }
        let decoded = Int64(frames) * Int64(info.samplesPerFrame)
        if Int64(info.priming) + Int64(info.remainder) >= decoded {
            findings.append(ValidationFinding(.error, file: file, location: location, rule: "LAME delay and padding against the frames",
                                              expected: "fewer than the \(decoded) samples decoded",
                                              found: "\(info.priming) + \(info.remainder) trimmed"))
        }
        return findings
    }

    /// An Ogg Opus file: every page reads with its CRC, each stream's pages are numbered without
    /// a gap, the first is the beginning and the last the end of the stream; `OpusHead` and
    /// `OpusTags` read; each page's granule position is the samples decoded through its last
    /// packet (at 48 kHz, the pre-skip included), except the last page's, which may trim the
    /// end but not below the page before nor below the pre-skip.
    public static func oggOpus(_ path: FilePath) throws(PipelineError) -> [ValidationFinding] {
        let file = path.string
        let headers = try OggOpusHeaders(path: path)
        let source = headers.source
        let size = source.byteCount
        var findings: [ValidationFinding] = []
        var offset: Int64 = 0
        var expectedSequence: UInt32 = 0
        var decoded: Int64 = 0
        var preSkip: Int64 = 0
        var packetIndex = 0
        var partial: [UInt8] = []
        var previousGranule: Int64 = 0
        var last: (page: OggPage, offset: Int64, decoded: Int64)?
        while offset < size {
            let start = offset
            let page: OggPage
            do { page = try OggOpusHeaders.page(source, at: &offset, path: path) } catch {
                findings.append(ValidationFinding(.error, file: file, location: "byte \(start)", rule: "Ogg page", expected: "a page whose CRC checks",
                                                  found: "\(error)"))
                break
            }
            guard page.serialNumber == headers.serialNumber else { continue }
            let location = "page \(page.sequenceNumber) at byte \(start)"
            if page.sequenceNumber != expectedSequence {
                findings.append(ValidationFinding(.error, file: file, location: location, rule: "page sequence", expected: "\(expectedSequence)",
                                                  found: "\(page.sequenceNumber)"))
            }
            expectedSequence = page.sequenceNumber &+ 1
            if (expectedSequence == 1) != page.flags.contains(.beginningOfStream) {
                findings.append(ValidationFinding(.error, file: file, location: location, rule: "beginning of stream",
                                                  expected: "on the first page alone", found: page.flags.contains(.beginningOfStream) ? "set" : "not set"))
            }
            var completed = false
            for part in page.parts {
                // A packet's first bytes are all its duration needs (the headers' are kept whole,
                // up to 64 MiB).
                if partial.count < (packetIndex < 2 ? OggOpusHeaders.maximumTagBytes : 2) { partial += part.bytes.prefix(packetIndex < 2 ? part.bytes.count : 2) }
                guard part.endsPacket else { continue }
                defer { partial = []; packetIndex += 1 }
                completed = true
                if packetIndex == 0 { preSkip = Int64((try? OpusHeader(bytes: partial))?.preSkip ?? 0); continue }
                if packetIndex == 1 { continue }
                guard let samples = OpusPacket.sampleCount(partial) else {
                    findings.append(ValidationFinding(.error, file: file, location: location, rule: "Opus packet", expected: "a table of contents (RFC 6716 3.1)",
                                                      found: "\(partial.count) bytes that have none"))
                    continue
                }
                decoded += Int64(samples)
            }
            if packetIndex > 2, completed {
                if let previous = last, previous.page.granulePosition != previous.decoded {
                    findings.append(ValidationFinding(.error, file: file, location: "page \(previous.page.sequenceNumber) at byte \(previous.offset)",
                                                      rule: "granule position against the packets", expected: "\(previous.decoded)",
                                                      found: "\(previous.page.granulePosition)"))
                }
                if let previous = last { previousGranule = previous.page.granulePosition }
                last = (page, start, decoded)
            } else if !completed, page.granulePosition != -1 {
                findings.append(ValidationFinding(.error, file: file, location: location, rule: "granule position of a page no packet ends on",
                                                  expected: "-1", found: "\(page.granulePosition)"))
            }
        }
        guard let last else {
            findings.append(ValidationFinding(.error, file: file, location: "stream", rule: "audio pages", expected: "at least one", found: "none"))
            return findings
        }
        let location = "page \(last.page.sequenceNumber) at byte \(last.offset)"
        if !last.page.flags.contains(.endOfStream) {
            findings.append(ValidationFinding(.warning, file: file, location: location, rule: "end of stream", expected: "set on the last page",
                                              found: "not set"))
        }
        let end = last.page.granulePosition
        if end > last.decoded || end < max(previousGranule, preSkip) {
            findings.append(ValidationFinding(.error, file: file, location: location, rule: "end trimming (RFC 7845 4.5)",
                                              expected: "a granule position from \(max(previousGranule, preSkip)) to \(last.decoded)", found: "\(end)"))
        }
        return findings
    }
}
