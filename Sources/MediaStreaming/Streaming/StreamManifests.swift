public import MP4
internal import MediaFormats
/// The manifests that name several renditions or describe them for DASH: an HLS master playlist
/// (RFC 8216 4.3.4.2, `EXT-X-STREAM-INF`) and a static MPEG-DASH MPD (ISO/IEC 23009-1, with a
/// `SegmentTemplate` and `SegmentTimeline` over the same CMAF segments).
public enum StreamManifests {
    /// One rendition as the manifests name it.
    public struct Rendition: Sendable, Hashable {
        /// The rendition's directory, relative to the manifests (empty for the same directory).
        public var path: String
        /// Its media playlist's name.
        public var playlist: String
        /// Its segments: sizes in bytes and durations in media units.
        public var segments: [(bytes: Int, duration: Int64)]
        /// The media timescale.
        public var timescale: Int
        /// Channels.
        public var channelCount: Int
        /// The codec's sample entry, the part of ``codecs`` before its first dot (`mp4a` for
        /// every AAC profile, `Opus`, `fLaC`, `alac`).
        public var sampleEntryCodec: String { String(codecs.prefix { $0 != "." }) }
        /// The RFC 6381 codec string: `mp4a.40.2` for AAC-LC, `mp4a.40.5` for HE-AAC,
        /// `mp4a.40.29` for HE-AAC v2 (``StreamManifests/codecs(of:describedBy:)``).
        public var codecs: String
        /// The encoder's priming, in media units: the edit's `media_time`, which the MPD's
        /// timeline starts after.
        public var priming: Int64
        /// The samples presented (after the priming, before the padding), when known.
        public var validLength: Int64?
        /// The init segment the MPD names: `init.mp4`, or the DASH header
        /// (``HLSSegmentOutput/dashHeaderName``) when the rendition has one.
        public var dashInitialization = "init.mp4"
        /// The event messages its segments carry (``HLSSegmentOutput/writtenMessages``): the MPD
        /// declares their schemes as `InbandEventStream`s but SCTE-35's, whose cues it gives as
        /// an `EventStream` of the period instead.
        public var messages: [EventMessage] = []

        /// A rendition.
        public init(path: String, playlist: String = "index.m3u8", segments: [(bytes: Int, duration: Int64)], timescale: Int, channelCount: Int,
                    codecs: String = "mp4a.40.2", priming: Int64) {
            self.path = path
            self.playlist = playlist
            self.segments = segments
            self.timescale = timescale
            self.channelCount = channelCount
            self.codecs = codecs
            self.priming = priming
        }

        /// Renditions are equal when their names, timescale, codec and segments are.
        public static func == (lhs: Rendition, rhs: Rendition) -> Bool {
            lhs.path == rhs.path && lhs.playlist == rhs.playlist && lhs.timescale == rhs.timescale && lhs.codecs == rhs.codecs
                && lhs.segments.map(\.bytes) == rhs.segments.map(\.bytes) && lhs.segments.map(\.duration) == rhs.segments.map(\.duration)
        }

        /// Hashes the rendition's names.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(path)
            hasher.combine(playlist)
        }

        /// `BANDWIDTH`: the peak segment bit rate, bits per second (RFC 8216 4.3.4.2): the
        /// largest bit rate of any run of consecutive segments lasting 0.5 to 1.5 target
        /// durations (4.1), so that a short last segment, whose boxes weigh on few samples,
        /// counts with the one before it; a single segment when no run lasts that long.
        public var peakBitrate: Int {
            let scale = Double(max(timescale, 1))
            let longest = Double(segments.map(\.duration).max() ?? 0) / scale
            let peak = HLSPeakBitrate.of(sizes: segments.map { Int64($0.bytes) }, durations: segments.map { Double($0.duration) / scale },
                                         targetDuration: max(1, longest.rounded()))
            return Int(peak.rounded(.up))
        }

        /// `AVERAGE-BANDWIDTH`: all the segments' bits over their duration.
        public var averageBitrate: Int {
            let bits = segments.reduce(0) { $0 + $1.bytes * 8 }
            let duration = segments.reduce(Int64(0)) { $0 + $1.duration }
            return Int((Double(bits) * Double(timescale) / Double(max(duration, 1))).rounded(.up))
        }

        /// The media duration in seconds.
        public var seconds: Double { Double(segments.reduce(Int64(0)) { $0 + $1.duration }) / Double(max(timescale, 1)) }

        var prefix: String { path.isEmpty ? "" : path + "/" }
    }

    /// The RFC 6381 codec string of packets of `format` (RFC 6381 3.3), as the first of
    /// `descriptions` describing its codec names it: for AAC (ISO/IEC 14496-3 1.5.1.1)
    /// `mp4a.40.5` when its AudioSpecificConfig signals SBR (HE-AAC), `mp4a.40.29` for PS
    /// (HE-AAC v2), else `mp4a.40.` and its object type; `mp4a.40.2` (AAC-LC) when the format is
    /// not known, and the codec's own name when no description names it.
    public static func codecs(of format: EncodedAudioFormat?, describedBy descriptions: [AudioCodecDescription] = [.aac]) -> String {
        guard let format else { return "mp4a.40.2" }
        guard let description = descriptions.matching(format.codec) else { return format.codec == .aac ? "mp4a.40.2" : format.codec.name }
        return description.codecsParameter(format)
    }

    /// The HLS master playlist naming `renditions`, highest bandwidth first.
    public static func masterPlaylist(_ renditions: [Rendition]) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        for rendition in renditions.sorted(by: { $0.peakBitrate > $1.peakBitrate }) {
            lines.append("#EXT-X-STREAM-INF:BANDWIDTH=\(rendition.peakBitrate),AVERAGE-BANDWIDTH=\(rendition.averageBitrate),"
                         + "CODECS=\"\(rendition.codecs)\"")
            lines.append(rendition.prefix + rendition.playlist)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A static MPD (ISO/IEC 23009-1, `isoff-live` profile) with an audio adaptation set per
    /// codec (its sample entry: `mp4a` for every AAC profile, `Opus`, `fLaC`, `alac`; DASH-IF's
    /// interoperability points switch within a set only between representations of one codec)
    /// whose representations are `renditions`: ``Rendition/dashInitialization`` and `segment-$Number%05d$.m4s` in each
    /// rendition's directory, their times in a `SegmentTimeline`. The times are the media's
    /// presentation times, after the init's edit that skips the priming (5.3.9.6; 14496-12's
    /// presentation times): the first segment starts at 0, shortened by the priming, and the
    /// rest at their `tfdt` less it; no `presentationTimeOffset`. A player that applies the edit
    /// (Chromium's MSE) and the offset (dash.js, Shaka) would skip the priming twice were it
    /// the offset too.
    public static func mpd(_ renditions: [Rendition]) -> String {
        // The presented length: without the priming and the padding, when known.
        let duration = renditions.map { rendition in rendition.validLength.map { Double($0) / Double(max(rendition.timescale, 1)) } ?? rendition.seconds }.max() ?? 0
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="static" \
            mediaPresentationDuration="PT\(fixed(duration, digits: 3))S" minBufferTime="PT2S">
              <Period id="0" start="PT0S">

            """
        // The sets in the order their codecs first appear; each representation keeps its index.
        var codecs: [String] = []
        for rendition in renditions where !codecs.contains(rendition.sampleEntryCodec) { codecs.append(rendition.sampleEntryCodec) }
        xml += eventStream(renditions.first?.messages ?? [])
        for (set, codec) in codecs.enumerated() {
            xml += """
                <AdaptationSet id="\(set)" contentType="audio" mimeType="audio/mp4" segmentAlignment="true" startWithSAP="1" lang="und">

            """
            // The schemes of the event messages in the segments (ISO/IEC 23009-1 5.10.3.2).
            var schemes: [String] = []
            let carried = renditions.first(where: { $0.sampleEntryCodec == codec })?.messages ?? []
            // SCTE-35 cues go in the period's EventStream alone: a client that dispatched both
            // would take each break twice.
            for message in carried where !schemes.contains(message.scheme) && message.scheme != EventMessage.scte35Scheme {
                schemes.append(message.scheme)
            }
            for scheme in schemes {
                xml += "      <InbandEventStream schemeIdUri=\"\(escaped(scheme))\" value=\"\"/>\n"
            }
            for (index, rendition) in renditions.enumerated() where rendition.sampleEntryCodec == codec {
                xml += representation(rendition, id: index)
            }
            xml += """
                </AdaptationSet>

            """
        }
        xml += """
              </Period>
            </MPD>

            """
        return xml
    }

    /// The period's `EventStream` of the SCTE-35 cues among `messages` (SCTE 214-1 6.7.2:
    /// scheme `urn:scte:scte35:2014:xml+bin`, each cue's section in base64 in a `Signal`'s
    /// `Binary`), at their presentation times; nothing without one.
    static func eventStream(_ messages: [EventMessage]) -> String {
        let cues = messages.filter { $0.scheme == EventMessage.scte35Scheme }
        guard let timescale = cues.first?.timescale else { return "" }
        var xml = "    <EventStream schemeIdUri=\"urn:scte:scte35:2014:xml+bin\" timescale=\"\(timescale)\">\n"
        for cue in cues {
            xml += "      <Event presentationTime=\"\(cue.presentationTime)\" id=\"\(cue.id)\">"
                + "<Signal xmlns=\"http://www.scte.org/schemas/35/2016\"><Binary>\(Base64.encode(cue.data))</Binary></Signal></Event>\n"
        }
        return xml + "    </EventStream>\n"
    }

    /// `text` with XML's five special characters escaped.
    static func escaped(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
            .replacing("'", with: "&apos;")
    }

    /// One `Representation` of ``mpd(_:)``, `id` its index among all the renditions.
    private static func representation(_ rendition: Rendition, id index: Int) -> String {
        var xml = """
                  <Representation id="\(index)" bandwidth="\(rendition.peakBitrate)" codecs="\(rendition.codecs)" audioSamplingRate="\(rendition.timescale)">
                    <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="\(rendition.channelCount)"/>
                    <SegmentTemplate timescale="\(rendition.timescale)" \
            initialization="\(rendition.prefix)\(rendition.dashInitialization)" media="\(rendition.prefix)segment-$Number%05d$.m4s" startNumber="1">
                      <SegmentTimeline>

            """
        // Presentation times: the decode times less the priming, the first segment from 0.
        var decodeTime: Int64 = 0
        var runs: [(start: Int64, duration: Int64, repeats: Int)] = []
        for segment in rendition.segments {
            let start = max(0, decodeTime - rendition.priming)
            let duration = max(0, decodeTime + segment.duration - rendition.priming) - start
            if let last = runs.last, last.duration == duration {
                runs[runs.count - 1].repeats += 1
            } else {
                runs.append((start, duration, 0))
            }
            decodeTime += segment.duration
        }
        for (number, run) in runs.enumerated() {
            let start = number == 0 ? " t=\"\(run.start)\"" : ""
            let repeats = run.repeats > 0 ? " r=\"\(run.repeats)\"" : ""
            xml += "                <S\(start) d=\"\(run.duration)\"\(repeats)/>\n"
        }
        xml += """
                      </SegmentTimeline>
                    </SegmentTemplate>
                  </Representation>

            """
        return xml
    }
}
