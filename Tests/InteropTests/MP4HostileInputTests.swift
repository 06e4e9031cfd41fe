import Foundation
import KeyFrameKit
import SystemPackage
import Testing
import TestSupport

/// Hostile input for the MP4 reader: the corpus's three malformed files, and thousands of
/// mutations of small valid files run through the library in-process — MP4Probe, BoxTree, and an
/// MP4Demuxer that pulls every audio and video sample (and converts the video to Annex B) —
/// which must return or throw, never trap, and finish each file in well under a second.
///
/// The mutation loops run in an exit test (one child process per seed file, not one per
/// mutation), so that a trap fails that test and names the mutation that caused it instead of
/// killing the whole run; the child logs each mutation before trying it.
@Suite(.blocking) struct MP4HostileInputTests {
    // MARK: - The corpus's malformed files

    @Test func malformedFreeBoxIsATypedErrorNamingTheBoxAndItsOffset() throws {
        let file = try CorpusTests.corpusFile("mp4_sample_malformed_free_box.mp4")
        do {
            _ = try MP4File(source: try FileByteSource(path: FilePath(file)))
            Issue.record("MP4File opened a file whose free box has size 3")
        } catch let error as MP4Error {
            guard case .invalidBoxSize(let path, let offset, let size, _) = error else {
                Issue.record("expected invalidBoxSize, got \(error)")
                return
            }
            #expect(path.components.last == "free", "\(error)")
            #expect(offset == 32 && size == 3, "\(error)")
        }
        #expect(throws: MP4Error.self) { try MP4Probe.probe(try FileByteSource(path: FilePath(file))) }
        for arguments in [["probe", file], ["probe", "--json", file], ["probe", "--boxes", file]] {
            let result = try ExternalTool.run(try ExternalTool.keyframe, arguments)
            #expect(result.status != 0, "keyframe \(arguments.joined(separator: " ")) exited 0")
            #expect(result.standardError.contains("free") && result.standardError.contains("32"),
                    "the error names the box and its offset: \(result.standardError)")
        }
    }

    @Test func mdatTooLongPlaysAndReportsTheDamage() throws {
        let file = try CorpusTests.corpusFile("mp4_sample_mdat_too_long.mp4")
        let report = try MP4Check.expectSampleCountsMatchFFprobe(file)
        let damage = report["damage"] as? [String] ?? []
        #expect(report["damageCount"] as? Int == 1, "\(damage)")
        #expect(damage.first?.contains("mdat") == true && damage.first?.contains("2184") == true, "damage names mdat and its offset: \(damage)")
        try MP4Check.expectADTSMatchesFFmpeg(file)
        try MP4Check.expectVideoMatchesFFmpeg(file)
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("out.wav").path
        let decode = try ExternalTool.run(try ExternalTool.keyframe, ["decode", file, "-o", wav])
        #expect(decode.status == 3, "done with damage: \(decode.standardError)")
        #expect(decode.standardError.contains("mdat"), "decode reports the damage: \(decode.standardError)")
    }

    @Test func missingStsdKeepsTheGoodVideoTrackAndReportsTheBrokenAudioTrack() throws {
        let file = try CorpusTests.corpusFile("mp4_sample_missing_stsd.mp4")
        let report = try MP4Check.expectSampleCountsMatchFFprobe(file)
        let tracks = report["tracks"] as? [[String: Any]] ?? []
        let video = try #require(tracks.first { $0["type"] as? String == "video" })
        #expect(video["codec"] as? String == "h264" && video["width"] as? Int == 1080 && video["height"] as? Int == 720, "\(video)")
        #expect(video["damage"] == nil)
        let audio = try #require(tracks.first { $0["type"] as? String == "audio" })
        #expect((audio["damage"] as? String)?.contains("stsd") == true, "the broken track says why: \(audio)")
        #expect((report["damage"] as? [String] ?? []).contains { $0.contains("stsd") }, "\(report["damage"] ?? "")")
        try MP4Check.expectVideoMatchesFFmpeg(file)

        // Asked for its audio, demux fails with a message and leaves nothing behind.
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let aac = directory.appendingPathComponent("out.aac").path
        let result = try ExternalTool.run(try ExternalTool.keyframe, ["demux", file, "-o", aac])
        #expect(result.status != 0 && !result.standardError.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: aac))

        // In-process: the demuxer delivers the video and has no audio track.
        let demuxer = MP4Demuxer(source: try FileByteSource(path: FilePath(file)))
        try demuxer.start()
        #expect(demuxer.audioTrack == nil)
        var samples = 0
        while try demuxer.nextVideoSample() != nil { samples += 1 }
        #expect(samples == 30)
    }

    // MARK: - Mutations

    @Test(.hangGuard(minutes: 15), arguments: MutationSeed.allCases)
    func mutationsNeitherTrapNorHang(seed: MutationSeed) async throws {
        let path = try seed.path()
        let label = seed.rawValue
        let count = MutationSeed.mutationsPerSeed
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The child sends its stderr (its log, and the runtime's message and backtrace if it
        // traps) to this file, which outlives it.
        let logPath = directory.appendingPathComponent("mutations.log").path
        await #expect(processExitsWith: .success, "mutations of \(label) trapped, hung or ran slow") {
            [path = path as String, label = label as String, count = count as Int, logPath = logPath as String] in
            MutationRun.runAndExit(path: path, label: label, count: count, logPath: logPath)
        }
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let lines = log.split(separator: "\n", omittingEmptySubsequences: false)
        if let summary = lines.last(where: { $0.hasPrefix("SUMMARY") }) {
            print("\(label): \(summary)")   // in the test output, for the record
            for failure in lines.filter({ $0.hasPrefix("FAIL") }) { Issue.record("\(label): \(failure)") }
        } else {
            let lastMutation = lines.last { $0.hasPrefix("MUTATION") } ?? "before the first mutation"
            let after = lines.drop { !$0.hasPrefix("MUTATION") }.drop { $0.hasPrefix("MUTATION") }.prefix(40)
            Issue.record("\(label): the child died during \(lastMutation)\n\(after.joined(separator: "\n"))")
        }
    }

    // MARK: - Pinned hostile files (each found by reading the code or by the mutations above)

    // The child times itself (a second is slow) and arms alarm(120) against a hang; the limit here
    // only bounds a child that never starts, so it allows for a loaded machine's scheduling.
    @Test(.hangGuard(minutes: 10), arguments: HostileCase.allCases)
    func pinnedHostileFileNeitherTrapsNorHangs(hostile: HostileCase) async throws {
        let path = try hostile.seedPath()
        let name = hostile.rawValue
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let logPath = directory.appendingPathComponent("case.log").path
        await #expect(processExitsWith: .success, "\(hostile.testDescription)") {
            [path = path as String, name = name as String, logPath = logPath as String] in
            HostileCase(rawValue: name)!.runAndExit(seedPath: path, logPath: logPath)
        }
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        if !log.contains("OK ") {
            Issue.record("\(name): \(log.split(separator: "\n").prefix(8).joined(separator: "\n"))")
        }
    }
}

/// Small hostile files made by patching a few fields of a valid one in place. Each either trapped
/// the reader (a Swift runtime trap kills the process) or kept it busy for a minute.
enum HostileCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// An audio track with an edit list whose tables are broken (stsc size too big): no samples,
    /// a positive edit duration.
    case editButNoSamples
    /// Two tracks with the same track_ID.
    case duplicateTrackID
    /// A tfdt (version 1) near Int64.max.
    case decodeTimeNearInt64Max
    /// A tfhd base_data_offset near Int64.max.
    case baseDataOffsetNearInt64Max
    /// mvhd timescale 1, mdhd timescale 2^32-1, elst segment_duration 2^32-1: the edit is
    /// 1.8e19 media units long.
    case editLongerThanInt64
    /// stsz: 2^32-1 samples of 1 byte; stts: 2^32-1 samples of 2^32-1 units.
    case durationOverflowsInt64
    /// stsz: 2^32-1 samples of 2^32-1 bytes.
    case sampleBytesOverflowInt64
    /// A trun of 16777215 samples without per-sample fields, tfhd default_sample_size 0: a 15 KB
    /// file that announces 16 million empty samples.
    case sixteenMillionEmptySamples

    var testDescription: String {
        switch self {
        case .editButNoSamples: "an audio track with an edit list and no readable samples"
        case .duplicateTrackID: "two tracks with one track_ID"
        case .decodeTimeNearInt64Max: "a tfdt near Int64.max"
        case .baseDataOffsetNearInt64Max: "a tfhd base_data_offset near Int64.max"
        case .editLongerThanInt64: "an edit of 1.8e19 media units"
        case .durationOverflowsInt64: "stts durations summing past Int64.max"
        case .sampleBytesOverflowInt64: "stsz sizes summing past Int64.max"
        case .sixteenMillionEmptySamples: "a trun of 16 million empty samples"
        }
    }

    func seedPath() throws -> String {
        switch self {
        case .duplicateTrackID: try CorpusTests.corpusFile("mp4_sample.mp4")
        case .decodeTimeNearInt64Max, .sixteenMillionEmptySamples: try MP4Fixture.fragmentedAudio.path()
        case .baseDataOffsetNearInt64Max: try MP4Fixture.fragmented.path()
        default: try MP4Fixture.m4a.path()
        }
    }

    struct Unexpected: Error, CustomStringConvertible { var description: String }

    /// The seed file with this case's fields patched.
    func patch(_ original: [UInt8]) throws -> [UInt8] {
        var bytes = original
        let boxes = try BoxTree.nodes(of: ArrayRandomAccessSource(original)).nodes.map(\.header)
        func box(_ type: FourCharacterCode, _ n: Int = 0) throws -> BoxHeader {
            let found = boxes.filter { $0.type == type }
            guard n < found.count else { throw Unexpected(description: "no \(type) #\(n) in the seed") }
            return found[n]
        }
        func write(_ value: UInt64, at offset: Int64, width: Int) {
            for k in 0..<width { bytes[Int(offset) + k] = UInt8(truncatingIfNeeded: value >> (8 * (width - 1 - k))) }
        }
        func version(_ header: BoxHeader, _ expected: UInt8) throws {
            guard bytes[Int(header.payloadOffset)] == expected else { throw Unexpected(description: "\(header.type) is not version \(expected)") }
        }
        switch self {
        case .editButNoSamples:
            write(0x0100_0000, at: try box("stsc").offset, width: 4)
        case .duplicateTrackID:
            let first = try box("tkhd", 0), second = try box("tkhd", 1)
            try version(first, 0)
            try version(second, 0)
            write(1, at: first.payloadOffset + 12, width: 4)
            write(1, at: second.payloadOffset + 12, width: 4)
        case .decodeTimeNearInt64Max:
            let tfdt = try box("tfdt")
            try version(tfdt, 1)
            write(0x7FFF_FFFF_FFFF_FF00, at: tfdt.payloadOffset + 4, width: 8)
        case .baseDataOffsetNearInt64Max:
            let tfhd = try box("tfhd")
            guard bytes[Int(tfhd.payloadOffset) + 3] & 1 == 1 else { throw Unexpected(description: "tfhd has no base_data_offset") }
            write(0x7FFF_FFFF_FFFF_FFF0, at: tfhd.payloadOffset + 8, width: 8)
        case .editLongerThanInt64:
            let mvhd = try box("mvhd"), mdhd = try box("mdhd"), elst = try box("elst")
            for header in [mvhd, mdhd, elst] { try version(header, 0) }
            write(1, at: mvhd.payloadOffset + 12, width: 4)
            write(0xFFFF_FFFF, at: mdhd.payloadOffset + 12, width: 4)
            write(0xFFFF_FFFF, at: elst.payloadOffset + 8, width: 4)
        case .durationOverflowsInt64:
            let stsz = try box("stsz"), stts = try box("stts")
            write(1, at: stsz.payloadOffset + 4, width: 4)
            write(0xFFFF_FFFF, at: stsz.payloadOffset + 8, width: 4)
            write(0xFFFF_FFFF, at: stts.payloadOffset + 8, width: 4)
            write(0xFFFF_FFFF, at: stts.payloadOffset + 12, width: 4)
        case .sampleBytesOverflowInt64:
            let stsz = try box("stsz")
            write(0xFFFF_FFFF, at: stsz.payloadOffset + 4, width: 4)
            write(0xFFFF_FFFF, at: stsz.payloadOffset + 8, width: 4)
        case .sixteenMillionEmptySamples:
            let tfhd = try box("tfhd"), trun = try box("trun")
            guard bytes[Int(tfhd.payloadOffset) + 3] == 0x38 else { throw Unexpected(description: "tfhd flags are not 0x020038") }
            write(0, at: tfhd.payloadOffset + 12, width: 4)          // default_sample_size
            write(0x0000_0001, at: trun.payloadOffset, width: 4)     // flags: data_offset only
            write(0x00FF_FFFF, at: trun.payloadOffset + 4, width: 4) // sample_count
        }
        return bytes
    }

    /// The exit test's body: patch, then probe, walk and demux it all in under a second.
    func runAndExit(seedPath: String, logPath: String) -> Never {
        alarm(120)   // a hang ends the child with SIGALRM: the exit test sees a signal, not success
        let descriptor = open(logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if descriptor >= 0 { dup2(descriptor, 2) }
        func log(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        guard let data = FileManager.default.contents(atPath: seedPath) else {
            log("cannot read \(seedPath)")
            exit(3)
        }
        let bytes: [UInt8]
        do { bytes = try patch([UInt8](data)) } catch {
            log("the seed file is not what this case expects: \(error)")
            exit(4)
        }
        var note: String?
        let elapsed = ContinuousClock().measure { note = MutationRun.exercise(bytes) }
        if let note {
            log("HANG \(rawValue): \(note) (\(elapsed))")
            exit(1)
        }
        if elapsed >= .seconds(1) {
            log("SLOW \(rawValue): \(elapsed)")
            exit(1)
        }
        log("OK \(rawValue) in \(elapsed)")
        exit(0)
    }
}

/// The valid files the mutations start from.
enum MutationSeed: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case ffmpegM4A, ffmpegFragmented, corpusSample, ffmpegHEVC

    /// 4 × 750 = 3000 mutated files.
    static let mutationsPerSeed = 750

    var testDescription: String { rawValue }

    func path() throws -> String {
        switch self {
        case .ffmpegM4A: try MP4Fixture.m4a.path()
        case .ffmpegFragmented: try MP4Fixture.fragmented.path()
        case .corpusSample: try CorpusTests.corpusFile("mp4_sample.mp4")
        case .ffmpegHEVC: try MP4Fixture.hevc.path()
        }
    }
}


/// Makes the mutations of one file: truncations at box boundaries and elsewhere, bit flips
/// (mostly in moov/moof), 4-byte overwrites of box sizes and of the first fields of box payloads
/// (counts, versions, timescales, offsets), and box types swapped for others.
struct MutationPlan {
    let original: [UInt8]
    let boxes: [BoxHeader]
    let headerRanges: [Range<Int>]
    var truncations: [Int]
    var random: SplitMix64

    static let types: [String] = ["moov", "trak", "mdia", "minf", "stbl", "edts", "udta", "meta", "ilst", "mvex", "moof", "traf",
                                  "mdat", "free", "uuid", "wave", "stsd", "mp4a", "avc1", "hvc1", "esds", "avcC", "hvcC", "elst",
                                  "stts", "ctts", "stsc", "stsz", "stz2", "stco", "co64", "stss", "trun", "tfhd", "tfdt", "trex",
                                  "mvhd", "tkhd", "mdhd", "hdlr", "ftyp", "sidx"]

    init(_ bytes: [UInt8], seed: UInt64) {
        original = bytes
        random = SplitMix64(state: seed)
        let tree = (try? BoxTree.nodes(of: ArrayRandomAccessSource(bytes)).nodes) ?? []
        boxes = tree.map(\.header)
        headerRanges = tree.filter { $0.depth == 0 && $0.header.type != "mdat" }
            .map { Int($0.header.offset)..<Int(min($0.header.end, Int64(bytes.count))) }
        var cuts = Set<Int>()
        for box in boxes {
            let offset = Int(box.offset), end = Int(box.end)
            for cut in [offset, offset + 1, offset + 4, offset + 7, offset + 8, offset + box.headerSize, offset + box.headerSize + 4,
                        offset + box.headerSize + 12, end - 1, end + 1] where cut > 0 && cut < bytes.count {
                cuts.insert(cut)
            }
        }
        for step in 1..<40 { cuts.insert(bytes.count * step / 40) }
        truncations = cuts.sorted()
        truncations.shuffle(using: &random)
    }

    mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &random) }

    mutating func mutation(_ index: Int) -> (description: String, bytes: [UInt8]) {
        var bytes = original
        switch index % 15 {
        case 0...2:
            let length = truncations.isEmpty ? int(0..<original.count) : truncations.removeLast()
            return ("truncated to \(length) bytes", Array(original.prefix(length)))
        case 3...7:
            var flips: [String] = []
            for _ in 0..<int(1..<5) {
                let position: Int
                if !headerRanges.isEmpty, int(0..<4) != 0, let range = headerRanges.randomElement(using: &random) {
                    position = int(range)
                } else {
                    position = int(0..<bytes.count)
                }
                let bit = int(0..<8)
                bytes[position] ^= UInt8(1 << bit)
                flips.append("\(position).\(bit)")
            }
            return ("bits flipped at \(flips.joined(separator: ", "))", bytes)
        case 8...12:
            var edits: [String] = []
            for _ in 0..<(int(0..<5) == 0 ? 2 : 1) {
                guard let box = boxes.randomElement(using: &random) else { break }
                let target: Int
                let what: String
                if int(0..<5) < 2 {
                    target = Int(box.offset)
                    what = "size of \(box.type)@\(box.offset)"
                } else {
                    let words = max(1, min(8, Int(box.payloadSize) / 4))
                    let word = int(0..<words)
                    target = Int(box.payloadOffset) + 4 * word
                    what = "payload word \(word) of \(box.type)@\(box.offset)"
                }
                guard target + 4 <= bytes.count else { continue }
                let old = bytes[target..<(target + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                let choices: [UInt32] = [0, 1, 2, 7, 8, 9, 0xFF, 0xFFFF, 0x00FF_FFFF, 0x0100_0000, 0x0100_0001, 0x7FFF_FFFF, 0x8000_0000,
                                         0xFFFF_FFFE, 0xFFFF_FFFF, old &+ 1, old &- 1, old &* 2, old / 2, old &+ 8, old &- 8,
                                         UInt32(truncatingIfNeeded: random.next()), UInt32(int(0..<max(1, bytes.count)))]
                let value = choices[int(0..<choices.count)]
                for k in 0..<4 { bytes[target + k] = UInt8(truncatingIfNeeded: value >> (24 - 8 * k)) }
                edits.append("\(what) (byte \(target)) 0x\(String(old, radix: 16)) -> 0x\(String(value, radix: 16))")
            }
            return ("overwrote \(edits.joined(separator: "; "))", bytes)
        default:
            guard let box = boxes.randomElement(using: &random), let type = Self.types.randomElement(using: &random) else {
                return ("unchanged", bytes)
            }
            let at = Int(box.offset) + 4
            guard at + 4 <= bytes.count else { return ("unchanged", bytes) }
            bytes.replaceSubrange(at..<(at + 4), with: Array(type.utf8))
            return ("type of \(box.type)@\(box.offset) -> \(type)", bytes)
        }
    }
}

/// One mutated file through everything that reads MP4 in-process.
enum MutationRun {
    /// Gives up on a file after this long (a hang); anything over a second fails anyway.
    static let hardLimit = Duration.seconds(5)

    /// Probes, walks the box tree, and demuxes every audio and video sample, converting the video
    /// to Annex B. Every error is expected; returns a note when the file ran into `hardLimit`.
    static func exercise(_ bytes: [UInt8], decodeIn directory: String? = nil) -> String? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: hardLimit)
        let source = ArrayRandomAccessSource(bytes)
        if let report = try? MP4Probe.probe(source) {
            _ = try? JSONEncoder().encode(report)
        }
        _ = try? BoxTree.nodes(of: source)
        let demuxer = MP4Demuxer(source: source)
        do { try demuxer.start() } catch { return nil }
        _ = demuxer.duration
        var pulled = 0
        while true {
            do { guard try demuxer.nextAudioSample() != nil else { break } } catch { break }
            pulled += 1
            if pulled % 1024 == 0, clock.now > deadline { return "still pulling audio after \(pulled) samples" }
        }
        var converter = try? demuxer.videoTrack?.annexBConverter()
        var index = 0
        while true {
            let sample: MediaSample?
            do { sample = try demuxer.nextVideoSample() } catch { break }
            guard let sample else { break }
            _ = try? converter?.convert(sample.data, isSync: sample.isSync, trackID: sample.trackID, sampleIndex: index)
            index += 1
            if index % 1024 == 0, clock.now > deadline { return "still pulling video after \(index) samples" }
        }
        // keyframe decode's path: the edit list's trim, then libavcodec on whatever the samples hold.
        if let directory {
            let input = directory + "/mutated.m4a", output = directory + "/decoded.pcm"
            if FileManager.default.createFile(atPath: input, contents: Data(bytes)) {
                _ = try? Transcode.decode(FilePath(input), to: FilePath(output))
                try? FileManager.default.removeItem(atPath: output)
            }
        }
        return nil
    }

    /// The exit test's body: every mutation of one seed file, each logged to stderr before it is
    /// tried; exits 0 when all returned or threw within the limit.
    static func runAndExit(path: String, label: String, count: Int, logPath: String) -> Never {
        let descriptor = open(logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if descriptor >= 0 { dup2(descriptor, 2) }
        func log(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else {
            log("cannot read \(path)")
            exit(3)
        }
        let seed = label.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        var plan = MutationPlan([UInt8](data), seed: seed)
        // Every fourth mutation of the audio-only seed also goes through Transcode.decodeMP4 (from a
        // file, next to the log).
        let decodeDirectory: String? = label == MutationSeed.ffmpegM4A.rawValue ? (logPath as NSString).deletingLastPathComponent : nil
        let clock = ContinuousClock()
        var slowest: (time: Duration, what: String) = (.zero, "")
        var total = Duration.zero
        var failures: [String] = []
        for index in 0..<count {
            let mutation = plan.mutation(index)
            log("MUTATION \(label) #\(index): \(mutation.description)")
            var note: String?
            let elapsed = clock.measure { note = exercise(mutation.bytes, decodeIn: index % 4 == 1 ? decodeDirectory : nil) }
            total += elapsed
            if elapsed > slowest.time { slowest = (elapsed, "#\(index) \(mutation.description)") }
            if let note { failures.append("#\(index) \(mutation.description): \(note)") }
            if elapsed >= .seconds(1) { failures.append("#\(index) \(mutation.description) took \(elapsed)") }
        }
        log("DONE")
        for failure in failures { log("FAIL \(failure)") }
        log("SUMMARY \(count) mutations of \(data.count) bytes in \(total); slowest \(slowest.time): \(slowest.what)")
        exit(failures.isEmpty ? 0 : 1)
    }
}
