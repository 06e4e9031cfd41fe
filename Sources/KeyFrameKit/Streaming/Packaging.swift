public import SystemPackage

/// Packaging audio for HTTP streaming: `keyframe package`.
///
/// Composition: AAC input (M4A/MP4 or ADTS, stream-copied) → ``HLSSegmentOutput``; or any other
/// input (``AudioFileInput``) → ``/AudioCodec/PCMResampler`` → ``/AudioCodec/AACEncoder`` →
/// ``HLSSegmentOutput``; around the ``Pump``.
public enum Packaging {
    /// How a rendition is made.
    public struct Options: Sendable {
        /// The wanted segment length, in seconds.
        public var segmentDuration: Double
        /// Encode at this bitrate (bits per second); `nil` stream-copies an AAC input and encodes
        /// anything else at 128 kb/s.
        public var bitrate: Int?

        /// Options: 6-second segments, AAC copied.
        public init(segmentDuration: Double = 6, bitrate: Int? = nil) {
            self.segmentDuration = segmentDuration
            self.bitrate = bitrate
        }
    }

    /// What a packaging wrote.
    public struct Summary: Sendable {
        /// The playlist written.
        public var playlist: FilePath
        /// The segments: their durations in seconds.
        public var segmentDurations: [Double]
        /// `EXT-X-TARGETDURATION`.
        public var targetDuration: Int
        /// Whether the AAC was copied (else encoded).
        public var copied: Bool
    }

    /// Packages `input` as an HLS rendition in `directory`: `index.m3u8`, `init.mp4` and CMAF
    /// segments, written atomically, the playlist last. Nothing is left on an error.
    public static func hls(_ input: FilePath, to directory: FilePath, options: Options = Options(), control: JobControl? = nil,
                           progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        let kind = MediaFileFormat.detect(input)
        let aac: AACTrackLayout? = if options.bitrate == nil, kind == .adts || kind == .mp4 { try? AACTrackLayout(path: input) } else { nil }
        if let layout = aac {
            var sink = try HLSSegmentOutput(directory: directory, segmentDuration: options.segmentDuration,
                                            gapless: .known(priming: layout.priming, validLength: layout.validLength))
            var packets = try AudioPacketInput(path: input, purpose: .remuxing)
            _ = try Pump.run(from: &packets, into: &sink, control: control, progress: progress)
            return summary(of: sink, copied: true)
        }
        let source = try AudioFileInput(path: input)
        let resampler = PCMResampler(sampleFormat: .float32, allowedSampleRates: AACEncoder.supportedSampleRates)
        let encoder: AACEncoder
        do { encoder = try AACEncoder(bitrate: options.bitrate ?? 128_000) } catch { throw .codec(error) }
        var sink = try HLSSegmentOutput(directory: directory, segmentDuration: options.segmentDuration, gapless: .encoder(encoder))
        var chain = source.transformed(by: resampler).transformed(by: encoder)
        _ = try Pump.run(from: &chain, into: &sink, control: control, progress: progress)
        return summary(of: sink, copied: false)
    }

    private static func summary(of sink: HLSSegmentOutput, copied: Bool) -> Summary {
        Summary(playlist: sink.directory.appending(sink.playlistName), segmentDurations: sink.segments.map(\.seconds),
                targetDuration: sink.playlist?.targetDuration ?? 0, copied: copied)
    }
}
