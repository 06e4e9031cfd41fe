import Foundation
import Testing
import TestSupport

/// Issue 23, item 2: the player page `keyframe serve` answers `/` with plays a package
/// gaplessly in headless Chromium, and a screenshot shows it. `scripts/browser-page.py` opens the
/// origin's own page (not a harness page), waits for `window.keyframePlayer.state` to leave
/// "loading", puts the capture worklet behind the page's `<audio id="player">`, plays it to its
/// end and compares what was heard with the source (BrowserGaplessTests' probe: a mono 48 kHz
/// chirp with seeded noise, so that one lag lines it up). `chromium` and the venv's
/// websocket-client come from `make deps`; a missing one is a failure, not a skip.
extension RealTimeTests {
@Suite(.serialized) struct PlayerPageTests {
    /// 2.49 s: the last sample lasts 768 of its 1024 frames, so the padding is there to be heard.
    static let frames = 119_552

    /// The probe's WAV and a package of it (`extra`: more `package` options, e.g. a ladder).
    static func package(_ name: String, in directory: URL, _ extra: [String] = []) throws -> (hls: String, wav: String) {
        let wav = directory.appendingPathComponent("probe.wav").path
        if !FileManager.default.fileExists(atPath: wav) {
            try GaplessTests.makeSignal(rate: BrowserGaplessTests.rate, channels: 1, frames: frames, to: wav)
        }
        let hls = directory.appendingPathComponent(name).path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", wav, "--hls", hls, "--segment-duration", "1"] + extra)
        return (hls, wav)
    }

    /// `keyframe serve PACKAGE` on a loopback port, the page measured by the driver.
    static func playPage(of package: String, source: String, screenshot: String, extra: [String] = []) throws -> [String: Any] {
        let port = try HTTPProbe.freePort()
        let server = try RunningProcess(try ExternalTool.keyframe, ["serve", package, "--address", "127.0.0.1:\(port)"])
        defer { server.stop() }
        try CDNCacheTests.waitUntilServed("http://127.0.0.1:\(port)/")
        let script = MP4Check.repositoryRoot.appendingPathComponent("scripts/browser-page.py").path
        let run = try ExternalTool.succeed(try MP4Check.venvPython, [script, "http://127.0.0.1:\(port)/", source, "--screenshot", screenshot] + extra)
        return try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput)")
    }

    static func object(_ report: [String: Any], _ key: String) -> [String: Any] { report[key] as? [String: Any] ?? [:] }

    /// Ready, and exactly the source heard: its first frame first, not one frame after its last,
    /// lined up (one lag) and continuous (no 1024-frame block far off the source).
    static func expectExact(_ report: [String: Any], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let player = object(report, "player")
        let heard = object(report, "heard")
        #expect(player["state"] as? String == "ready", "\(what): the page is \(player)", sourceLocation: sourceLocation)
        let span = BrowserGaplessTests.number(heard, "span").map(Int.init)
        let before = BrowserGaplessTests.number(heard, "heardBefore").map(Int.init)
        let after = BrowserGaplessTests.number(heard, "heardAfter").map(Int.init)
        #expect(span == frames && before == 0 && after == 0,
                "\(what): heard \(span ?? -1) frames, \(before ?? -1) before the source's first and \(after ?? -1) after its last; expected \(frames), 0 and 0: \(heard), page \(player)",
                sourceLocation: sourceLocation)
        #expect((BrowserGaplessTests.number(heard, "correlation") ?? 0) > 0.8 && (BrowserGaplessTests.number(heard, "leastBlockSNR") ?? 0) > 3,
                "\(what): correlation \(BrowserGaplessTests.number(heard, "correlation") ?? 0), least block SNR \(BrowserGaplessTests.number(heard, "leastBlockSNR") ?? 0) dB",
                sourceLocation: sourceLocation)
    }

    /// A package longer than Chromium's audio buffer (about 12 MB: 10 minutes at 256 kb/s is 19 MB)
    /// loads without a quota error: the page buffers a minute ahead and waits.
    @Test(.hangGuard(minutes: 15))
    func aLongPackageIsBufferedAMinuteAhead() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let m4a = directory.appendingPathComponent("long.m4a").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=600",
                                            "-ac", "2", "-c:a", "aac", "-b:a", "256k", m4a])
        let hls = directory.appendingPathComponent("long").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", hls])
        let wav = directory.appendingPathComponent("unused.wav").path
        try GaplessTests.makeSignal(rate: 48000, channels: 1, frames: 4800, to: wav)
        let report = try Self.playPage(of: hls, source: wav, screenshot: directory.appendingPathComponent("long.png").path,
                                       extra: ["--load-only", "8"])
        let loaded = Self.object(report, "loaded")
        let player = loaded["player"] as? [String: Any] ?? [:]
        #expect(player["state"] as? String == "ready" && player["error"] is NSNull, "\(player)")
        let ranges = loaded["buffered"] as? [[Double]] ?? []
        let end = ranges.last?.last ?? 0
        #expect(end >= 55 && end <= 75, "buffered \(ranges) of \(loaded["duration"] ?? "")")
        #expect(abs((loaded["duration"] as? Double ?? 0) - 600) < 0.1, "\(loaded)")
    }

    /// Without MSE the page hands the playlist to the browser's own HLS, which plays (with the
    /// priming and the padding, as native HLS does: see BrowserGaplessTests).
    @Test(.hangGuard(minutes: 15))
    func withoutMSEThePageFallsBackToTheBrowsersHLS() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (hls, wav) = try Self.package("hls", in: directory)
        let report = try Self.playPage(of: hls, source: wav, screenshot: directory.appendingPathComponent("native.png").path, extra: ["--no-mse"])
        let player = Self.object(report, "player")
        #expect(player["state"] as? String == "native", "\(player)")
        let heard = Self.object(report, "heard")
        let span = BrowserGaplessTests.number(heard, "span").map(Int.init) ?? 0
        #expect(span >= Self.frames && span <= Self.frames + 2048, "native HLS heard \(span) frames: \(heard)")
        #expect((Self.object(report, "page")["status"] as? String)?.contains("browser's own HLS") == true, "\(Self.object(report, "page"))")
    }

    @Test(.hangGuard(minutes: 15))
    func thePagePlaysAPackageGaplesslyAndShowsItself() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (hls, wav) = try Self.package("hls", in: directory)
        let screenshot = directory.appendingPathComponent("page.png").path
        let report = try Self.playPage(of: hls, source: wav, screenshot: screenshot)
        Self.expectExact(report, "index.m3u8")
        // The window ends at the valid length, not at the EXTINF sum (which holds the priming).
        let validLength = BrowserGaplessTests.number(Self.object(report, "player"), "validLength") ?? 0
        #expect(abs(validLength - Double(Self.frames) / Double(BrowserGaplessTests.rate)) < 1e-9, "\(report["player"] ?? "")")

        let page = Self.object(report, "page")
        #expect(page["controls"] as? Bool == true && page["autoplayAttribute"] as? Bool == false, "\(page)")
        // No tags: the playlist's file name names the stream.
        #expect(page["accessibleName"] as? String == "index.m3u8" && page["title"] as? String == "index.m3u8"
                && page["heading"] as? String == "index.m3u8" && page["artist"] is NSNull && page["cover"] is NSNull,
                "the audio element's accessible name, the title and the heading: \(page)")
        #expect(page["status"] as? String == "Ready: 0:02." && page["statusRole"] as? String == "status"
                && page["statusLive"] as? String == "polite" && page["latencyLive"] as? String == "polite", "\(page)")

        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.count > 1000 && png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]),
                "the screenshot is \(png.count) bytes: \(png.prefix(8).map { String(format: "%02x", $0) }.joined())")
        #expect(BrowserGaplessTests.number(Self.object(report, "screenshot"), "bytes") == Double(png.count), "\(report["screenshot"] ?? "")")
    }

    /// A ladder: the page is given master.m3u8, takes the highest rendition and plays it exactly.
    @Test(.hangGuard(minutes: 15))
    func thePagePlaysALadderFromItsMasterPlaylist() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (hls, wav) = try Self.package("ladder", in: directory, ["--bitrates", "64k,96k"])
        try #require(FileManager.default.fileExists(atPath: hls + "/master.m3u8"))
        let report = try Self.playPage(of: hls, source: wav, screenshot: directory.appendingPathComponent("page.png").path)
        #expect(Self.object(report, "page")["playlist"] as? String == "master.m3u8", "\(report["page"] ?? "")")
        #expect((Self.object(report, "player")["playlist"] as? String)?.hasSuffix("/96k/index.m3u8") == true, "\(report["player"] ?? "")")
        Self.expectExact(report, "master.m3u8")
        let bandwidth = try Self.variant("96k/index.m3u8", of: hls).bandwidth
        #expect(BrowserGaplessTests.number(Self.object(Self.object(report, "player"), "bitrate"), "bitsPerSecond") == Double(bandwidth),
                "the bitrate shown is the variant's BANDWIDTH, \(bandwidth): \(report["player"] ?? "")")
    }

    /// A ladder of FLAC, AAC-LC and HE-AAC (issue 38): the page takes the FLAC rendition, the
    /// highest, as MSE's `flac`, and plays every sample of it, no more.
    @Test(.hangGuard(minutes: 15))
    func thePagePlaysALosslessLadderEverySample() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (hls, wav) = try Self.package("lossless", in: directory, ["--bitrates", "lossless:flac,128k,48k:he-aac"])
        let master = try String(contentsOfFile: hls + "/master.m3u8", encoding: .utf8)
        #expect(master.contains("CODECS=\"fLaC\"") && master.contains("CODECS=\"mp4a.40.2\"") && master.contains("CODECS=\"mp4a.40.5\""), "\(master)")
        let report = try Self.playPage(of: hls, source: wav, screenshot: directory.appendingPathComponent("page.png").path)
        #expect((Self.object(report, "player")["playlist"] as? String)?.hasSuffix("/flac/index.m3u8") == true, "\(report["player"] ?? "")")
        Self.expectExact(report, "a FLAC rendition")
    }

    /// An Opus rendition (issue 38): the page plays `Opus` as MSE's `opus`, from the source's
    /// first sample to its last (the pre-skip and the edit list agree, and the last granule's
    /// trim is the trun's).
    @Test(.hangGuard(minutes: 15))
    func thePagePlaysAnOpusRenditionEverySample() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (hls, wav) = try Self.package("opus", in: directory, ["--codec", "opus", "--bitrate", "128k"])
        let report = try Self.playPage(of: hls, source: wav, screenshot: directory.appendingPathComponent("page.png").path)
        Self.expectExact(report, "an Opus rendition")
    }

    // MARK: The stream's tags on the page (issue 35, item 17)

    /// A 3 s mono 48 kHz M4A (FFmpeg's AAC) tagged by `keyframe tag` with `title`, an artist and
    /// a `width`×`height` cover (PNG, or JPEG with `jpeg`): the M4A and the cover's bytes.
    static func taggedSource(in directory: URL, title: String, artist: String, width: Int, height: Int,
                             jpeg: Bool = false) throws -> (m4a: String, cover: Data) {
        let m4a = directory.appendingPathComponent("tagged.m4a").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3",
                                            "-ac", "1", "-c:a", "aac", "-b:a", "96k", m4a])
        let cover = directory.appendingPathComponent(jpeg ? "cover.jpg" : "cover.png").path
        try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=c=0x3070c0:s=\(width)x\(height)",
                                            "-frames:v", "1"] + (jpeg ? ["-pix_fmt", "yuvj420p"] : []) + [cover])
        try ExternalTool.succeed(try ExternalTool.keyframe, ["tag", m4a, "--set", "title=" + title, "--set", "artist=" + artist, "--cover", cover])
        return (m4a, try Data(contentsOf: URL(fileURLWithPath: cover)))
    }

    /// A master playlist's variant: its BANDWIDTH and AVERAGE-BANDWIDTH.
    static func variant(_ uri: String, of package: String) throws -> (bandwidth: Int, average: Int) {
        let lines = try String(contentsOfFile: package + "/master.m3u8", encoding: .utf8).split(separator: "\n").map(String.init)
        let index = try #require(lines.firstIndex(of: uri), "\(lines)")
        let line = lines[index - 1]
        func attribute(_ name: String) -> Int? {
            line.split(separator: ":", maxSplits: 1).last?.split(separator: ",")
                .first { $0.hasPrefix(name + "=") }.flatMap { Int($0.dropFirst(name.count + 1)) }
        }
        return (try #require(attribute("BANDWIDTH"), "\(line)"), try #require(attribute("AVERAGE-BANDWIDTH"), "\(line)"))
    }

    /// The iTunes items of an MP4 as mutagen reads them: `[key: [text]]`, a cover as
    /// `"covr:FORMAT:HEX"`.
    static func mutagenTags(_ file: String) throws -> [String: [String]] {
        let script = """
            import sys, json, mutagen.mp4 as m
            f = m.MP4(sys.argv[1])
            out = {}
            for k, v in (f.tags or {}).items():
                out[k] = ['covr:%d:%s' % (x.imageformat, bytes(x).hex()) if k == 'covr' else (bytes(x).decode() if isinstance(x, bytes) else str(x)) for x in v]
            print(json.dumps(out))
            """
        let run = try ExternalTool.succeed(try MP4Check.venvPython, ["-c", script, file])
        return try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: [String]], "\(run.standardOutput)")
    }

    /// `keyframe package` carries the input's title, artist and cover into every init segment it
    /// writes (iTunes items in `moov/udta/meta/ilst`, as mutagen and ffprobe read them): copied
    /// and encoded as a ladder (each rendition's init.mp4), the cover after the iTunSMPB, so that
    /// FFmpeg (which gives that tag's priming to the stream it made last, and makes one of a
    /// cover) still skips the priming: its decode of the HLS starts with ours. The DASH header
    /// has the tags but no cover (its iTunSMPB comes in the first segment, after the cover's
    /// stream would be made).
    @Test(.hangGuard(minutes: 15))
    func packagingCarriesTheTagsAndCoverIntoEveryInitSegment() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (m4a, cover) = try Self.taggedSource(in: directory, title: "Nuit & Jour «Ünïcode»", artist: "Les Artistes", width: 48, height: 32)
        let copied = directory.appendingPathComponent("copied").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", copied, "--segment-duration", "1", "--dash"])
        let ladder = directory.appendingPathComponent("ladder").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", ladder, "--segment-duration", "1", "--bitrates", "64k,96k"])
        let covr = "covr:14:" + cover.map { String(format: "%02x", $0) }.joined()
        for header in [copied + "/init.mp4", copied + "/init-dash.mp4", ladder + "/64k/init.mp4", ladder + "/96k/init.mp4"] {
            let dash = header.hasSuffix("init-dash.mp4")
            let tags = try Self.mutagenTags(header)
            #expect(tags["©nam"] == ["Nuit & Jour «Ünïcode»"] && tags["©ART"] == ["Les Artistes"] && tags["covr"] == (dash ? nil : [covr]),
                    "\(header): \(tags.mapValues { $0.map { $0.prefix(40) } })")
            #expect((tags["----:com.apple.iTunes:iTunSMPB"] != nil) == !dash, "\(header): \(tags.keys.sorted())")
            let format = try ExternalTool.succeed("ffprobe", ["-v", "error", "-show_entries", "format_tags=title,artist", "-of", "json", header]).standardOutput
            #expect(format.contains("\"title\": \"Nuit & Jour «Ünïcode»\"") && format.contains("\"artist\": \"Les Artistes\""), "\(header): \(format)")
        }
        // FFmpeg skips the priming with the cover there: its decode starts with ours, for the
        // copy's playlist, the copy's MPD and a ladder's rendition.
        for (playlist, manifest) in [(copied + "/index.m3u8", copied + "/index.m3u8"), (copied + "/index.m3u8", copied + "/manifest.mpd"),
                                     (ladder + "/96k/index.m3u8", ladder + "/96k/index.m3u8")] {
            let ours = directory.appendingPathComponent("ours-\(UUID().uuidString).wav").path
            let theirs = directory.appendingPathComponent("theirs-\(UUID().uuidString).wav").path
            try ExternalTool.succeed(try ExternalTool.keyframe, ["decode", playlist, "-o", ours])
            try ExternalTool.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", manifest, "-map", "0:a", "-c:a", "pcm_s16le", theirs])
            let (a, b) = (try GaplessTests.pcm(ours, channels: 1), try GaplessTests.pcm(theirs, channels: 1))
            #expect(a.frames > 140_000 && b.frames >= a.frames && b.samples.prefix(a.samples.count) == a.samples[...],
                    "\(manifest): FFmpeg decodes \(b.frames) frames that do not start with our \(a.frames)")
        }
    }

    /// The page names a tagged package from its init segment: the title (markup in it stays
    /// text) as the document's title, the heading and the audio's name, the artist under it, the
    /// cover (a Blob URL of the PNG, its natural size the PNG's), and the bitrate of the segments
    /// it fetched (their bytes over their EXTINFs: the playlist has no EXT-X-BITRATE).
    @Test(.hangGuard(minutes: 15))
    func thePageShowsTheStreamsTitleArtistCoverAndBitrate() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let title = "Nuit & Jour <img> «Ünïcode»"
        let (m4a, _) = try Self.taggedSource(in: directory, title: title, artist: "Les Artistes", width: 48, height: 32)
        let hls = directory.appendingPathComponent("hls").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", hls, "--segment-duration", "1"])
        let report = try Self.playPage(of: hls, source: try Self.unusedSource(in: directory),
                                       screenshot: directory.appendingPathComponent("tagged.png").path, extra: ["--load-only", "2"])
        let player = Self.object(Self.object(report, "loaded"), "player")
        let page = Self.object(report, "page")
        #expect(player["state"] as? String == "ready" && player["error"] is NSNull, "\(player)")
        #expect(player["title"] as? String == title && player["artist"] as? String == "Les Artistes", "\(player)")
        #expect(page["title"] as? String == title && page["heading"] as? String == title && page["artist"] as? String == "Les Artistes"
                && page["accessibleName"] as? String == title + " — Les Artistes", "\(page)")
        // The title's "<img>" is text: the cover is the page's only image.
        #expect(page["images"] as? Int == 1, "\(page)")
        let cover = Self.object(page, "cover")
        #expect(cover["naturalWidth"] as? Int == 48 && cover["naturalHeight"] as? Int == 32 && cover["blob"] as? Bool == true, "\(page)")
        #expect(Self.object(player, "cover")["type"] as? String == "image/png", "\(player)")
        // The bitrate: every segment's bytes over the EXTINF sum.
        let playlist = try String(contentsOfFile: hls + "/index.m3u8", encoding: .utf8)
        let seconds = playlist.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }
            .compactMap { Double($0.dropFirst(8).split(separator: ",").first ?? "") }.reduce(0, +)
        let bytes = try FileManager.default.contentsOfDirectory(atPath: hls).filter { $0.hasSuffix(".m4s") }
            .map { try Data(contentsOf: URL(fileURLWithPath: hls + "/" + $0)).count }.reduce(0, +)
        let bitrate = Self.object(player, "bitrate")
        let expected = (Double(bytes * 8) / seconds).rounded()
        #expect(bitrate["source"] as? String == "segments" && BrowserGaplessTests.number(bitrate, "bitsPerSecond") == expected,
                "the bitrate: \(bitrate), expected \(expected)")
        #expect(page["bitrate"] as? String == "Bitrate: \(Self.kilobits(expected)) (measured)", "\(page)")
    }

    /// A tagged ladder: the page plays the highest variant of master.m3u8 and shows its
    /// BANDWIDTH (and AVERAGE-BANDWIDTH), the tags and the JPEG cover of that rendition's init.
    @Test(.hangGuard(minutes: 15))
    func thePageShowsALaddersVariantBandwidthAndTags() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (m4a, _) = try Self.taggedSource(in: directory, title: "Ladder Title", artist: "Ladder Artist", width: 40, height: 24, jpeg: true)
        let hls = directory.appendingPathComponent("ladder").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", hls, "--segment-duration", "1", "--bitrates", "64k,96k"])
        let (bandwidth, average) = try Self.variant("96k/index.m3u8", of: hls)
        let report = try Self.playPage(of: hls, source: try Self.unusedSource(in: directory),
                                       screenshot: directory.appendingPathComponent("ladder.png").path, extra: ["--load-only", "2"])
        let player = Self.object(Self.object(report, "loaded"), "player")
        let page = Self.object(report, "page")
        #expect(player["state"] as? String == "ready" && (player["playlist"] as? String)?.hasSuffix("/96k/index.m3u8") == true, "\(player)")
        let bitrate = Self.object(player, "bitrate")
        #expect(bitrate["source"] as? String == "BANDWIDTH" && BrowserGaplessTests.number(bitrate, "bitsPerSecond") == Double(bandwidth)
                && BrowserGaplessTests.number(bitrate, "average") == Double(average), "the bitrate: \(bitrate); BANDWIDTH \(bandwidth), AVERAGE \(average)")
        #expect(page["bitrate"] as? String == "Bitrate: \(Self.kilobits(Double(bandwidth))) peak, \(Self.kilobits(Double(average))) average", "\(page)")
        #expect(page["title"] as? String == "Ladder Title" && page["heading"] as? String == "Ladder Title"
                && page["artist"] as? String == "Ladder Artist", "\(page)")
        let cover = Self.object(page, "cover")
        #expect(cover["naturalWidth"] as? Int == 40 && cover["naturalHeight"] as? Int == 24, "\(page)")
        #expect(Self.object(player, "cover")["type"] as? String == "image/jpeg", "\(player)")
    }

    /// A damaged item list (the title's data atom larger than its item, the cover's item a
    /// largesize past the end) neither stops the page nor throws: the stream plays, named by its
    /// playlist's file name, with the artist that was readable and no cover.
    @Test(.hangGuard(minutes: 15))
    func aDamagedItemListLeavesTheNameToThePlaylist() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (m4a, _) = try Self.taggedSource(in: directory, title: "Hostile", artist: "Readable", width: 16, height: 16)
        let hls = directory.appendingPathComponent("hls").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", hls, "--segment-duration", "1"])
        let initURL = URL(fileURLWithPath: hls + "/init.mp4")
        var bytes = [UInt8](try Data(contentsOf: initURL))
        func find(_ type: [UInt8]) throws -> Int {
            let at = try #require((0...(bytes.count - type.count)).first { Array(bytes[$0..<($0 + type.count)]) == type }, "\(type)")
            return at - 4
        }
        // ©nam's data atom says 0xFFFFFFF0 bytes; covr says 1 (a largesize: the next 8 bytes,
        // its data atom's size and type, far past the end).
        let title = try find([0xA9] + Array("nam".utf8))
        bytes.replaceSubrange((title + 8)..<(title + 12), with: [0xFF, 0xFF, 0xFF, 0xF0])
        let covr = try find(Array("covr".utf8))
        bytes.replaceSubrange(covr..<(covr + 4), with: [0, 0, 0, 1])
        try Data(bytes).write(to: initURL)
        let report = try Self.playPage(of: hls, source: try Self.unusedSource(in: directory),
                                       screenshot: directory.appendingPathComponent("hostile.png").path, extra: ["--load-only", "2"])
        let player = Self.object(Self.object(report, "loaded"), "player")
        let page = Self.object(report, "page")
        #expect(player["state"] as? String == "ready" && player["error"] is NSNull && player["appended"] as? Int == 3, "\(player)")
        #expect(page["title"] as? String == "index.m3u8" && page["heading"] as? String == "index.m3u8"
                && page["artist"] as? String == "Readable" && page["cover"] is NSNull && page["images"] as? Int == 1, "\(page)")
    }

    /// Bits per second as the page writes them: kb/s, to a tenth below 100.
    static func kilobits(_ bits: Double) -> String {
        String(format: bits < 100_000 ? "%.1f kb/s" : "%.0f kb/s", bits / 1000)
    }

    /// A WAV the page driver wants and a `--load-only` run never plays.
    static func unusedSource(in directory: URL) throws -> String {
        let wav = directory.appendingPathComponent("unused.wav").path
        try GaplessTests.makeSignal(rate: 48000, channels: 1, frames: 4800, to: wav)
        return wav
    }

    /// Chapters: an M4A with two (ffmpeg from an FFMETADATA list: "Opening" at 0, "Close" at
    /// 1.2 s), packaged (`chapters.vtt` beside the playlist), is listed by the page as two buttons
    /// with their start times, each seeking there; the package plays (its 440 Hz tone heard).
    /// `scripts/browser-page-live.py` (PlayerPageLiveTests.swift) drives the page.
    @Test(.hangGuard(minutes: 15))
    func thePageListsAPackagesChaptersAsButtons() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let m4a = try FormatRegistryTests.source("chapters.m4a", in: directory, chapters: true)
        let hls = directory.appendingPathComponent("hls").path
        try ExternalTool.succeed(try ExternalTool.keyframe, ["package", m4a, "--hls", hls, "--segment-duration", "1"])
        let vtt = try String(contentsOfFile: hls + "/chapters.vtt", encoding: .utf8)
        #expect(vtt.contains("00:00:01.200 --> 00:00:02.000\nClose"), "\(vtt)")
        let port = try HTTPProbe.freePort()
        let server = try RunningProcess(try ExternalTool.keyframe, ["serve", hls, "--address", "127.0.0.1:\(port)"])
        defer { server.stop() }
        try CDNCacheTests.waitUntilServed("http://127.0.0.1:\(port)/")
        let report = try PlayerPageLive.listen("http://127.0.0.1:\(port)/", ["--play", "3", "--rate", "44100"])
        let player = Self.object(report, "player")
        #expect(player["state"] as? String == "ready" && player["live"] as? Bool == false, "the page: \(player)")
        let page = Self.object(report, "page")
        #expect(page["chapters"] as? [String] == ["Opening (0:00)", "Close (0:01)"], "the chapter buttons: \(page)")
        let seeks = (page["chapterSeeks"] as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.doubleValue }
        #expect(seeks.count == 2 && abs(seeks[0]) < 1e-6 && abs(seeks[1] - 1.2) < 1e-6, "currentTime after each chapter button: \(page)")
        let heard = Self.object(report, "heard")
        #expect((BrowserGaplessTests.number(heard, "nonSilent") ?? 0) > 44100 * 1.5
                && abs((BrowserGaplessTests.number(heard, "frequency") ?? 0) - 440) < 10, "heard: \(heard)")
        #expect(Self.object(report, "played")["ended"] as? Bool == true, "\(report["played"] ?? "")")
    }
}
}

typealias PlayerPageTests = RealTimeTests.PlayerPageTests
