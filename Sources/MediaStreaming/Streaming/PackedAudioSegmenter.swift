internal import MP4
internal import AACBitstream
internal import AudioBitstreams

/// What an HLS rendition's segments are made of.
public enum HLSSegmentFormat: String, Sendable, Hashable, CaseIterable {
    /// CMAF (ISO/IEC 23000-19): an init segment and fMP4 segments (`.m4s`), any codec the
    /// muxer describes, gapless through the init segment's edit.
    case cmaf
    /// Packed audio (RFC 8216 3.4): elementary ADTS AAC (`.aac`) behind an ID3 tag whose
    /// `PRIV` `com.apple.streaming.transportStreamTimestamp` gives the first frame's 90 kHz
    /// timestamp; no init segment. Every player reads it, Safari and old ones included; it
    /// signals no priming, so a player presents the encoder's priming at the start and its
    /// padding at the end.
    case packedAudio = "packed-audio"
}

/// The parts of a segment maker ``HLSSegmentOutput`` uses whatever the format.
protocol HLSSegmentMaker: AnyObject {
    /// Units per second of the decode times (the sample rate).
    var timescale: Int32 { get }
    /// The decode time of the segment being built.
    var nextDecodeTime: Int64 { get }
    /// Media units appended since the last cut.
    var pendingDuration: Int64 { get }
    /// Adds a packet to the segment being built.
    func append(_ sample: MediaSample)
}

extension CMAFSegmenter: HLSSegmentMaker {}

/// Makes packed-audio segments (RFC 8216 3.4) of AAC packets: each segment an ID3v2.4 tag with
/// the `PRIV` frame `com.apple.streaming.transportStreamTimestamp` (the 33-bit MPEG-2 timestamp
/// of its first frame, 90 kHz, in the last 8 of its bytes), then ADTS frames (ISO/IEC 14496-3
/// 1.A.2.2), with timed metadata as ID3 tags between the frames, each before the frame whose
/// time holds it (Apple's "Timed Metadata for HTTP Live Streaming").
///
/// Not `Sendable`: one thread at a time appends.
final class PackedAudioSegmenter: HLSSegmentMaker {
    let timescale: Int32
    private(set) var nextDecodeTime: Int64 = 0
    private(set) var pendingDuration: Int64 = 0
    /// Each frame appended since the last cut: its ADTS bytes and decode time.
    private var frames: [(bytes: [UInt8], decodeTime: Int64)] = []
    private var sequence: UInt32 = 0
    private let header: ADTSHeader
    /// The owner of the `PRIV` frame that gives a segment's timestamp (RFC 8216 3.4).
    static let timestampOwner = "com.apple.streaming.transportStreamTimestamp"

    /// A segmenter for AAC packets of `format`.
    ///
    /// - Throws: ``/MediaCore/PipelineError/Code/unsupported`` for packets that are not AAC or
    ///   whose configuration ADTS cannot carry.
    init(format: FormatDescription) throws(PipelineError) {
        guard case .audio(let audio) = format, audio.codec == .aac else {
            throw .unsupported("packed audio (RFC 8216 3.4) carries AAC in ADTS; the stream is \(format)")
        }
        do {
            let config = try AudioSpecificConfig(bytes: audio.decoderConfiguration)
            header = try ADTSHeader(audioSpecificConfig: config, frameLength: 7)
        } catch {
            throw .unsupported("packed audio: ADTS cannot carry this AAC configuration: \(error)")
        }
        timescale = Int32(clamping: audio.sampleRate)
    }

    /// The first packet ADTS could not frame (longer than `aac_frame_length` allows).
    private(set) var failure: PipelineError?

    /// Adds a packet: its ADTS frame (a packet too long for one is ``failure``).
    func append(_ sample: MediaSample) {
        let duration = max(0, (try? sample.duration.converted(to: timescale, rounding: .nearest).value) ?? 0)
        var frame = header
        frame.frameLength = 7 + sample.data.count
        do {
            frames.append((try frame.serialized() + sample.data, nextDecodeTime + pendingDuration))
        } catch {
            if failure == nil { failure = .unsupported("packed audio: a packet of \(sample.data.count) bytes: \(error)") }
        }
        pendingDuration += duration
    }

    /// The `PRIV` timestamp tag of a segment whose first frame decodes at `decodeTime`, with
    /// `frames` after it (the timed metadata of the segment's start).
    static func timestampTag(decodeTime: Int64, timescale: Int32, frames: [ID3v2Tag.Frame] = []) -> [UInt8] {
        let pts = UInt64(max(0, decodeTime)) * 90_000 / UInt64(max(timescale, 1)) & ((1 << 33) - 1)
        var body = Array(timestampOwner.utf8) + [0]
        for shift in stride(from: 56, through: 0, by: -8) { body.append(UInt8(truncatingIfNeeded: pts >> UInt64(shift))) }
        return ID3v2Tag(frames: [.other(id: "PRIV", flags: 0, body: body)] + frames).bytes()
    }

    /// The frames appended since the last cut as a segment: the timestamp tag, then the frames,
    /// each of `metadata` (ID3 tags, with decode times) before the first frame that decodes at
    /// or after its time (after the last frame when none does); `nil` when nothing was appended.
    /// The frames of a tag whose time is the segment's start go in the timestamp tag: a segment
    /// starts with one ID3 tag, then ADTS (GStreamer's HLS demuxer finds no stream type behind
    /// a second tag there).
    func cutSegment(metadata: [(tag: [UInt8], decodeTime: Int64)]) -> CMAFSegment? {
        guard !frames.isEmpty else { return nil }
        sequence += 1
        var pending = metadata[...]
        var leading: [ID3v2Tag.Frame] = []
        while let first = pending.first, first.decodeTime <= nextDecodeTime, let tag = try? ID3v2Tag(bytes: first.tag) {
            leading += tag.frames
            pending = pending.dropFirst()
        }
        var bytes = Self.timestampTag(decodeTime: nextDecodeTime, timescale: timescale, frames: leading)
        for frame in frames {
            while let first = pending.first, first.decodeTime <= frame.decodeTime {
                bytes += first.tag
                pending = pending.dropFirst()
            }
            bytes += frame.bytes
        }
        for rest in pending { bytes += rest.tag }
        let segment = CMAFSegment(bytes: bytes, sequenceNumber: sequence, baseDecodeTime: nextDecodeTime, duration: pendingDuration,
                                  sampleCount: frames.count, timescale: timescale)
        nextDecodeTime += pendingDuration
        pendingDuration = 0
        frames.removeAll(keepingCapacity: true)
        return segment
    }
}

/// Not `Sendable`: appending mutates the segment being built.
@available(*, unavailable)
extension PackedAudioSegmenter: Sendable {}
