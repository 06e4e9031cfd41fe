import Foundation
import Testing
import TestSupport

/// Issue 20, item 1: a matrix of inputs that nobody on this project wrote by hand — what FFmpeg
/// 5.1's encoders and muxers, the `flac` 1.4 tool and the `lame` tool write — made by
/// `scripts/input-matrix.py generate .build/input-matrix` (cached in the build directory, never
/// committed; made again when the script changes). It is a covering set, not the cross product:
/// every PCM codec FFmpeg writes in each of WAV/AIFF/CAF/W64/RF64 that takes it, every audio
/// codec with an encoder here (MP3, Vorbis, Opus, FLAC 16/24/32, ALAC, WavPack, TTA, AC-3,
/// E-AC-3, MP2, WMA v1/v2, Speex, the ADPCM family, GSM, G.723.1, Codec 2, Nellymoser,
/// RealAudio 1.0, DPCM, DFPWM, SBC, aptX, DTS, TrueHD, MLP, DVD and SMPTE 302M PCM, AAC), each
/// at every sample rate (8–384 kHz) and channel count (1–8) it takes at least once, every
/// container at least once, and tags, a cover and chapters in every container that holds them:
/// 348 files of 0.75 s.
///
/// For every file:
/// - `keyframe convert SRC -o OUT.m4a` succeeds;
/// - `keyframe decode OUT.m4a` gives exactly the referee's frame count — FFmpeg's decode of the
///   source, or `flac -d`'s where FFmpeg 5.1 decodes no frame (32-bit FLAC, FFmpeg's own
///   non-subset FLAC above 176.4 kHz), ended with the edit list where FFmpeg 5.1 ignores an
///   edit's end (AAC in MP4); resampled with soxr to 48/44.1 kHz when the source rate is above
///   96 kHz, as `convert` does — at the AAC rate the manifest names, with the source's channels;
/// - every channel lines up with the referee's at lag 0 (cross-correlation);
/// - the title and artist of a tagged source are carried, and its cover when it has one;
/// - `keyframe probe SRC` never crashes: exit 0, or 1 with a message.
@Suite(.blocking) struct InputMatrixTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let directory = root.appendingPathComponent(".build/input-matrix")

    struct Entry: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var codec: String
        var container: String
        var rate: Int
        var channels: Int
        var decodedRate: Int
        var decodedChannels: Int
        var refereeFrames: Int
        var refereeTool: String
        var refereeNote: String
        var outputRate: Int
        var expectedFrames: Int
        var referee: String
        var tagged: Bool
        var tags: [String]
        var coverRead: Bool
        var chaptersRead: Int
        var testDescription: String { name }
    }

    struct Manifest: Decodable {
        var generator: String
        var count: Int
        var entries: [Entry]
    }

    /// Runs the generator (a no-op when its cache is current) and reads the manifest.
    static func manifest() throws -> Manifest {
        let script = root.appendingPathComponent("scripts/input-matrix.py").path
        try ExternalTool.succeed("python3", [script, "generate", directory.path])
        let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
        return try JSONDecoder().decode(Manifest.self, from: data)
    }

    static func entries() throws -> [Entry] { try manifest().entries }

    @Test func theMatrixCoversEveryRateChannelCountContainerAndTagKind() throws {
        let manifest = try Self.manifest()
        let entries = manifest.entries
        #expect(manifest.count == entries.count && entries.count >= 300, "\(entries.count) inputs")
        let rates = Set(entries.map(\.rate))
        #expect(rates == [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000,
                          176400, 192000, 352800, 384000], "rates \(rates.sorted())")
        #expect(Set(entries.map(\.decodedChannels)) == Set(1...8))
        let pcm = ["pcm_u8", "pcm_s8", "pcm_s16le", "pcm_s16be", "pcm_s24le", "pcm_s24be", "pcm_s32le", "pcm_s32be", "pcm_s64le",
                   "pcm_f32le", "pcm_f32be", "pcm_f64le", "pcm_f64be", "pcm_alaw", "pcm_mulaw"]
        let coded = ["mp3", "vorbis", "opus", "flac", "alac", "wavpack", "tta", "ac3", "eac3", "mp2", "wmav1", "wmav2", "speex",
                     "adpcm_ima_wav", "adpcm_ms", "adpcm_g722", "adpcm_g726", "adpcm_yamaha", "adpcm_swf", "adpcm_ima_qt",
                     "adpcm_adx", "adpcm_ima_apm", "adpcm_ima_ws", "gsm", "gsm_ms", "g723_1", "codec2", "nellymoser", "ra_144",
                     "roq_dpcm", "dfpwm", "sbc", "aptx", "aptx_hd", "dts", "truehd", "mlp", "pcm_dvd", "s302m", "aac"]
        let codecs = Set(entries.map(\.codec))
        #expect(codecs.isSuperset(of: pcm + coded), "missing codecs: \(Set(pcm + coded).subtracting(codecs).sorted())")
        for container in ["wav", "aiff", "caf", "w64", "rf64"] {
            let held = Set(entries.filter { $0.container == container && $0.codec.hasPrefix("pcm_") }.map(\.codec))
            #expect(held.count >= 5, "\(container) holds only \(held.sorted())")
        }
        // Tags in every container that holds them; a cover and chapters at least once per
        // container that holds those.
        let tagged = entries.filter(\.tagged)
        for container in ["mp3", "flac", "ogg", "mp4", "caf", "mov", "wav", "rf64", "aiff", "wv", "tta", "asf", "matroska", "webm"] {
            #expect(tagged.contains { $0.container == container && $0.tags.contains("title") }, "no tagged \(container)")
        }
        // (Not ASF: FFmpeg 5.1's ASF muxer writes a picture as a video stream, not a WM/Picture.)
        for container in ["mp3", "flac", "ogg", "mp4", "aiff", "matroska"] {
            #expect(tagged.contains { $0.container == container && $0.coverRead }, "no \(container) with a cover")
        }
        for container in ["mp3", "ogg", "mp4", "mov", "aiff", "asf", "matroska", "webm"] {
            #expect(tagged.contains { $0.container == container && $0.chaptersRead > 0 }, "no \(container) with chapters")
        }
    }

    @Test(arguments: try InputMatrixTests.entries())
    func convertsToAnM4AThatHoldsExactlyTheRefereesFrames(_ entry: Entry) throws {
        let source = Self.directory.appendingPathComponent(entry.name).path
        let keyframe = try ExternalTool.keyframe
        let what = "\(entry.name) (\(entry.codec) in \(entry.container), \(entry.decodedRate) Hz, \(entry.decodedChannels) ch)"

        // probe: an answer or a message, never a crash.
        let probe = try ExternalTool.run(keyframe, ["probe", source])
        #expect(probe.status == 0 || (probe.status == 1 && !probe.standardError.isEmpty),
                "\(what): keyframe probe exited \(probe.status): \(probe.standardError.suffix(400))")
        #expect(!probe.standardError.contains("Fatal error"), "\(what): keyframe probe: \(probe.standardError.suffix(400))")
        if entry.codec == "mp3" {
            // An MP3's length from its Info tag (the LAME delay and padding), else its frames:
            // what the referee decodes, to the sample.
            let report = try ExternalTool.probeJSON(source)
            let seconds = report["duration"] as? Double ?? -1
            #expect(Int((seconds * Double(entry.rate)).rounded()) == entry.refereeFrames,
                    "\(what): probe says \(seconds) s, the referee decodes \(entry.refereeFrames) frames")
        }

        let scratch = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let m4a = scratch.appendingPathComponent("out.m4a").path
        let decoded = scratch.appendingPathComponent("decoded.wav").path
        let convert = try ExternalTool.run(keyframe, ["convert", source, "-o", m4a])
        let note = entry.refereeNote.isEmpty ? "" : " [referee: \(entry.refereeNote)]"
        try #require(convert.status == 0, "\(what): keyframe convert \(source) -o OUT.m4a exited \(convert.status): \(convert.standardError)\(note)")
        try ExternalTool.succeed(keyframe, ["decode", m4a, "-o", decoded])

        let format = try Self.wavFormat(decoded)
        #expect(format.rate == entry.outputRate, "\(what): the M4A is at \(format.rate) Hz, want \(entry.outputRate)")
        #expect(format.channels == entry.decodedChannels, "\(what): the M4A has \(format.channels) channels")
        let ours = try GaplessTests.pcm(decoded, channels: format.channels)
        let referee = try GaplessTests.pcm(Self.directory.appendingPathComponent(entry.referee).path, channels: entry.decodedChannels)
        #expect(referee.frames == entry.expectedFrames)
        #expect(ours.frames == entry.expectedFrames,
                "\(what): the M4A decodes to \(ours.frames) frames, the referee (\(entry.refereeTool)\(entry.outputRate == entry.decodedRate ? "" : ", resampled to \(entry.outputRate) Hz")) to \(entry.expectedFrames)\(note)")
        // Every channel but the LFE holds the same channel of the referee (normalised
        // correlation at lag 0 above 0.3: not remixed, not moved, not dropped), lined up at lag 0
        // over the whole file. 0.3, not more: at 12 kHz FFmpeg's AAC encoder codes the second
        // channel of a pair with intensity stereo, which leaves it 0.43-0.48 (the same with
        // `ffmpeg -c:a aac`; 1.0 with -aac_is 0). AAC's LFE element keeps only the lowest
        // spectral lines and the test signal is a 200 Hz+ chirp: the LFE is not compared.
        if format.channels == referee.channels {
            let names = try Self.wavFormat(Self.directory.appendingPathComponent(entry.referee).path).names
            let compared = (0..<format.channels).filter { names[$0] != "LFE" }
            let matches = compared.map { Self.alignment(referee, ours, channel: $0) }
            #expect(matches.allSatisfy { $0.lag == 0 && $0.correlation > 0.3 },
                    """
                    \(what): channels \(compared.map { names[$0] }) of the referee are found at lags \(matches.map(\.lag)), \
                    correlation \(matches.map { ($0.correlation * 100).rounded() / 100 }) at lag 0 \
                    (ours: \(format.names); want lag 0, correlation > 0.3)
                    """)
        }

        if entry.tagged {
            let report = try ExternalTool.probeJSON(m4a)
            let tags = report["tags"] as? [String: String] ?? [:]
            if entry.tags.contains("title") {
                #expect(tags["©nam"] == "Matrix Tone", "\(what): title not carried: \(tags.keys.sorted())")
            }
            if entry.tags.contains("artist") {
                #expect(tags["©ART"] == "KeyFrameKit", "\(what): artist not carried: \(tags.keys.sorted())")
            }
            if entry.coverRead {
                #expect(tags["covr"] != nil, "\(what): the cover is not carried: \(tags.keys.sorted())")
            }
        }
    }

    /// Where `channel` of `y` lines up with `channel` of `x`: the lag in −64…64 at which
    /// Σ x[n]·y[n+lag] over the whole overlap is largest, and the normalised correlation at lag 0.
    static func alignment(_ x: GaplessTests.PCM, _ y: GaplessTests.PCM, channel: Int, maxLag: Int = 64) -> (lag: Int, correlation: Double) {
        let a = stride(from: channel, to: x.samples.count, by: x.channels).map { Double(x.samples[$0]) }
        let b = stride(from: channel, to: y.samples.count, by: y.channels).map { Double(y.samples[$0]) }
        var best = (lag: Int.min, value: -Double.infinity)
        var atZero = 0.0, energyA = 0.0, energyB = 0.0
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for lag in -maxLag...maxLag {
                    var sum = 0.0
                    let (low, high) = (max(0, -lag), min(a.count, b.count - lag))
                    if low < high { for n in low..<high { sum += a[n] * b[n + lag] } }
                    if sum > best.value { best = (lag, sum) }
                    if lag == 0 { atZero = sum }
                }
                for n in 0..<min(a.count, b.count) {
                    energyA += a[n] * a[n]
                    energyB += b[n] * b[n]
                }
            }
        }
        let norm = (energyA * energyB).squareRoot()
        return (best.lag, norm > 0 ? atZero / norm : 0)
    }

    /// Sample rate, channel count and the speakers of the channel mask (WAVE_FORMAT_EXTENSIBLE;
    /// `ch0`, `ch1`… without one) from a WAV's `fmt ` chunk.
    static func wavFormat(_ path: String) throws -> (rate: Int, channels: Int, names: [String]) {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(4096))
        func le(_ at: Int, _ count: Int) -> Int { (0..<count).reduce(0) { $0 | Int(data[at + $1]) << (8 * $1) } }
        var position = 12
        while position + 24 <= data.count {
            let size = le(position + 4, 4)
            if data[position..<position + 4].elementsEqual("fmt ".utf8) {
                let channels = le(position + 10, 2)
                let mask = le(position + 8, 2) == 0xFFFE && size >= 40 && position + 32 <= data.count ? le(position + 28, 4) : 0
                var names = Self.speakers.indices.filter { mask & (1 << $0) != 0 }.map { Self.speakers[$0] }
                if names.count != channels { names = (0..<channels).map { "ch\($0)" } }
                return (le(position + 12, 4), channels, names)
            }
            position += 8 + size + (size & 1)
        }
        throw ExternalTool.ToolFailure(description: "\(path) has no fmt chunk")
    }

    /// The speakers of dwChannelMask, bit 0 first.
    static let speakers = ["FL", "FR", "FC", "LFE", "BL", "BR", "FLC", "FRC", "BC", "SL", "SR",
                           "TC", "TFL", "TFC", "TFR", "TBL", "TBC", "TBR"]
}
