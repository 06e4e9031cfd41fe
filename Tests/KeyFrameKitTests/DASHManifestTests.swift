import Foundation
@testable import KeyFrameKit
@testable import MediaFormats
@testable import MediaStreaming
@testable import MediaValidation
import Testing
import TestSupport

/// ``DASHManifest``: the MPDs our packager and FFmpeg write read back to the segments on disk,
/// the `SegmentTimeline` rules (ISO/IEC 23009-1 5.3.9.6), inheritance (5.3.9.1), template
/// identifiers (5.3.9.4.4), and refusals of what is malformed or hostile, fuzzed.
@Suite(.blocking) struct DASHManifestTests {
    typealias Entry = DASHManifest.TimelineEntry
    typealias Segment = DASHManifest.Segment

    // MARK: - What our packager writes

    /// Two renditions as `StreamManifests.mpd` writes them: the first with a short last segment
    /// and a known valid length, the second without.
    static var ourRenditions: [StreamManifests.Rendition] {
        var low = StreamManifests.Rendition(path: "64k", segments: [(16_100, 96_256), (16_050, 96_256), (16_000, 96_256), (7_000, 40_000)],
                                            timescale: 48_000, channelCount: 2, priming: 2_048)
        low.validLength = 326_400
        var high = StreamManifests.Rendition(path: "128k", segments: [(32_000, 96_256), (31_000, 96_256), (20_000, 64_000)],
                                             timescale: 44_100, channelCount: 1, priming: 1_024)
        high.dashInitialization = "header.m4s"
        return [low, high]
    }

    @Test func ourPackagersManifestReadsBackEveryField() throws {
        let renditions = Self.ourRenditions
        let text = StreamManifests.mpd(renditions)
        let manifest = try DASHManifest(text: text)
        #expect(manifest.type == .static)
        #expect(manifest.mediaPresentationDuration == 6.8, "the longest valid length: 326400 / 48000")
        #expect(manifest.minBufferTime == 2)
        #expect(manifest.profiles == ["urn:mpeg:dash:profile:isoff-live:2011"])
        #expect(manifest.baseURL == nil)
        try #require(manifest.periods.count == 1)
        let period = manifest.periods[0]
        #expect(period.id == "0" && period.start == 0 && period.duration == nil && period.baseURL == nil && period.line == 3)
        #expect(manifest.duration(of: period) == 6.8)
        try #require(period.adaptationSets.count == 1)
        let set = period.adaptationSets[0]
        #expect(set.id == "0" && set.contentType == "audio" && set.mimeType == "audio/mp4" && set.segmentAlignment)
        #expect(set.codecs == nil && set.audioSamplingRate == nil && set.channelConfiguration == nil && set.baseURL == nil)
        try #require(set.representations.count == 2)

        for (index, (representation, rendition)) in zip(set.representations, renditions).enumerated() {
            #expect(representation.id == "\(index)")
            #expect(representation.bandwidth == rendition.peakBitrate)
            #expect(representation.codecs == "mp4a.40.2")
            #expect(representation.mimeType == "audio/mp4", "inherited from the AdaptationSet")
            #expect(representation.audioSamplingRate == rendition.timescale)
            #expect(representation.channelConfiguration == "\(rendition.channelCount)")
            #expect(representation.baseURL == nil && representation.unsupportedAddressing == nil)
            let template = try #require(representation.segmentTemplate)
            #expect(template.timescale == Int64(rendition.timescale))
            // The priming is the init's edit alone, not an offset too (players apply both).
            #expect(template.presentationTimeOffset == 0)
            #expect(template.initialization == "\(rendition.path)/\(rendition.dashInitialization)")
            #expect(template.media == "\(rendition.path)/segment-$Number%05d$.m4s")
            #expect(template.startNumber == 1 && template.duration == nil)

            let segments = try manifest.segments(of: representation, in: period)
            // Presentation times after the edit: the first segment from 0, shortened by the priming.
            var time: Int64 = 0
            var expected: [Segment] = []
            for (number, segment) in rendition.segments.enumerated() {
                let start = max(0, time - rendition.priming)
                expected.append(Segment(number: number + 1, time: start, duration: time + segment.duration - rendition.priming - start))
                time += segment.duration
            }
            #expect(segments == expected)
            let names = try segments.map { segment throws(PipelineError) in
                try DASHManifest.expand(template.media ?? "", representationID: representation.id, number: segment.number, time: segment.time,
                                        bandwidth: representation.bandwidth)
            }
            #expect(names == (1...rendition.segments.count).map { "\(rendition.path)/segment-0000\($0).m4s" })
        }
        #expect(set.representations[0].segmentTemplate?.timeline == [Entry(time: 0, duration: 94_208, repeatCount: 0), Entry(time: nil, duration: 96_256, repeatCount: 1),
                                                                     Entry(time: nil, duration: 40_000, repeatCount: 0)])
        #expect(set.representations[1].segmentTemplate?.timeline == [Entry(time: 0, duration: 95_232, repeatCount: 0), Entry(time: nil, duration: 96_256, repeatCount: 0),
                                                                     Entry(time: nil, duration: 64_000, repeatCount: 0)])
        #expect(try DASHManifest(text: text) == manifest, "the same text reads to the same manifest")
    }

    // MARK: - What FFmpeg writes

    @Test func ffmpegsDashMuxerOutputNamesTheFilesItWrote() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("DASHManifestTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let mpd = directory.appendingPathComponent("manifest.mpd")
        try Subprocess.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:d=7.3:r=48000", "-ac", "2", "-c:a", "aac",
                                          "-b:a", "128k", "-f", "dash", "-seg_duration", "2", mpd.path])
        let manifest = try DASHManifest(text: String(decoding: try Data(contentsOf: mpd), as: UTF8.self))
        #expect(manifest.type == .static && manifest.mediaPresentationDuration == 7.3 && manifest.minBufferTime == 4)
        #expect(manifest.profiles == ["urn:mpeg:dash:profile:isoff-live:2011"])
        let period = try #require(manifest.periods.first)
        #expect(manifest.periods.count == 1 && period.id == "0" && period.start == 0 && manifest.duration(of: period) == 7.3)
        let set = try #require(period.adaptationSets.first)
        #expect(set.id == "0" && set.contentType == "audio" && set.segmentAlignment && set.mimeType == nil)
        let representation = try #require(set.representations.first)
        #expect(representation.id == "0" && representation.bandwidth == 128_000 && representation.codecs == "mp4a.40.2")
        #expect(representation.mimeType == "audio/mp4" && representation.audioSamplingRate == 48_000 && representation.channelConfiguration == "2")
        let template = try #require(representation.segmentTemplate)
        #expect(template.timescale == 48_000 && template.presentationTimeOffset == 0 && template.startNumber == 1 && template.duration == nil)
        #expect(template.timeline == [Entry(time: 0, duration: 95_232, repeatCount: 0), Entry(time: nil, duration: 96_256, repeatCount: 1),
                                      Entry(time: nil, duration: 62_656, repeatCount: 0)])

        let segments = try manifest.segments(of: representation, in: period)
        #expect(segments == [Segment(number: 1, time: 0, duration: 95_232), Segment(number: 2, time: 95_232, duration: 96_256),
                             Segment(number: 3, time: 191_488, duration: 96_256), Segment(number: 4, time: 287_744, duration: 62_656)])
        #expect(segments.reduce(0) { $0 + $1.duration } == 350_400, "7.3 s at 48 kHz")

        func name(_ template: String?, _ segment: Segment) throws -> String {
            try DASHManifest.expand(template ?? "", representationID: representation.id, number: segment.number, time: segment.time,
                                    bandwidth: representation.bandwidth)
        }
        let initialization = try name(template.initialization, segments[0])
        let media = try segments.map { try name(template.media, $0) }
        #expect(initialization == "init-stream0.m4s")
        #expect(media == ["chunk-stream0-00001.m4s", "chunk-stream0-00002.m4s", "chunk-stream0-00003.m4s", "chunk-stream0-00004.m4s"])
        let written = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)).subtracting(["manifest.mpd"])
        #expect(written == Set([initialization] + media))
    }

    // MARK: - Timelines, durations, inheritance

    /// Two Periods; inheritance from the Period and the AdaptationSet; `r = -1` to the next `t`
    /// and to the Period's end; `@duration` without a timeline; `SegmentBase`.
    static let features = """
        <?xml version="1.0" encoding="UTF-8"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" xmlns:x="urn:example" type="static" mediaPresentationDuration="P0Y0M0DT0H1M0.000S"
             minBufferTime="PT1.5S" profiles="urn:mpeg:dash:profile:isoff-live:2011, urn:mpeg:dash:profile:isoff-on-demand:2011">
          <BaseURL>http://cdn.example/</BaseURL>
          <Period id="p0" duration="PT10S">
            <BaseURL><![CDATA[p0/]]></BaseURL>
            <SegmentTemplate timescale="1000"/>
            <AdaptationSet id="1" contentType="audio" mimeType="audio/mp4" codecs="mp4a.40.5" audioSamplingRate="24000 48000" segmentAlignment="1">
              <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="2"/>
              <SegmentTemplate media="$RepresentationID$/$Time$.m4s" initialization="$RepresentationID$/init.mp4" presentationTimeOffset="500">
                <SegmentTimeline>
                  <S t="500" d="2000" r="-1"/>
                  <S t="6500" d="1500" r="-1"/>
                </SegmentTimeline>
              </SegmentTemplate>
              <Representation id="a" bandwidth="64000"/>
              <Representation id="b" bandwidth="128000" codecs="mp4a.40.2" audioSamplingRate="48000" mimeType="audio/mp4; profiles=&quot;cmfc&quot;">
                <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="6"/>
                <BaseURL> b/ </BaseURL>
                <x:BaseURL>not ours</x:BaseURL>
                <SegmentTemplate media="$Bandwidth$/$Number%03d$.m4s" startNumber="0"/>
              </Representation>
            </AdaptationSet>
            <AdaptationSet id="2" segmentAlignment="false">
              <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="1"/>
              <SegmentTemplate timescale="48000" duration="96000" media="d/$Number$.m4s"/>
              <Representation id="d" bandwidth="96000" codecs="mp4a.40.2" audioSamplingRate="48000"/>
            </AdaptationSet>
            <AdaptationSet id="3" contentType="video" mimeType="video/mp4">
              <Representation id="v" bandwidth="1000000" codecs="avc1.64001f"><SegmentBase indexRange="0-100"/></Representation>
            </AdaptationSet>
          </Period>
          <Period id="p1" start="PT10S">
            <AdaptationSet mimeType="audio/mp4">
              <Representation id="c" bandwidth="1">
                <SegmentTemplate timescale="10" media="c-$Time%06d$.m4s">
                  <SegmentTimeline><S d="20" r="1"/><S t="100" d="30"/><S d="10" r="-1"/></SegmentTimeline>
                </SegmentTemplate>
              </Representation>
            </AdaptationSet>
          </Period>
        </MPD>
        """

    @Test func timelinesRepeatToTheNextTimeOrThePeriodsEndAndInheritFromAboveThem() throws {
        let manifest = try DASHManifest(text: Self.features)
        #expect(manifest.mediaPresentationDuration == 60 && manifest.minBufferTime == 1.5 && manifest.baseURL == "http://cdn.example/")
        #expect(manifest.profiles == ["urn:mpeg:dash:profile:isoff-live:2011", "urn:mpeg:dash:profile:isoff-on-demand:2011"])
        try #require(manifest.periods.count == 2)
        let (first, second) = (manifest.periods[0], manifest.periods[1])
        #expect(first.baseURL == "p0/" && first.duration == 10 && manifest.duration(of: first) == 10)
        #expect(second.start == 10 && second.duration == nil && manifest.duration(of: second) == 50, "to the presentation's end")
        try #require(first.adaptationSets.count == 3 && first.adaptationSets[0].representations.count == 2)
        let audio = first.adaptationSets[0]
        #expect(audio.segmentAlignment && audio.audioSamplingRate == 24_000 && audio.channelConfiguration == "2" && audio.codecs == "mp4a.40.5")
        #expect(!first.adaptationSets[1].segmentAlignment)

        // a: everything inherited; the Period's timescale under the AdaptationSet's template.
        let a = audio.representations[0]
        #expect(a.codecs == "mp4a.40.5" && a.mimeType == "audio/mp4" && a.audioSamplingRate == 24_000 && a.channelConfiguration == "2")
        let aTemplate = try #require(a.segmentTemplate)
        #expect(aTemplate.timescale == 1000 && aTemplate.presentationTimeOffset == 500 && aTemplate.startNumber == 1)
        #expect(aTemplate.media == "$RepresentationID$/$Time$.m4s" && aTemplate.initialization == "$RepresentationID$/init.mp4")
        let aSegments = try manifest.segments(of: a, in: first)
        // r=-1 to the next t (6500), then r=-1 to the Period's end: presentationTimeOffset + 10 s.
        #expect(aSegments.map(\.time) == [500, 2500, 4500, 6500, 8000, 9500])
        #expect(aSegments.map(\.duration) == [2000, 2000, 2000, 1500, 1500, 1500] && aSegments.map(\.number) == Array(1...6))
        #expect(try DASHManifest.expand(aTemplate.media!, representationID: a.id, number: 4, time: aSegments[3].time, bandwidth: a.bandwidth) == "a/6500.m4s")

        // b: its own attributes over the AdaptationSet's; the timeline inherited.
        let b = audio.representations[1]
        #expect(b.codecs == "mp4a.40.2" && b.audioSamplingRate == 48_000 && b.channelConfiguration == "6" && b.baseURL == "b/")
        #expect(b.mimeType == "audio/mp4; profiles=\"cmfc\"")
        let bTemplate = try #require(b.segmentTemplate)
        #expect(bTemplate.media == "$Bandwidth$/$Number%03d$.m4s" && bTemplate.initialization == "$RepresentationID$/init.mp4")
        #expect(bTemplate.startNumber == 0 && bTemplate.timescale == 1000 && bTemplate.timeline == aTemplate.timeline)
        let bSegments = try manifest.segments(of: b, in: first)
        #expect(bSegments.map(\.number) == Array(0...5) && bSegments.map(\.time) == aSegments.map(\.time))
        #expect(try DASHManifest.expand(bTemplate.media!, representationID: b.id, number: 0, time: 0, bandwidth: b.bandwidth) == "128000/000.m4s")

        // d: @duration without a timeline: ceil(10 s × 48000 / 96000) = 5.
        let d = first.adaptationSets[1].representations[0]
        #expect(d.channelConfiguration == "1" && d.mimeType == nil)
        let dSegments = try manifest.segments(of: d, in: first)
        #expect(dSegments == (0..<5).map { Segment(number: $0 + 1, time: Int64($0) * 96_000, duration: 96_000) })

        // v: SegmentBase is not read; the Period's template does not apply under it.
        let v = first.adaptationSets[2].representations[0]
        #expect(v.unsupportedAddressing?.contains("SegmentBase (line 30)") == true, "\(v.unsupportedAddressing ?? "nil")")
        #expect(throws: PipelineError.self) { try manifest.segments(of: v, in: first) }

        // c: t absent (0), a reset to t=100, then r=-1 to the Period's end: 50 s at 10 per second.
        let c = try #require(second.adaptationSets.first?.representations.first)
        let cSegments = try manifest.segments(of: c, in: second)
        #expect(cSegments.prefix(4).map(\.time) == [0, 20, 100, 130] && cSegments.prefix(4).map(\.duration) == [20, 20, 30, 10])
        #expect(cSegments.count == 3 + 37 && cSegments.last == Segment(number: 40, time: 490, duration: 10))
        #expect(try DASHManifest.expand(c.segmentTemplate!.media!, representationID: c.id, number: 1, time: 490, bandwidth: nil) == "c-000490.m4s")
    }

    @Test func aPeriodsLengthComesFromTheNextPeriodsStart() throws {
        let manifest = try DASHManifest(text: """
            <MPD type="static"><Period><AdaptationSet><Representation id="r">
            <SegmentTemplate timescale="1" duration="4" media="$Number$"/></Representation></AdaptationSet></Period>
            <Period start="PT1M30.5S"/><Period start="P1DT1H"/></MPD>
            """)
        #expect(manifest.periods.map(\.start) == [nil, 90.5, 90_000])
        #expect(manifest.duration(of: manifest.periods[0]) == 90.5 && manifest.duration(of: manifest.periods[2]) == nil)
        let representation = manifest.periods[0].adaptationSets[0].representations[0]
        #expect(try manifest.segments(of: representation, in: manifest.periods[0]).count == 23, "ceil(90.5 / 4)")
    }

    @Test func templateIdentifiers() throws {
        let name = try DASHManifest.expand("$RepresentationID$-$Number%05d$-$Time$-$Time%012d$-$Bandwidth%08d$-$$.m4s", representationID: "a$b",
                                           number: 42, time: 1_234_567, bandwidth: 64_000)
        #expect(name == "a$b-00042-1234567-000001234567-00064000-$.m4s")
        #expect(try DASHManifest.expand("no identifiers", representationID: "", number: 0, time: 0, bandwidth: nil) == "no identifiers")
        #expect(try DASHManifest.expand("$Number%01d$/$Number%032d$", representationID: "", number: 123, time: 0, bandwidth: nil)
                    == "123/" + String(repeating: "0", count: 29) + "123")
        #expect(try DASHManifest.expand("$Time%05d$", representationID: "", number: 0, time: -3, bandwidth: nil) == "-0003", "as printf pads")
        #expect(try DASHManifest.expand("$Time$", representationID: "", number: 0, time: .min, bandwidth: nil) == "\(Int64.min)")
        for bad in ["$Foo$", "$SubNumber$", "$Number%5d$", "$Number%033d$", "$Number%00d$", "$Number%0xd$", "$Number%05x$",
                    "$RepresentationID%02d$", "segment-$Number", "$Bandwidth$", "$number$", "$Number %05d$"] {
            #expect(throws: PipelineError.self, "\(bad)") {
                try DASHManifest.expand(bad, representationID: "a", number: 1, time: 1, bandwidth: nil)
            }
        }
        let error = #expect(throws: PipelineError.self) {
            try DASHManifest.expand("x-$Foo$.m4s", representationID: "a", number: 1, time: 1, bandwidth: nil)
        }
        #expect(error?.description.contains("$Foo$") == true, "\(String(describing: error))")
        // A representation id repeated until the name would pass 64 KiB.
        #expect(throws: PipelineError.self) {
            try DASHManifest.expand(String(repeating: "$RepresentationID$", count: 100), representationID: String(repeating: "i", count: 1000),
                                    number: 1, time: 1, bandwidth: nil)
        }
    }

    @Test func durations() {
        let cases: [(String, Double?)] = [("PT7.3S", 7.3), ("PT1H2M3.5S", 3723.5), ("P1DT2H", 93_600), ("P2D", 172_800), ("PT0S", 0), (" PT2S ", 2),
                                          ("P0Y0M1D", 86_400), ("PT.5S", 0.5), ("PT", nil), ("P", nil), ("", nil), ("-PT1S", nil), ("PT1.5M", nil),
                                          ("P1Y", nil), ("P1M", nil), ("PT1S1M", nil), ("P1DT", nil), ("PT1e5S", nil), ("PT1..5S", nil), ("T1S", nil),
                                          ("PT1H1H", nil), ("PT" + String(repeating: "9", count: 400) + "S", nil), ("PT5", nil)]
        for (text, seconds) in cases {
            #expect(DASHManifest.seconds(ofDuration: text) == seconds, "\(text.prefix(20))")
        }
        #expect(DASHManifest.ticks(seconds: 7.3, timescale: 48_000) == 350_400)
        #expect(DASHManifest.ticks(seconds: 6.4, timescale: 1) == 7, "segments start at whole units: those before 6.4 start before 7")
        #expect(DASHManifest.ticks(seconds: 1e300, timescale: 1) == nil && DASHManifest.ticks(seconds: -1, timescale: 1) == nil)
    }

    // MARK: - Refusals

    static func mpd(_ template: String, period: String = #"duration="PT10S""#, root: String = #"type="static""#) -> String {
        """
        <?xml version="1.0"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" \(root)>
          <Period \(period)>
            <AdaptationSet>
              <Representation id="r" bandwidth="1">
                \(template)
              </Representation>
            </AdaptationSet>
          </Period>
        </MPD>
        """
    }

    /// The parse error's text, or a failure.
    static func parseError(_ text: String) -> String {
        do {
            _ = try DASHManifest(text: text)
            return "parsed"
        } catch {
            return error.description
        }
    }

    /// The segment listing's error's text, or a failure.
    static func segmentError(_ text: String) throws -> String {
        let manifest = try DASHManifest(text: text)
        let period = try #require(manifest.periods.first)
        let representation = try #require(period.adaptationSets.first?.representations.first)
        do {
            let segments = try manifest.segments(of: representation, in: period)
            return "\(segments.count) segments"
        } catch {
            return error.description
        }
    }

    @Test func malformedTextAndOtherDocumentsAreRefusedWithTheirLine() {
        for (text, expected) in [("not xml", "line 1: not well-formed XML"), ("<MPD>\n<Period>\n</MPD>", "line 3: not well-formed XML"),
                                 ("", "no root element"), ("  \n", "no root element"), ("<html><body/></html>", "the root element is <html>, not <MPD>"),
                                 ("<MPD/><MPD/>", "not well-formed"), ("<MPD/>\u{0}", "not well-formed"), ("<MPD a='1' a='2'/>", "not well-formed"),
                                 ("<?xml version=\"1.0\"?>\n<!DOCTYPE MPD [\n<!ENTITY a \"b\">]><MPD>&a;</MPD>", "line 3: an entity declaration"),
                                 ("<MPD>&undefined;</MPD>", "not well-formed"),
                                 ("<MPD type=\"live\"/>", "MPD@type is \"live\""),
                                 ("<MPD mediaPresentationDuration=\"7.3\"/>", "not an xs:duration"),
                                 (Self.mpd("<SegmentTemplate timescale=\"0\"/>"), "line 6: <SegmentTemplate> has timescale=\"0\", not an integer from 1"),
                                 (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"-5\"/></SegmentTimeline></SegmentTemplate>"), "line 6: <S> has d=\"-5\""),
                                 (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"0\"/></SegmentTimeline></SegmentTemplate>"), "<S> has d=\"0\""),
                                 (Self.mpd("<SegmentTemplate><SegmentTimeline><S t=\"1\"/></SegmentTimeline></SegmentTemplate>"), "<S> has no @d"),
                                 (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"99999999999999999999\"/></SegmentTimeline></SegmentTemplate>"),
                                  "not an integer from 1 to 9223372036854775807"),
                                 (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"1\" r=\"-2\"/></SegmentTimeline></SegmentTemplate>"), "r=\"-2\""),
                                 (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"1.5\"/></SegmentTimeline></SegmentTemplate>"), "d=\"1.5\""),
                                 (Self.mpd("<SegmentTemplate/><SegmentTemplate/>"), "a second <SegmentTemplate>"),
                                 (Self.mpd("<SegmentTemplate presentationTimeOffset=\"-1\"/>"), "presentationTimeOffset=\"-1\""),
                                 (Self.mpd("", period: "duration=\"PT1H1H\""), "line 3: <Period> has duration=\"PT1H1H\""),
                                 (Self.mpd("", period: "start=\"PT\(String(repeating: "9", count: 400))H\""), "not an xs:duration"),
                                 ("<MPD><Period><AdaptationSet><Representation bandwidth=\"1\"/></AdaptationSet></Period></MPD>", "<Representation> has no @id"),
                                 ("<MPD><Period><AdaptationSet audioSamplingRate=\"fast\"/></Period></MPD>", "audioSamplingRate=\"fast\"")] {
            let error = Self.parseError(text)
            #expect(error.contains(expected), "\(text.prefix(120).debugDescription): \(error)")
        }
    }

    @Test func hostileTimelinesAreRefusedBeforeTheyAreExpanded() throws {
        let cases: [(String, String)] = [
            // 10^12 segments, in one S and over several.
            (Self.mpd("<SegmentTemplate><SegmentTimeline><S t=\"0\" d=\"1\" r=\"1000000000000\"/></SegmentTimeline></SegmentTemplate>"),
             "more than 1000000 segments"),
            (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"1\" r=\"600000\"/><S d=\"1\" r=\"600000\"/></SegmentTimeline></SegmentTemplate>"),
             "more than 1000000 segments"),
            (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"1\" r=\"9223372036854775807\"/><S d=\"1\" r=\"9223372036854775807\"/></SegmentTimeline></SegmentTemplate>"),
             "more than 1000000 segments"),
            (Self.mpd("<SegmentTemplate timescale=\"4000000000\"><SegmentTimeline><S d=\"1\" r=\"-1\"/></SegmentTimeline></SegmentTemplate>",
                      period: "duration=\"P1000D\""), "more than 1000000 segments"),
            (Self.mpd("<SegmentTemplate timescale=\"1000000000\" duration=\"1\"/>", period: "duration=\"PT10000S\""), "more than 1000000 segments"),
            // Times and numbers past 64 bits.
            (Self.mpd("<SegmentTemplate><SegmentTimeline><S t=\"9223372036854775000\" d=\"1000\" r=\"1\"/></SegmentTimeline></SegmentTemplate>"), "overflows"),
            (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"4611686018427387904\" r=\"2\"/></SegmentTimeline></SegmentTemplate>"), "overflows"),
            (Self.mpd("<SegmentTemplate startNumber=\"9223372036854775807\"><SegmentTimeline><S d=\"1\" r=\"1\"/></SegmentTimeline></SegmentTemplate>"),
             "overflows"),
            (Self.mpd("<SegmentTemplate presentationTimeOffset=\"9223372036854775807\"><SegmentTimeline><S d=\"1\" r=\"-1\"/></SegmentTimeline></SegmentTemplate>"),
             "overflows"),
            (Self.mpd("<SegmentTemplate timescale=\"9223372036854775807\" duration=\"1\"/>", period: "duration=\"P10000D\""), "out of range"),
            (Self.mpd("<SegmentTemplate presentationTimeOffset=\"9223372036854775807\" duration=\"2\"/>"), "overflows"),
            // Open repeats with nowhere to end.
            (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"1\" r=\"-1\"/><S d=\"1\"/></SegmentTimeline></SegmentTemplate>"), "that S has no @t"),
            (Self.mpd("<SegmentTemplate><SegmentTimeline><S t=\"10\" d=\"1\" r=\"-1\"/><S t=\"5\" d=\"1\"/></SegmentTimeline></SegmentTemplate>"),
             "which is not after it"),
            (Self.mpd("<SegmentTemplate><SegmentTimeline><S t=\"20\" d=\"1\" r=\"-1\"/></SegmentTimeline></SegmentTemplate>"), "which is not after it"),
            (Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"1\" r=\"-1\"/></SegmentTimeline></SegmentTemplate>", period: "", root: "type=\"dynamic\""),
             "needs the Period's length"),
            (Self.mpd("<SegmentTemplate duration=\"1\"/>", period: "", root: "type=\"dynamic\""), "needs the Period's length"),
            (Self.mpd("<SegmentList/>"), "SegmentList (line 6) addressing is not read"),
            (Self.mpd(""), "no SegmentTemplate"),
        ]
        for (text, expected) in cases {
            let error = try Self.segmentError(text)
            #expect(error.contains(expected), "\(text.debugDescription): \(error)")
            #expect(error.contains("Representation r (line 5)"), "\(error)")
        }
        // Within the limits: exactly the maximum, and one segment without a timeline or duration.
        #expect(try Self.segmentError(Self.mpd("<SegmentTemplate><SegmentTimeline><S d=\"1\" r=\"999999\"/></SegmentTimeline></SegmentTemplate>"))
                    == "1000000 segments")
        #expect(try Self.segmentError(Self.mpd("<SegmentTemplate media=\"all.mp4\"/>")) == "1 segments")
    }

    @Test func segmentsRecheckWhatACallerChanged() throws {
        var manifest = try DASHManifest(text: Self.mpd("<SegmentTemplate duration=\"2\"/>"))
        manifest.periods[0].adaptationSets[0].representations[0].segmentTemplate?.timescale = 0
        let period = manifest.periods[0]
        #expect(throws: PipelineError.self) { try manifest.segments(of: period.adaptationSets[0].representations[0], in: period) }
        manifest.periods[0].adaptationSets[0].representations[0].segmentTemplate?.timescale = 1
        manifest.periods[0].adaptationSets[0].representations[0].segmentTemplate?.timeline = [Entry(time: -1, duration: 1, repeatCount: 0)]
        let changed = manifest.periods[0]
        #expect(throws: PipelineError.self) { try manifest.segments(of: changed.adaptationSets[0].representations[0], in: changed) }
    }

    // MARK: - Mutation fuzzing

    /// FFmpeg 5.1's MPD for `sine=f=440:d=7.3:r=48000`, 2 s segments, as the test above generates it.
    static let ffmpegMPD = """
        <?xml version="1.0" encoding="utf-8"?>
        <MPD xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
        \txmlns="urn:mpeg:dash:schema:mpd:2011"
        \txmlns:xlink="http://www.w3.org/1999/xlink"
        \txsi:schemaLocation="urn:mpeg:DASH:schema:MPD:2011 http://standards.iso.org/ittf/PubliclyAvailableStandards/MPEG-DASH_schema_files/DASH-MPD.xsd"
        \tprofiles="urn:mpeg:dash:profile:isoff-live:2011"
        \ttype="static"
        \tmediaPresentationDuration="PT7.3S"
        \tmaxSegmentDuration="PT2.0S"
        \tminBufferTime="PT4.0S">
        \t<ProgramInformation>
        \t</ProgramInformation>
        \t<ServiceDescription id="0">
        \t</ServiceDescription>
        \t<Period id="0" start="PT0.0S">
        \t\t<AdaptationSet id="0" contentType="audio" startWithSAP="1" segmentAlignment="true" bitstreamSwitching="true">
        \t\t\t<Representation id="0" mimeType="audio/mp4" codecs="mp4a.40.2" bandwidth="128000" audioSamplingRate="48000">
        \t\t\t\t<AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="2" />
        \t\t\t\t<SegmentTemplate timescale="48000" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1">
        \t\t\t\t\t<SegmentTimeline>
        \t\t\t\t\t\t<S t="0" d="95232" />
        \t\t\t\t\t\t<S d="96256" r="1" />
        \t\t\t\t\t\t<S d="62656" />
        \t\t\t\t\t</SegmentTimeline>
        \t\t\t\t</SegmentTemplate>
        \t\t\t</Representation>
        \t\t</AdaptationSet>
        \t</Period>
        </MPD>

        """

    /// What a mutation inserts: numbers at the edges, open repeats, durations, markup.
    static let tokens = ["9223372036854775807", "9223372036854775808", "99999999999999999999", "-1", "0", "1000000000000", "999999", "4294967295",
                         " r=\"-1\"", " r=\"999999\"", " t=\"9223372036854775000\"", " d=\"1\"", "<S d=\"1\" r=\"-1\"/>", "<S t=\"0\" d=\"1\" r=\"1000000000000\"/>",
                         "PT1e9S", "P99999999999999999999D", "PT0.0000001S", "PT9999999999H", "$Time$", "$Number%032d$", "$Foo$", "$", "%0",
                         "<SegmentTemplate duration=\"1\"/>", "<SegmentTimeline>", "</SegmentTimeline>", "<Period>", "</Period>", "<SegmentBase/>",
                         "<![CDATA[", "]]>", "&amp;", "&#0;", "<!ENTITY", "\"", "<", ">", "/>", "\n", "\u{0}", "é"]

    /// Attributes a mutation writes into a start tag: the timeline's and template's, at the edges.
    static let attributes = [" r=\"-1\"", " r=\"999999\"", " r=\"1000000000000\"", " t=\"9223372036854775000\"", " t=\"0\"", " d=\"1\"",
                             " d=\"9223372036854775807\"", " duration=\"1\"", " duration=\"PT9999999999H\"", " startNumber=\"9223372036854775807\"",
                             " timescale=\"4294967295\"", " presentationTimeOffset=\"9223372036854775807\"", " media=\"$Time%032d$\"",
                             " start=\"P99999D\"", " mediaPresentationDuration=\"PT0S\""]

    /// `text` with one or two mutations: bytes changed, deleted or inserted, tokens and attributes
    /// inserted, whole `…/>` lines (S elements, templates) duplicated or deleted, numbers replaced
    /// by large ones, the text cut short.
    static func mutate(_ text: String, _ random: inout SplitMix64) -> String {
        var bytes = Array(text.utf8)
        for _ in 0..<Int.random(in: 1...2, using: &random) {
            let at = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            // A random line that is a whole element (`<S d="1"/>`), else the line around `at`.
            var lines: [Range<Int>] = []
            var lineStart = 0
            for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
                if String(decoding: bytes[lineStart..<index], as: UTF8.self).hasSuffix("/>") { lines.append(lineStart..<index + 1) }
                lineStart = index + 1
            }
            let line = lines.randomElement(using: &random)
                ?? ((bytes[..<at].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0)..<(bytes[at...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count))
            switch Int.random(in: 0..<16, using: &random) {
            case 0 where !bytes.isEmpty: bytes[at] = UInt8.random(in: 0...255, using: &random)
            case 1 where !bytes.isEmpty: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &random)))
            case 2, 3: bytes.insert(contentsOf: Array(tokens.randomElement(using: &random)!.utf8), at: at)
            case 4, 5:
                // An attribute before the end of the next start tag.
                if let close = bytes[at...].firstIndex(of: UInt8(ascii: ">")) {
                    let end = close > 0 && bytes[close - 1] == UInt8(ascii: "/") ? close - 1 : close
                    bytes.insert(contentsOf: Array(attributes.randomElement(using: &random)!.utf8), at: end)
                }
            case 6...8: bytes.insert(contentsOf: Array(bytes[line]), at: line.lowerBound)
            case 9...11: bytes.removeSubrange(line)
            case 12...14 where !bytes.isEmpty:
                // A digit run replaced by a large number.
                if let digit = bytes[at...].firstIndex(where: { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                    let end = bytes[digit...].firstIndex(where: { $0 < UInt8(ascii: "0") || $0 > UInt8(ascii: "9") }) ?? bytes.count
                    bytes.replaceSubrange(digit..<end, with: Array(["9223372036854775807", "4294967295", "1000000000000", "0", "999999"]
                        .randomElement(using: &random)!.utf8))
                }
            case 15 where !bytes.isEmpty: bytes = Array(bytes.prefix(at))
            default: break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func mutatedManifestsNeverTrapAndNeverListTooManySegments() {
        var random = SplitMix64(state: 21)
        let seeds = [StreamManifests.mpd(Self.ourRenditions), Self.ffmpegMPD, Self.features]
        var parsed = 0
        var listed = 0
        for round in 0..<6000 {
            let seed = seeds[round % seeds.count]
            let text = round < seeds.count ? seed : Self.mutate(seed, &random)
            let manifest: DASHManifest
            do {
                manifest = try DASHManifest(text: text)
            } catch {
                // Typed: every refusal is a PipelineError with a message.
                #expect(!error.description.isEmpty)
                continue
            }
            parsed += 1
            for period in manifest.periods {
                _ = manifest.duration(of: period)
                for representation in period.adaptationSets.flatMap(\.representations) {
                    guard let segments = try? manifest.segments(of: representation, in: period) else { continue }
                    listed += 1
                    #expect(segments.count <= DASHManifest.maximumSegmentCount, "round \(round)")
                    for segment in segments.prefix(2) + segments.suffix(1) {
                        for template in [representation.segmentTemplate?.media, representation.segmentTemplate?.initialization].compactMap({ $0 }) {
                            _ = try? DASHManifest.expand(template, representationID: representation.id, number: segment.number, time: segment.time,
                                                         bandwidth: representation.bandwidth)
                        }
                    }
                }
            }
        }
        #expect(parsed > 3000, "most mutants still parse: \(parsed)")
        #expect(listed > 3000, "and most of those list their segments: \(listed)")
    }

    /// Issue 22: a malformed MPD is a container error with the byte offset the XML reader found,
    /// and validating the file adds its path, keeping the code.
    @Test func aMalformedMPDIsAContainerErrorWithItsOffsetAndPath() throws {
        let text = "<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\"><Period></MPD>"
        #expect {
            _ = try DASHManifest(text: text)
        } throws: { error in
            guard let error = error as? PipelineError else { return false }
            return error.code == .container && (error.offset ?? -1) > 20 && error.description.contains("line 2")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("DASHManifestTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("bad.mpd").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            _ = try DASHValidation.findings(forManifest: FilePath(path))
        } throws: { error in
            guard let error = error as? PipelineError else { return false }
            return error.code == .container && error.path == FilePath(path) && error.offset != nil && error.description.hasPrefix(path)
        }
    }
}
