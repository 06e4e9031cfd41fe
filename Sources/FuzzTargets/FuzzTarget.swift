#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AACBitstream
import AudioBitstreams
import MediaCore
import MediaStreaming
import MediaValidation
import XMLReader
import MP4
import PCMAudio

/// The fuzz targets: one per parser. Each takes arbitrary bytes, must never trap or hang, and
/// checks a property that only a correct parser keeps (a `precondition` failure is a finding).
///
/// The `keyframe-fuzz` executable drives them with libFuzzer; the tests replay every input in
/// `Tests/AACBitstreamTests/Regressions/` through them.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// ``ADTSReader``: frames and events do not depend on the chunk size; every header writes back
    /// to its own bytes.
    case adts
    /// ``AudioSpecificConfig``: whatever parses writes back to exactly the input bytes.
    case asc
    /// ``ESDescriptor`` (and the magic-cookie path): what parses writes back to bytes that parse
    /// to the same value and write back to themselves.
    case esds
    /// ``WAVReader`` and ``RawPCMReader``: parsing never traps; reading one frame at a time and
    /// 4096 at a time gives the same bytes and warnings; what is read is whole frames and no
    /// more than the input; what is read writes (``WAVWriter``, as RIFF or RF64) and reads back
    /// to the same format and bytes.
    case wav

    /// ``MP4File`` and ``MP4Demuxer``: any bytes give a structure or a typed error; a demuxer pulls
    /// every sample of every track it chose, each inside the file, and a track that ends without
    /// an error delivered exactly the samples its tables declare; ``BoxTree`` walks any bytes.
    case mp4

    /// H.264 parameter sets and slice headers (``H264SequenceParameterSet``,
    /// ``H264PictureParameterSet``, ``H264SliceHeader``) of an Annex B stream, in stream order:
    /// fields within the ranges of ITU-T H.264 7.4.2.1.1, 7.4.2.2 and 7.4.3; the same value or
    /// error from a canonically re-escaped copy of each NAL unit; an `avcC` built from what
    /// parsed parses back to itself.
    case h264
    /// H.265 parameter sets and slice segment headers (``HEVCVideoParameterSet``,
    /// ``HEVCSequenceParameterSet``, ``HEVCPictureParameterSet``, ``HEVCSliceSegmentHeader``):
    /// fields within the ranges of ITU-T H.265 7.4.3.1, 7.4.3.2.1, 7.4.3.3.1 and 7.4.7.1; the
    /// same value or error from a re-escaped copy; an `hvcC` built from them parses back.
    case hevc
    /// ``AnnexBNALUnitReader`` and ``AnnexBReader`` (H.264 and H.265) end to end: NAL units
    /// partition the input; units, samples, times and errors do not depend on the read size; the
    /// samples carry the stream's units in order; times are whole frames with `pts ≥ dts`; the
    /// configuration record is the first sample's and parses back.
    case annexb
    /// ``ICSInfo``: the window of a raw data block's first channel never traps, reads only the
    /// block's head (the same bytes with anything after them give the same answer), and is the
    /// same read twice.
    case ics
    /// ``RawDataBlock`` (an AAC-LC `raw_data_block()`, the first byte choosing the sampling
    /// index): any bytes give a block or a typed error, never a trap; what parses writes back to
    /// the same bytes, each element as long as it was read; fill elements inserted after its
    /// channel elements write and read back.
    case rdb
    /// ``SBRStreamParser`` (SBR `sbr_extension_data()` frame after frame, the first byte choosing
    /// rate and SCE/CPE): any bytes give data or a typed error; what parses writes back
    /// (``SBRExtensionData/write(to:tables:history:)``) to bits that read to the same data and
    /// histories; ``SBRExtensionData/chooseDeltaCoding(tables:history:independent:)`` always
    /// leaves writable data that reads back.
    case sbr
    /// ``ParametricStereoParser`` (PS `ps_data()` in SBR extended data, frame after frame): any
    /// bytes give a frame, `nil` or a typed error; what parses writes back
    /// (``ParametricStereoFrame/write(to:history:)``) to exactly the bits it was read from and the
    /// same history, and its extended data reads back to it;
    /// ``ParametricStereoFrame/chooseDeltaCoding(history:independent:)`` keeps the values, writes,
    /// reads back and is never longer unless forced independent.
    case ps
    /// ``ITunesItemList`` (an `ilst` payload): any bytes give items or a typed error; what parses
    /// writes back (``ITunesItemList/box``) to bytes that parse to the same items, and stays so
    /// after an item is set and another removed.
    case ilst
    /// ``ChapterListBox`` (a Nero `chpl` payload) and ``ChapterTrack/title(fromSample:)``: any
    /// bytes give chapters or a typed error; what parses writes back to a box that parses to the
    /// same chapters; a text sample's title never traps.
    case chapters
    /// `XMLElementTree` and ``/MediaValidation/DASHManifest`` (an MPD): any bytes give a tree or a
    /// `PipelineError` over a `SyntaxError` that points inside the input; a tree is within its
    /// limits and writes back (`XMLElementTree.xmlText`) to text that reads to the same tree;
    /// line ends written as LF (XML 1.0, 2.11) and a byte order mark change nothing; a manifest
    /// lists segments within its maximum.
    case mpd
    /// ``TransportStreamReader`` and ``TransportStreamMuxer`` (MPEG-2 TS, ISO/IEC 13818-1): any
    /// bytes give PES packets or a typed error, and every transport packet that parses writes
    /// back to itself; AAC frames made from the bytes and muxed read back to the same frames and
    /// PTS, counters continuous across repeated program tables.
    case ts
    /// RTMP (``AMF0Reader``, ``RTMPChunkReader``, ``RTMPPublishSession``): any bytes give AMF0
    /// values, messages or a typed error, never a trap; what is encoded (AMF0, commands, chunks
    /// through ``RTMPChunkWriter``) decodes to itself; messages do not depend on how the bytes
    /// arrive; a session fed any bytes sends only chunks that read.
    case rtmp
    /// An HLS media playlist and the files it names, made in a folder held in memory
    /// (`PlaylistFuzzTarget`): directories, loops of links, FIFOs and missing names give a
    /// typed error, never a trap or a wait; what is read as segments demuxes within their bytes.
    case playlist
    /// A destination's URL (``URLReference``, ``PercentEncoding``): any text parses or gives a
    /// typed problem, never a trap; the parts stay apart (no `/`, `?`, `#` or `@` in the
    /// authority, a port in 1…65535); written back in order, they read as the same parts.
    case url
    /// The decoder configurations of Opus, FLAC and ALAC, each in its own form and its ISO BMFF
    /// box (``OpusHeader``, ``FLACStreamInfo``, ``FLACMetadataBlock``, ``ALACSpecificConfig``):
    /// any bytes parse or give a typed error; what parses writes back to bytes that parse to the
    /// same value, in both forms.
    case codecconfig
    /// The head of an MP3 file (``ID3v2Tag``, ``MPEGAudioFrameHeader``, ``MP3InfoTag``): any
    /// bytes give a tag or a typed error; a tag written as 2.4 reads back to the same frames and
    /// writes back to itself; frame headers write back to their bytes; an Info frame written for
    /// the same stream reads back to the same counts, delay, padding and CRCs.
    case mp3
    /// Ogg pages and the packets they carry (``OggPage``, ``OggStreamWriter``, ``OpusHeader``,
    /// `OpusTags`): any bytes give pages or a typed error; a page writes back to its bytes; the
    /// packets partition the pages' bodies, and paged again read back the same.
    case ogg
    /// A native FLAC file's metadata blocks and frames (``FLACMetadataBlock``,
    /// ``FLACStreamInfo``, ``FLACFrameHeader``, ``FLACFrame``): blocks write back to their
    /// bytes; frame headers write back to the same fields; a frame renumbered keeps its body,
    /// reads its new number and has a footer that matches.
    case flac

    /// Runs the target on one input.
    public func run(_ data: [UInt8]) {
        switch self {
        case .playlist: PlaylistFuzzTarget.run(data)
        case .url: Self.url(data)
        case .codecconfig: Self.codecConfiguration(data)
        case .mp3: Self.mp3(data)
        case .ogg: Self.ogg(data)
        case .flac: Self.flac(data)
        case .adts: Self.adts(data)
        case .asc: Self.asc(data)
        case .esds: Self.esds(data)
        case .mp4: Self.mp4(data)
        case .wav: Self.wav(data)
        case .h264: Self.h264ParameterSets(data)
        case .hevc: Self.hevcParameterSets(data)
        case .annexb: Self.annexBStream(data)
        case .ics: Self.icsInfo(data)
        case .rdb: Self.rawDataBlock(data)
        case .sbr: Self.sbr(data)
        case .ps: Self.parametricStereo(data)
        case .ilst: Self.itemList(data)
        case .chapters: Self.chapterList(data)
        case .mpd: Self.mpd(data)
        case .ts: Self.transportStream(data)
        case .rtmp: Self.rtmp(data)
        }
    }

    /// Whether two byte arrays are equal, compared by `memcmp`: the harness's own comparisons of
    /// long outputs stay out of the coverage feedback, which is for the code under test.
    static func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }

    private static func adts(_ data: [UInt8]) {
        let small = Int(data.first ?? 0) % 61 + 1
        let a = readAll(data, chunkSize: small)
        let b = readAll(data, chunkSize: 64 * 1024)
        precondition(a.frames == b.frames, "ADTS frames depend on the chunk size")
        precondition(a.events == b.events, "ADTS events depend on the chunk size")
        precondition(a.statistics == b.statistics, "ADTS statistics depend on the chunk size")
        var consumed: Int64 = 0
        for frame in a.frames {
            precondition(frame.bytes.count == frame.header.frameLength, "frame length differs from its header")
            let header = try? frame.header.serialized()
            precondition(header.map { $0[...] == frame.bytes[0..<frame.header.headerLength] } ?? false,
                         "ADTS header does not write back to its bytes")
            consumed += Int64(frame.bytes.count)
        }
        precondition(consumed + a.statistics.skippedBytes + a.statistics.id3Bytes <= Int64(data.count) + 20,
                     "ADTS reader accounts for more bytes than it was given")
        adtsRunsMatchSinglePackets(data, runBytes: Int(data.last ?? 0) * 7 + 1, chunkSize: small)
        adtsRunsMatchSinglePackets(data, runBytes: 256 * 1024, chunkSize: 64 * 1024)
        packedAudio(data)
    }

    /// The bytes as a packed audio segment (RFC 8216 3.4), and again behind a timestamp tag:
    /// a segment or an error, never a trap; the frames and tags it counts fit the input.
    private static func packedAudio(_ data: [UInt8]) {
        let tag = ID3v2Tag(frames: [.other(id: "PRIV", flags: 0, body: Array(PackedAudioSegment.timestampOwner.utf8) + [0] + Array(data.prefix(8)))]).bytes()
        for bytes in [data, tag + data] {
            guard let segment = try? PackedAudioSegment(bytes: bytes) else { continue }
            precondition(segment.frameCount * 7 + segment.timedMetadata.count * 10 <= bytes.count, "more frames and tags than the bytes hold")
            precondition(segment.timestamp.map { $0 < 1 << 33 } ?? true, "a timestamp beyond 33 bits")
            precondition(segment.timedMetadata.allSatisfy { $0.afterFrames <= segment.frameCount }, "a tag after more frames than there are")
        }
    }

    /// Runs (frames in step taken in one pass) deliver the packets, damage and statistics that
    /// one packet at a time does, and end the same way.
    private static func adtsRunsMatchSinglePackets(_ data: [UInt8], runBytes: Int, chunkSize: Int) {
        var single = ADTSPacketReader(source: ArrayByteSource(data), chunkSize: chunkSize)
        var runs = ADTSPacketReader(source: ArrayByteSource(data), chunkSize: chunkSize)
        var expected: [[UInt8]] = []
        var delivered: [[UInt8]] = []
        var expectedTimes: [Int64] = []
        var deliveredTimes: [Int64] = []
        var singleFailed = false
        var runsFailed = false
        do {
            while let packet = try single.next() {
                expected.append(packet.data)
                expectedTimes.append(packet.decodeTime.value)
            }
        } catch { singleFailed = true }
        do {
            while let run = try runs.nextRun(maxBytes: runBytes) {
                delivered += run.samples.map(\.data)
                deliveredTimes += run.samples.map(\.decodeTime.value)
            }
        } catch { runsFailed = true }
        precondition(singleFailed == runsFailed, "ADTS runs and single packets end differently")
        precondition(delivered == expected, "ADTS runs deliver other packets than single pulls")
        precondition(deliveredTimes == expectedTimes, "ADTS runs time packets otherwise than single pulls")
        precondition(single.statistics == runs.statistics, "ADTS runs count differently from single pulls")
        precondition(single.takeDamage() == runs.takeDamage(), "ADTS runs report other damage than single pulls")
    }

    private static func readAll(_ data: [UInt8], chunkSize: Int)
        -> (frames: [ADTSFrame], events: [ADTSStreamEvent], statistics: ADTSReader<ArrayByteSource>.Statistics) {
        var reader = ADTSReader(source: ArrayByteSource(data), chunkSize: chunkSize)
        var frames: [ADTSFrame] = []
        var events: [ADTSStreamEvent] = []
        while let frame = try? reader.nextFrame() {
            frames.append(frame)
            events += reader.takeEvents()
        }
        events += reader.takeEvents()
        return (frames, events, reader.statistics)
    }

    private static func itemList(_ data: [UInt8]) {
        guard var list = try? ITunesItemList(payload: data) else { return }
        func reparsed(_ list: ITunesItemList) -> ITunesItemList? {
            try? ITunesItemList(payload: Array(list.box.dropFirst(8)))
        }
        precondition(reparsed(list) == list, "an item list does not write back to itself")
        if let first = list.items.first { list.remove(first.key) }
        list.set("©nam", type: 1, values: [Array("fuzz".utf8)])
        list.set("----:com.apple.iTunes:FUZZ", type: 1, values: [[0x61]])
        precondition(reparsed(list) == list, "an edited item list does not write back to itself")
    }

    private static func chapterList(_ data: [UInt8]) {
        _ = ChapterTrack.title(fromSample: data)
        var reader = ByteReader(data)
        guard let list = try? ChapterListBox(from: &reader, path: BoxPath(components: ["chpl"])) else { return }
        let box = list.box
        var again = ByteReader(Array(box.dropFirst(8)))
        let reparsed = try? ChapterListBox(from: &again, path: BoxPath(components: ["chpl"]))
        // Titles that are not UTF-8 were read with replacement characters, which can be longer:
        // compare what the writer kept.
        precondition(reparsed?.chapters.map(\.startTime) == list.chapters.map(\.startTime), "chpl times do not write back")
        precondition(reparsed?.box == box, "a chpl does not write back to itself")
    }

    private static func icsInfo(_ data: [UInt8]) {
        let info = ICSInfo(firstChannelOf: data)
        precondition(info == ICSInfo(firstChannelOf: data), "ICSInfo reads the same block two ways")
        if let info {
            precondition(ICSInfo(firstChannelOf: data + [0xFF, 0x00, 0xA5]) == info, "ICSInfo depends on bytes after the header it read")
        }
    }

    private static func asc(_ data: [UInt8]) {
        guard let config = try? AudioSpecificConfig(bytes: data) else { return }
        _ = config.channelCount
        _ = config.outputSampleRate
        _ = config.framesPerPacket
        let written = try? config.serialized()
        precondition(written == data, "AudioSpecificConfig does not write back to its bytes")
    }

    private static func esds(_ data: [UInt8]) {
        _ = try? AudioSpecificConfig(magicCookie: data)
        _ = try? ESDescriptor(esdsBoxPayload: data)
        guard let descriptor = try? ESDescriptor(bytes: data) else { return }
        _ = try? descriptor.audioSpecificConfig()
        guard let written = try? descriptor.serialized() else {
            preconditionFailure("a parsed ES_Descriptor cannot be written")
        }
        // The value, not the report of how it was read: an overstated length's damage names
        // offsets and sizes of the bytes as given, and writing puts the DecoderSpecificInfo first,
        // so a descriptor read before it may be reported only after the write (fuzz findings,
        // kept in Regressions/esds).
        let again = try? ESDescriptor(bytes: written)
        precondition(again.map(Self.withoutDamage) == Self.withoutDamage(descriptor), "ES_Descriptor changes through write and parse")
        precondition((try? again?.serialized()) == written, "ES_Descriptor writing is not stable")
    }

    private static func withoutDamage(_ descriptor: ESDescriptor) -> ESDescriptor {
        var copy = descriptor
        copy.decoderConfig.damage = []
        copy.damage = []
        return copy
    }

    private static func wav(_ data: [UInt8]) {
        // Raw PCM in a layout picked by the first byte: whole frames, all of them.
        let formats = PCMSampleFormat.allCases
        let selector = Int(data.first ?? 0)
        let raw = PCMFormat(sampleRate: 8000, channelCount: selector / formats.count % 8 + 1,
                            sampleFormat: formats[selector % formats.count])
        if var reader = try? RawPCMReader(source: ArrayByteSource(data), format: raw) {
            var total = 0
            while let chunk = try? reader.read(maxFrames: 7) {
                precondition(chunk.count % raw.bytesPerFrame == 0, "raw PCM read is not whole frames")
                total += chunk.count
            }
            precondition(total == data.count / raw.bytesPerFrame * raw.bytesPerFrame, "raw PCM reader lost or invented bytes")
            precondition(reader.warnings.isEmpty == (data.count % raw.bytesPerFrame == 0), "raw PCM partial frame not reported")
        }

        guard let one = readWAV(data, maxFrames: 1) else { return }
        guard let many = readWAV(data, maxFrames: 4096) else {
            preconditionFailure("WAV header parses once but not twice")
        }
        precondition(one.format == many.format, "WAV format depends on the read size")
        precondition(one.bytes == many.bytes, "WAV frames depend on the read size")
        precondition(one.warnings == many.warnings, "WAV warnings depend on the read size")
        precondition(one.bytes.count % one.format.bytesPerFrame == 0, "WAV read is not whole frames")
        precondition(one.bytes.count <= data.count, "WAV reader delivered more bytes than it was given")
        if let frameCount = one.frameCount {
            precondition(Int64(one.bytes.count / one.format.bytesPerFrame) <= frameCount, "WAV reader delivered more than frameCount")
        }

        // What was read writes and reads back to itself, as RIFF or (odd inputs) forced RF64.
        guard var writer = try? WAVWriter(sink: ArrayByteSink(), format: one.format,
                                          rf64Threshold: data.count % 2 == 1 ? 0 : Int64(UInt32.max) - 1) else {
            preconditionFailure("a format WAVReader accepts cannot be written")
        }
        do {
            try writer.write(one.bytes)
            try writer.finish()
        } catch {
            preconditionFailure("WAVWriter failed: \(error)")
        }
        guard let again = readWAV(writer.sink.bytes, maxFrames: 4096) else {
            preconditionFailure("WAVReader cannot read what WAVWriter wrote")
        }
        precondition(again.format == one.format && again.bytes == one.bytes, "WAV changes through write and read")
        precondition(again.warnings.isEmpty, "WAVReader warns about what WAVWriter wrote")
        precondition(again.frameCount == Int64(one.bytes.count / one.format.bytesPerFrame) || (one.bytes.isEmpty && again.frameCount == nil),
                     "WAVWriter's frame count reads back wrong")
    }

    private static func readWAV(_ data: [UInt8], maxFrames: Int)
        -> (format: PCMFormat, frameCount: Int64?, bytes: [UInt8], warnings: [DamageEvent])? {
        guard var reader = try? WAVReader(source: ArrayByteSource(data)) else { return nil }
        var bytes: [UInt8] = []
        while let chunk = try? reader.read(maxFrames: maxFrames) {
            precondition(chunk.count <= maxFrames * reader.format.bytesPerFrame, "WAV read returned more than asked")
            bytes += chunk
        }
        return (reader.format, reader.frameCount, bytes, reader.warnings)
    }
}

extension FuzzTarget {
    fileprivate static func mp4(_ data: [UInt8]) {
        // Top-level event messages (ISO/IEC 23009-1 5.10.3.3), as a segment's: each one's
        // message no longer than the input.
        if let messages = try? EventMessage.messages(inSegment: data) {
            precondition(messages.allSatisfy { $0.data.count + $0.scheme.utf8.count <= data.count }, "an emsg longer than the input")
        }
        let source = ArrayRandomAccessSource(data)
        _ = try? BoxTree.nodes(of: source)
        // The tag editor's header scan: boxes back to back from 0, inside the file; with a
        // movie, its item list parses or errs, and an edit plan either fits or shifts.
        if let boxes = try? MovieEditor.topLevelBoxes(of: source) {
            var end: Int64 = 0
            for box in boxes {
                precondition(box.offset == end && box.size >= Int64(box.headerSize), "top-level boxes do not follow each other")
                end += box.size
            }
            precondition(end <= Int64(data.count), "top-level boxes run past the file")
            if boxes.contains(where: { $0.type == "moov" }), let items = try? MovieEditor.itemList(boxes: boxes, source: source),
               let edit = try? MovieEditor.edit(boxes: boxes, source: source, items: items) {
                precondition(edit.fitsInPlace == (edit.shift == 0), "an edit that fits does not move the media")
            }
            // A tag edit planned from the udta alone, applied: the items read back, and a file
            // that parsed still parses with the same tracks.
            var tagged = ITunesItemList()
            tagged.set("©nam", type: 1, values: [Array("fuzz".utf8)])
            if boxes.contains(where: { $0.type == "moov" }), let fast = try? MovieEditor.editTags(boxes: boxes, source: source, items: tagged) {
                var edited = data
                for (offset, bytes) in fast.patches {
                    precondition(offset >= 0 && Int(offset) + bytes.count <= edited.count, "a tag patch outside the file")
                    edited.replaceSubrange(Int(offset)..<(Int(offset) + bytes.count), with: bytes)
                }
                let editedSource = ArrayRandomAccessSource(edited)
                if let editedBoxes = try? MovieEditor.topLevelBoxes(of: editedSource) {
                    // The same boxes but padding: a moov that shrinks leaves a free box behind it.
                    let kept = { (list: [BoxHeader]) in list.filter { $0.type != "free" && $0.type != "skip" }.map(\.type) }
                    precondition(kept(editedBoxes) == kept(boxes), "an in-place tag edit changes the top-level boxes")
                    precondition((try? MovieEditor.itemList(boxes: editedBoxes, source: editedSource)) == tagged, "in-place tags do not read back")
                }
                if let before = try? MP4File(source: source) {
                    let after = try? MP4File(source: editedSource)
                    precondition(after?.tracks.count == before.tracks.count, "an in-place tag edit changes the tracks")
                }
            }
            // A chapter edit, applied: the file still parses and reads back chapters it was given.
            let titles = ["One", "Two"]
            let chapters = titles.enumerated().map { MovieChapter(startTime: MediaTime(value: Int64($0.offset), timescale: 1000), title: $0.element) }
            if boxes.contains(where: { $0.type == "moov" }), !boxes.contains(where: { $0.type == "moof" }),
               let edit = try? MovieEditor.edit(boxes: boxes, source: source, items: nil, chapters: chapters) {
                precondition(edit.fitsInPlace == (edit.shift == 0), "a chapter edit that fits does not move the media")
                let start = Int(edit.movieRange.lowerBound), end = Int(edit.paddingRange.upperBound)
                let edited = edit.fitsInPlace
                    ? Array(data[..<start]) + edit.inPlaceBytes + Array(data[end...])
                    : Array(data[..<start]) + edit.rewrittenBytes + Array(data[end...])
                let editedSource = ArrayRandomAccessSource(edited)
                if let file = try? MP4File(source: editedSource), let read = try? file.chapters(source: editedSource) {
                    precondition(read.map(\.title).elementsEqual(titles.prefix(read.count)), "a chapter edit reads back other titles")
                }
            }
            // A rewrite that moves the fragments: shifting a moof's or an mfra's absolute offsets
            // never traps, keeps the box's size, and shifting back gives the original bytes.
            for box in boxes where (box.type == "moof" || box.type == "mfra") && box.size <= 1 << 20 {
                let bytes = Array(data[Int(box.offset)..<Int(box.end)])
                if let moved = try? MovieEditor.shiftingFragmentOffsets(in: bytes, type: box.type, by: 4096) {
                    precondition(moved.count == bytes.count, "shifting a fragment's offsets changes its size")
                    if let back = try? MovieEditor.shiftingFragmentOffsets(in: moved, type: box.type, by: -4096) {
                        precondition(back == bytes, "shifting a fragment's offsets there and back changes it")
                    }
                }
            }
        }
        guard let file = try? MP4File(source: source) else { return }
        _ = try? file.chapters(source: source)
        // `keyframe validate`'s gapless checks: findings, never a trap.
        for finding in GaplessValidation.findings(in: file, name: "fuzz") {
            precondition(finding.file == "fuzz" && !finding.rule.isEmpty, "a finding without its file or rule")
        }
        // The fragment rules, over the file as one part and split in two at its first moof (an
        // init segment and a media segment): findings and timings, never a trap.
        let split = file.topLevelBoxes.first { $0.type == "moof" }.map(\.offset) ?? Int64(data.count)
        let partings: [[SegmentSequenceValidation.Part]] = [
            [.init(name: "fuzz", byteCount: Int64(data.count))],
            [.init(name: "init", byteCount: split), .init(name: "segment", byteCount: Int64(data.count) - split)],
        ]
        for parts in partings {
            if let sequence = try? SegmentSequenceValidation(source: source, parts: parts) {
                precondition(sequence.findings.allSatisfy { !$0.rule.isEmpty && parts.map(\.name).contains($0.file) }, "a finding that names no part")
                precondition(sequence.segments.count == max(1, parts.count - 1), "a timing per media segment")
                precondition(sequence.segments.allSatisfy { $0.duration >= 0 && $0.sampleCount >= 0 }, "a negative timing")
            }
        }
        for track in file.tracks where track.damage == nil {
            _ = try? track.formatDescription()
            _ = track.mediaEdit
            let types: MediaType = track.mediaType == .video ? .video : .audio
            let configuration = types == .video
                ? DemuxerConfiguration(mediaTypes: .video, videoTrackID: track.id)
                : DemuxerConfiguration(mediaTypes: .audio, audioTrackID: track.id)
            guard track.mediaType != nil else { continue }
            let demuxer = MP4Demuxer(source: source, configuration: configuration)
            guard (try? demuxer.start()) != nil else { continue }
            var delivered = 0
            var failed = false
            while true {
                do {
                    guard let sample = try demuxer.nextSample(trackID: track.id) else { break }
                    precondition(sample.data.count <= data.count, "a sample larger than the file")
                    delivered += 1
                    precondition(delivered <= track.sampleCount, "more samples than the track declares")
                } catch {
                    failed = true
                    break
                }
            }
            precondition(failed || delivered == track.sampleCount, "a track ended early without an error")
            checkRuns(source, configuration: configuration, trackID: track.id, runBytes: Int(data.last ?? 0) * 16 + 1)
        }
    }

    /// Runs (``MP4Demuxer/nextSampleRun(trackID:maxBytes:)``), mixed with single pulls, deliver
    /// the samples single pulls do, in order, each run back to back in the file and within its
    /// byte limit unless one sample alone is longer; an error ends both the same way.
    private static func checkRuns(_ source: ArrayRandomAccessSource, configuration: DemuxerConfiguration, trackID: UInt32, runBytes: Int) {
        let single = MP4Demuxer(source: source, configuration: configuration)
        let runs = MP4Demuxer(source: source, configuration: configuration)
        guard (try? single.start()) != nil, (try? runs.start()) != nil else { preconditionFailure("a demuxer starts once but not twice") }
        var expected: [MediaSample] = []
        var singleFailed = false
        while true {
            do {
                guard let sample = try single.nextSample(trackID: trackID) else { break }
                expected.append(sample)
            } catch {
                singleFailed = true
                break
            }
        }
        var delivered: [MediaSample] = []
        var runsFailed = false
        var pull = 0
        while true {
            pull += 1
            do {
                if pull % 3 == 0 {
                    guard let sample = try runs.nextSample(trackID: trackID) else { break }
                    delivered.append(sample)
                } else {
                    guard let run = try runs.nextSampleRun(trackID: trackID, maxBytes: runBytes) else { break }
                    precondition(run.count > 0, "an empty run")
                    precondition(run.count == 1 || run.data.count <= runBytes, "a run longer than asked for")
                    delivered += run.samples
                }
            } catch {
                runsFailed = true
                break
            }
        }
        precondition(singleFailed == runsFailed, "runs and single pulls end differently")
        precondition(delivered == expected, "runs deliver other samples than single pulls")
    }
}

extension FuzzTarget {
    /// The limits the `mpd` target reads with: small, so that libFuzzer reaches them.
    static let xmlLimits = XMLElementTree.Limits(depth: 32, elements: 2048, attributes: 4096)

    fileprivate static func mpd(_ data: [UInt8]) {
        func read(_ bytes: [UInt8]) -> Result<XMLElementTree, PipelineError> {
            Result { () throws(PipelineError) in try XMLElementTree(bytes: bytes, limits: xmlLimits) }
        }
        let first = read(data)
        // Every line end (CR LF, CR) written as LF, and a UTF-8 byte order mark in front, read the same.
        var unixLines: [UInt8] = []
        unixLines.reserveCapacity(data.count)
        var afterCR = false
        for byte in data {
            if byte == 0x0A, afterCR {
                afterCR = false
                continue
            }
            afterCR = byte == 0x0D
            unixLines.append(afterCR ? 0x0A : byte)
        }
        let withBOM = data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xEF, 0xBB, 0xBF]) ? nil : read([0xEF, 0xBB, 0xBF] + data)
        switch first {
        case .failure(let error):
            guard let syntax = error.underlying(as: XMLElementTree.SyntaxError.self) else { preconditionFailure("an XML refusal without a SyntaxError: \(error)") }
            precondition(error.code == .container && syntax.line >= 1 && syntax.column >= 1 && syntax.offset >= 0 && syntax.offset <= data.count,
                         "an XML refusal points outside the input")
            if case .success = read(unixLines) { preconditionFailure("XML refused with CR line ends reads with LF ones") }
            if case .success? = withBOM { preconditionFailure("refused XML reads with a byte order mark in front") }
        case .success(let tree):
            var elements = 0
            var attributes = 0
            var stack = [(tree.root, 1)]
            while let (element, depth) = stack.popLast() {
                elements += 1
                attributes += element.attributes.count
                precondition(depth <= xmlLimits.depth, "an XML tree deeper than its limit")
                precondition(!element.name.isEmpty && element.name.hasSuffix(element.localName), "an XML element's local name is not its name's end")
                stack += element.children.map { ($0, depth + 1) }
            }
            precondition(elements <= xmlLimits.elements && attributes <= xmlLimits.attributes, "an XML tree beyond its limits")
            precondition(elements * 4 + attributes * 5 <= data.count, "an XML tree larger than its text allows")
            let text = tree.xmlText
            guard case .success(let again) = read(Array(text.utf8)) else { preconditionFailure("an XML tree's text does not read back") }
            precondition(again.xmlText == text, "an XML tree's text reads back to another tree")
            guard case .success(let unix) = read(unixLines), unix.xmlText == text else { preconditionFailure("XML with CR line ends reads otherwise with LF ones") }
            if let withBOM {
                guard case .success(let marked) = withBOM, marked.xmlText == text else { preconditionFailure("XML reads otherwise with a byte order mark") }
            }
        }
        // The manifest on top: never traps, never lists more than its maximum.
        guard let manifest = try? DASHManifest(text: String(decoding: data, as: UTF8.self)) else { return }
        for period in manifest.periods {
            _ = manifest.duration(of: period)
            for representation in period.adaptationSets.flatMap(\.representations) {
                guard let segments = try? manifest.segments(of: representation, in: period) else { continue }
                precondition(segments.count <= DASHManifest.maximumSegmentCount, "an MPD lists more segments than its maximum")
            }
        }
    }
}
