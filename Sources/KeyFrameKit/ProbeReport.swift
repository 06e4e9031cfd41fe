/// What `keyframe probe --json` prints: one object describing a media file (DESIGN.md, "The
/// command line").
///
/// Damage is kept as typed ``/MediaCore/DamageEvent`` values; the JSON carries each event's sentence, so
/// `damage` is an array of strings there (the contract of DESIGN.md). The JSON is therefore not
/// decoded back into a report.
public struct ProbeReport: Encodable, Sendable, Hashable {
    /// One track of the file.
    public struct Track: Codable, Sendable, Hashable {
        /// Track id (1 for an elementary stream).
        public var id: Int
        /// `"audio"` or `"video"`.
        public var type: String
        /// `"aac"`, `"h264"`, `"hevc"`, `"opus"`, …
        public var codec: String
        /// Packets (ADTS frames, MP4 samples).
        public var sampleCount: Int
        /// Seconds, computed exactly from the packets.
        public var duration: Double
        /// Audio: output sample rate in Hz.
        public var sampleRate: Int?
        /// Audio: output channels.
        public var channels: Int?
        /// Audio: `"LC"`, `"HE-AAC"`, `"Main"`, …
        public var profile: String?
        /// Audio: PCM frames of encoder delay at the start, when known.
        public var priming: Int?
        /// Audio: PCM frames of padding at the end, when known.
        public var remainder: Int?
        /// Audio: PCM frames the packets decode to, before any trimming.
        public var decodedFrames: Int64?
        /// Average bitrate in bits per second over the packets.
        public var bitrate: Int?
        /// Video: width in pixels after the track's transform.
        public var width: Int?
        /// Video: height in pixels after the track's transform.
        public var height: Int?
        /// Video: the track matrix as words (`identity`, `rotate 90`, `rotate 270, mirrored`, …).
        public var transform: String?
        /// Why the track cannot be read, when it cannot.
        public var damage: String?
        /// Seconds that can be read, when less than ``duration`` declares: a file cut short
        /// keeps a `moov` that describes samples past its end. `nil` for a whole track.
        public var readableDuration: Double?

        /// A track.
        public init(id: Int, type: String, codec: String, sampleCount: Int, duration: Double) {
            self.id = id
            self.type = type
            self.codec = codec
            self.sampleCount = sampleCount
            self.duration = duration
        }
    }

    /// `"adts"`, `"mp4"`.
    public var format: String
    /// Seconds: the longest track's, as declared.
    public var duration: Double
    /// Seconds that can be read, when less than ``duration``: the longest track's readable
    /// length. `nil` for a whole file.
    public var readableDuration: Double?
    /// The tracks.
    public var tracks: [Track]
    /// Bytes skipped because they were not part of the format (garbage between frames).
    public var bytesSkipped: Int64
    /// Bytes of metadata tags skipped (ID3v2 before ADTS).
    public var tagBytes: Int64
    /// Damage found, each with its kind, its byte offset where known and a sentence naming the
    /// box path or offset (at most ``damageLimit`` listed).
    public var damage: [DamageEvent]
    /// How many damage events there were in all.
    public var damageCount: Int
    /// MP4: the `ftyp` major brand.
    public var brand: String?
    /// MP4: whether samples come from movie fragments.
    public var fragmented: Bool?
    /// MP4: `udta/meta/ilst` tags (`©nam`, `©ART`, `©too`, `----:com.apple.iTunes:iTunSMPB`, …).
    public var tags: [String: String]?
    /// EBU R 128 loudness of the audio (`probe --loudness`), when measured.
    public var loudness: Loudness?
    /// `true` when the report was made from the container's headers alone
    /// (``init(libavformatHeadersOf:named:)``: an object in a store, read in ranges): no packet
    /// was read or counted, so each track's `sampleCount` is 0, no damage was looked for, and
    /// ``duration`` is what the container declares — or, when ``durationEstimated`` is `true`,
    /// libavformat's estimate from the bitrate. `nil` (left out of the JSON) for a report of
    /// the packets.
    public var headersOnly: Bool?
    /// `true` when ``duration`` is estimated from the bitrate and the file's size, the
    /// container declaring no length (a headers-only report of an MP3 without a Xing header).
    /// `nil` (left out of the JSON) otherwise.
    public var durationEstimated: Bool?

    /// How many damage sentences a report lists.
    public static let damageLimit = 100

    /// A report.
    public init(format: String, duration: Double, tracks: [Track], bytesSkipped: Int64 = 0, tagBytes: Int64 = 0,
                damage: [DamageEvent] = [], damageCount: Int = 0) {
        self.format = format
        self.duration = duration
        self.tracks = tracks
        self.bytesSkipped = bytesSkipped
        self.tagBytes = tagBytes
        self.damage = damage
        self.damageCount = damageCount
    }

    private enum CodingKeys: String, CodingKey {
        case format, duration, readableDuration, tracks, bytesSkipped, tagBytes, damage, damageCount, brand, fragmented, tags, loudness
        case headersOnly, durationEstimated
    }

    /// Encodes the report; each damage event as its sentence.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(duration, forKey: .duration)
        try container.encodeIfPresent(readableDuration, forKey: .readableDuration)
        try container.encode(tracks, forKey: .tracks)
        try container.encode(bytesSkipped, forKey: .bytesSkipped)
        try container.encode(tagBytes, forKey: .tagBytes)
        try container.encode(damage.map(\.message), forKey: .damage)
        try container.encode(damageCount, forKey: .damageCount)
        try container.encodeIfPresent(brand, forKey: .brand)
        try container.encodeIfPresent(fragmented, forKey: .fragmented)
        try container.encodeIfPresent(loudness, forKey: .loudness)
        try container.encodeIfPresent(tags, forKey: .tags)
        try container.encodeIfPresent(headersOnly, forKey: .headersOnly)
        try container.encodeIfPresent(durationEstimated, forKey: .durationEstimated)
    }
}

extension ProbeReport {
    /// The report of a file KeyFrameKit's own readers do not describe (MP3, FLAC, Ogg, WAV, …)
    /// from its container's headers alone (``/AudioCodec/AudioFileDecoder/headerSummary(of:named:)``),
    /// for bytes that are dear to read, such as an object in a store read in ranges: `format`
    /// is libavformat's container name, one audio track with the codec, rate, channels, the
    /// length the container declares and the bitrate where it says; for an MP3 with an Info tag
    /// (``/AudioBitstreams/MP3InfoTag``), the length presented and the priming and remainder
    /// decoders drop; for Ogg Opus, the pre-skip and the last granule position
    /// (``/MediaFormats/OggOpusTrim``). ``headersOnly`` is `true`: packets are not counted
    /// (`sampleCount` 0) and damage is not looked for.
    ///
    /// - Parameters:
    ///   - source: the file's bytes.
    ///   - name: what messages call it.
    /// - Throws: ``/AudioCodec/CodecError`` when libavformat cannot read the headers, or a read
    ///   of `source` fails (the error's message is the source's).
    public init(libavformatHeadersOf source: some RandomAccessByteSource, named name: String) throws(CodecError) {
        let summary = try AudioFileDecoder.headerSummary(of: source, named: name)
        var duration = summary.duration ?? 0
        var estimated = summary.durationIsEstimated
        var track = Track(id: 1, type: "audio", codec: summary.codecName, sampleCount: 0, duration: duration)
        track.sampleRate = summary.sampleRate
        track.channels = summary.channelCount
        track.priming = summary.priming
        track.bitrate = summary.bitrate
        track.decodedFrames = summary.declaredFrames
        // An MP3's Info tag, in its first frame: its frames, the encoder's delay and padding.
        if summary.codec == .mp3, summary.sampleRate > 0, let info = MP3InfoTag(source: source) {
            track.decodedFrames = info.decodedSamples
            track.priming = info.priming
            track.remainder = info.remainder
            duration = Double(info.validSamples) / Double(summary.sampleRate)
            estimated = false
        }
        // An Ogg Opus stream's pre-skip and last granule position (libavformat counts the pre-skip).
        if summary.codec == .opus, summary.containerName == "ogg", let trim = OggOpusTrim(source: source) {
            track.priming = trim.preSkip
            duration = Double(trim.presentedSamples) / 48000
            estimated = false
        }
        track.duration = duration
        self.init(format: summary.containerName, duration: duration, tracks: [track])
        tags = summary.tags.isEmpty ? nil : summary.tags
        headersOnly = true
        durationEstimated = estimated ? true : nil
    }
}

extension ProbeReport {
    /// The report of a file KeyFrameKit's own readers do not describe (MP3, FLAC, Ogg, WAV, …),
    /// from libavformat: `format` is its container name, one audio track with the codec, rate,
    /// channels, packets and length; for an MP3 with an Info tag (``/AudioBitstreams/MP3InfoTag``), the length
    /// presented and the priming and remainder decoders drop (``/AudioCodec/AudioFileDecoder/summary(of:skippingInitialBytes:)``).
    ///
    /// - Throws: ``/AudioCodec/CodecError`` when libavformat cannot read the file either.
    public init(libavformatSummaryOf path: FilePath) throws(CodecError) {
        let summary = try AudioFileDecoder.summary(of: path, skippingInitialBytes: MediaFileFormat.mpegAudioStartAfterStrayBytes(path) ?? 0)
        var track = Track(id: 1, type: "audio", codec: summary.codecName, sampleCount: summary.packetCount, duration: summary.duration)
        track.sampleRate = summary.sampleRate
        track.channels = summary.channelCount
        track.priming = summary.priming
        track.decodedFrames = summary.declaredFrames
        if summary.duration > 0 { track.bitrate = Int((Double(summary.byteCount) * 8 / summary.duration).rounded()) }
        var duration = summary.duration
        // An MP3's Info tag: its frames, the encoder's delay and padding (what convert honours).
        if summary.codec == .mp3, summary.sampleRate > 0, let info = MP3InfoTag(path: path) {
            track.decodedFrames = info.decodedSamples
            track.priming = info.priming
            track.remainder = info.remainder
            duration = Double(info.validSamples) / Double(summary.sampleRate)
            track.duration = duration
        }
        // An Ogg Opus stream's pre-skip and last granule position (libavformat counts the pre-skip).
        if summary.codec == .opus, let trim = OggOpusTrim(path: path) {
            track.priming = trim.preSkip
            duration = Double(trim.presentedSamples) / 48000
            track.duration = duration
        }
        self.init(format: summary.containerName, duration: duration, tracks: [track])
        tags = summary.tags.isEmpty ? nil : summary.tags
    }
}

extension ProbeReport {
    /// A WAV file's report: libavformat's (``init(libavformatSummaryOf:)``) with what
    /// ``/PCMAudio/WAVReader`` tolerates as damage, each at its byte offset. A `data` chunk that
    /// declares more bytes than the file holds gives the declared length in ``duration`` and the
    /// frames the file holds in ``readableDuration``.
    ///
    /// - Throws: ``/AudioCodec/CodecError`` when libavformat cannot read the file.
    public init(wavFile path: FilePath) throws(CodecError) {
        self = try ProbeReport(libavformatSummaryOf: path)
        guard let source = FileByteSource.regularFile(at: path), let reader = try? WAVReader(source: source) else { return }
        let warnings = reader.warnings
        guard !warnings.isEmpty else { return }
        damage = Array(warnings.prefix(Self.damageLimit))
        damageCount = warnings.count
        let rate = Double(reader.format.sampleRate)
        guard rate > 0, let declared = reader.declaredDataByteCount, let frames = reader.frameCount, !tracks.isEmpty else { return }
        let declaredSeconds = Double(declared / Int64(max(1, reader.format.bytesPerFrame))) / rate
        let readable = Double(frames) / rate
        guard readable < declaredSeconds else { return }
        duration = declaredSeconds
        readableDuration = readable
        tracks[0].duration = declaredSeconds
        tracks[0].readableDuration = readable
    }
}

extension ProbeReport {
    /// A native MP3, Ogg Opus or FLAC file's report: libavformat's
    /// (``init(libavformatSummaryOf:)``), with what KeyFrameKit's own frame reader of the
    /// format `formats` detects steps over as damage, each at its byte offset. When it reads fewer samples
    /// than the file declares (an Info tag's frames, the last granule position, STREAMINFO's
    /// total), ``duration`` stays the declared length and ``readableDuration`` is what the
    /// frames hold.
    ///
    /// - Throws: ``/AudioCodec/CodecError`` when libavformat cannot read the file.
    public init(nativeFile path: FilePath, formats: MediaFormatRegistry = .standard) throws(CodecError) {
        self = try ProbeReport(libavformatSummaryOf: path)
        var input: any PacketFileSource
        do throws(PipelineError) {
            switch formats.detect(path) {
            case .mp3?: input = try MP3FrameInput(path: path)
            case .oggOpus?: input = try OggOpusPacketInput(path: path)
            case .flac?: input = try FLACFrameInput(path: path)
            default: return
            }
        } catch {
            damage = [DamageEvent(.endedEarly, message: "\(error)")]
            damageCount = 1
            return
        }
        var events: [DamageEvent] = []
        var held = 0.0
        var timescale: Int32?
        do {
            while let packet = try input.next() {
                held += packet.duration.seconds
                timescale = timescale ?? packet.duration.timescale
                events += input.takeDamage()
            }
            events += input.takeDamage()
        } catch {
            events += input.takeDamage()
            events.append(DamageEvent(.endedEarly, message: "\(error)"))
        }
        let readable = max(0, held - Double(input.trim.priming) / Double(max(timescale ?? 1, 1)))
        // Frames that end early with nothing stepped over (a FLAC file cut at a frame's end).
        if events.isEmpty, readable < duration - 0.001 {
            events.append(DamageEvent(.endedEarly, message: "\(path): the frames end at \((readable * 1000).rounded() / 1000) s of the \((duration * 1000).rounded() / 1000) s declared"))
        }
        guard !events.isEmpty else { return }
        damage = Array(events.prefix(Self.damageLimit))
        damageCount = events.count
        bytesSkipped = events.reduce(0) { total, event in
            if case .skippedBytes(let count) = event.kind { total + count } else { total }
        }
        guard readable < duration, !tracks.isEmpty else { return }
        readableDuration = readable
        tracks[0].readableDuration = readable
    }
}
