public import SystemPackage
internal import AudioBitstreams

/// What an edit without re-encoding needs to know about an audio track: an M4A/MP4 track of
/// AAC, or of another codec the registry's descriptions name (Opus, FLAC, ALAC), or an ADTS
/// stream. Its packets, their common length, the packets a decoder needs before and after a
/// sample (``preRoll``, ``postRoll``), and which of their decoded samples are presented — the
/// priming skipped at the start and the valid length after it, from the edit list (ISO/IEC
/// 14496-12 8.6.6), else iTunSMPB, else everything. Times are in media units (``timescale`` per
/// second), which for AAC are samples at the output rate.
public struct AudioTrackLayout: Sendable {
    /// The file.
    public let path: FilePath
    /// Its container.
    public let container: MediaFileFormat
    /// The packets' format: the codec, its configuration (for AAC the AudioSpecificConfig), rate
    /// and channels.
    public let audioFormat: EncodedAudioFormat
    /// Packets a decoder needs before the one that holds a sample to reconstruct it: AAC's one
    /// (the MDCT overlap), Opus's 200 ms (``/AudioBitstreams/OpusPacket/editPreRoll``), none
    /// for FLAC and ALAC, whose frames stand alone.
    public let preRoll: Int
    /// Packets kept after the one that holds the last sample: one for AAC, none for the others.
    public let postRoll: Int
    /// Media units per second.
    public let timescale: Int
    /// The length of every packet but possibly the last, in media units.
    public let packetDuration: Int64
    /// Packets in the stream.
    public let packetCount: Int
    /// The packets' total length in media units.
    public let mediaDuration: Int64
    /// Media units decoded before the presented audio starts (the encoder's priming).
    public let priming: Int64
    /// Media units presented.
    public let validLength: Int64
    /// Whether the time-to-sample table gives every packet one length (but a shorter last one).
    /// When it does not (it jitters or skips), ``packetDuration`` is the length a decoder gives
    /// each frame, ``mediaDuration`` is that times ``packetCount``, and edits count frames.
    public let hasRegularTimeTable: Bool
    /// For a lossless track (FLAC, ALAC) whose frames vary in length, as an edit that re-encoded
    /// the frames it began or ended inside leaves them, where each packet starts: such frames
    /// decode to just the samples their table entries say, so the table is the timeline.
    /// `nil` when every packet is ``packetDuration`` long (but a shorter last one).
    public let packetStarts: [Int64]?
    /// The file's iTunes items (empty for ADTS).
    public let items: ITunesItemList
    /// The file's chapters (empty for ADTS).
    public let chapters: [MovieChapter]
    /// What of the file cannot be read, when it was cut short: the file's end, the first sample
    /// past it and how much is readable. The layout then describes the readable packets only
    /// (``packetCount``, ``mediaDuration``, ``validLength``); for ADTS, the first bytes skipped
    /// between frames (the frames around them are counted); `nil` for a whole file.
    public let damage: DamageEvent?
    /// The audio track's id (MP4); 0 for ADTS.
    public let trackID: UInt32

    /// Measures the audio of `path`, opened through `formats`: an MP4's audio track from its
    /// tables (no media read), an ADTS stream by reading its frame headers. A track of a codec
    /// other than AAC is measured when `formats` describes it (``MediaFormatRegistry/audioCodecs``).
    ///
    /// - Throws: `PipelineError.unsupported` for a file with no audio track it can edit, packets of varying
    ///   length whose frame length is not a whole number of timescale units, or an edit list of several parts (a joined file, which is cut or split by
    ///   joining again); the container's errors.
    public init(path: FilePath, formats: MediaFormatRegistry = .containers) throws(PipelineError) {
        self.path = path
        var input = try formats.aacInput(path, purpose: .copying)
        container = input.format
        if let track = input.track, let file = input.file {
            if let config = input.audioSpecificConfig {
                do { audioFormat = try Self.encodedFormat(config) } catch { throw .bitstream(error) }
            } else if let described = input.audioFormat {
                audioFormat = described
            } else {
                throw .unsupported("\(path): no audio track to edit")
            }
            timescale = track.timescale
            trackID = track.id
            let stts = track.sampleTable.timeToSample
            // One length for every packet, but a shorter last one (the stream's end).
            let lastIsShort = stts.count > 1 && stts.last.map { $0.count == 1 && $0.delta <= stts[0].delta } == true
            let regular = stts.first.map { first in
                first.delta > 0 && stts.dropLast().allSatisfy { $0.delta == first.delta }
                    && (stts.count == 1 || lastIsShort || stts.last?.delta == first.delta)
            } ?? false
            // A decoder never sees the time-to-sample table: every AAC frame decodes to the
            // AudioSpecificConfig's frame length (1024, or 960 with frameLengthFlag; twice that
            // with SBR). A table that jitters (deltas of 1022, 1024, 1025 from a muxer writing
            // timestamps) or skips (2964) is read as that length per frame, and the edit is made
            // on frame indices; so are a fragmented file's track runs.
            let frameUnits = Int64(audioFormat.framesPerPacket) * Int64(track.timescale)
            let decodedLength = audioFormat.sampleRate > 0 && frameUnits % Int64(audioFormat.sampleRate) == 0
                ? frameUnits / Int64(audioFormat.sampleRate) : 0
            let declaredDuration: Int64
            let lossless = audioFormat.codec == .flac || audioFormat.codec == .alac
            if regular, track.fragments.runCount == 0, let first = stts.first {
                packetDuration = Int64(first.delta)
                declaredDuration = track.mediaDuration
                hasRegularTimeTable = true
                packetStarts = nil
            } else if lossless, track.fragments.runCount == 0, !stts.isEmpty, stts.allSatisfy({ $0.delta > 0 }),
                      track.sampleCount <= 1 << 26 {
                // As many starts as there are samples (a table's counts past them are not followed).
                var starts: [Int64] = []
                var time: Int64 = 0
                for entry in stts where starts.count < track.sampleCount {
                    for _ in 0..<min(Int(entry.count), track.sampleCount - starts.count) {
                        starts.append(time)
                        time += Int64(entry.delta)
                    }
                }
                packetStarts = starts
                packetDuration = Int64(stts.map(\.delta).max() ?? 1)
                declaredDuration = time
                hasRegularTimeTable = true
            } else if decodedLength > 0, case let (length, false) = decodedLength.multipliedReportingOverflow(by: Int64(track.sampleCount)) {
                packetDuration = decodedLength
                declaredDuration = length
                hasRegularTimeTable = false
                packetStarts = nil
            } else {
                throw .unsupported("\(path): audio track \(track.id) has packets of varying length, and its codec configuration's frame "
                                   + "length (\(audioFormat.framesPerPacket) at \(audioFormat.sampleRate) Hz) is no whole number of "
                                   + "units of the track's timescale \(track.timescale), or its \(track.sampleCount) frames last longer than can be counted")
            }
            (preRoll, postRoll) = Self.roll(of: audioFormat.codec, packetDuration: packetDuration, timescale: track.timescale)
            let source: FileByteSource
            do { source = try FileByteSource(path: path) } catch { throw .stream(error) }
            // A file cut short (a copy that stopped, a recording killed before its moov was
            // rewritten is another matter): the samples that lie inside it, and what is lost.
            let inside = track.fragments.runCount == 0 ? track.samplesInside(fileSize: source.byteCount) : (count: track.sampleCount, firstOutside: nil)
            packetCount = inside.count
            let readable = Int64(inside.count).saturatingMultiplied(by: packetDuration)
            let whole = inside.count == track.sampleCount
            mediaDuration = whole ? declaredDuration : min(declaredDuration, readable)
            if !whole, inside.firstOutside == nil {
                damage = DamageEvent(.truncated(declared: Int64(track.sampleCount), available: Int64(inside.count)),
                                     message: "\(path): the sample tables of track \(track.id) place \(inside.count) of its \(track.sampleCount) samples: "
                                         + "\(inside.count) packets readable, \(Self.seconds(readable, timescale: timescale)) s")
            } else if let lost = inside.firstOutside {
                damage = DamageEvent(.truncated(declared: Int64(track.sampleCount), available: Int64(inside.count)), at: lost.offset,
                                     message: "\(path): the file ends at byte \(source.byteCount), inside sample \(lost.index + 1) of \(track.sampleCount) of track "
                    + "\(track.id) (bytes \(lost.offset)..<\(lost.offset + Int64(lost.size))): \(inside.count) packets readable, "
                    + "\(Self.seconds(readable, timescale: timescale)) of \(Self.seconds(Int64(track.sampleCount).saturatingMultiplied(by: packetDuration), timescale: timescale)) s")
            } else if let empty = track.emptyAudioSamples {
                // Packets of no bytes are copied as they are (an edit keeps the timing) and said.
                damage = DamageEvent(empty.kind, message: "\(path): \(empty.message)")
            } else {
                damage = nil
            }
            if track.editedMediaRanges(movieTimescale: file.movieTimescale) != nil {
                throw .unsupported("\(path): its edit list presents several parts (a joined file); cut or split the parts, then join them again")
            }
            let trim = AudioPacketInput.gaplessTrim(track: track, file: file, outputRate: track.timescale)
            priming = Int64(trim.priming)
            // Without an edit or iTunSMPB, a short last sample ends it (the decoder's trim says so).
            validLength = min(trim.validFrameCount ?? Int64.max, max(0, mediaDuration - priming))
            do { items = try MovieEditor.itemList(of: file, source: source) } catch { throw .container(error) }
            // Chapters that cannot be read are not carried; the audio is what an edit is for.
            chapters = (try? file.chapters(source: source)) ?? []
        } else {
            // ADTS: count the frames (headers only are looked at; the payloads pass in runs).
            var count = 0
            var duration: Int64 = 0
            var format: FormatDescription?
            var length: Int64 = 0
            // Bytes skipped between frames (garbage, a frame cut short): the frames around them
            // are counted, and the first such loss is the layout's damage, so that an edit of
            // any part of the stream says the input is damaged, as for an M4A cut short.
            var lost: DamageEvent?
            while let run = try input.nextRun(maxBytes: 1 << 20) {
                if format == nil {
                    format = run.format
                    length = Int64(run.entries.first?.duration ?? 0)
                }
                count += run.count
                duration += run.duration
                if lost == nil { lost = input.takeDamage().first(where: \.losesData) }
            }
            if lost == nil { lost = input.takeDamage().first(where: \.losesData) }
            guard case .audio(let audio)? = format, length > 0 else { throw .unsupported("\(path): no AAC frames") }
            audioFormat = audio
            timescale = audio.sampleRate
            packetDuration = length
            packetStarts = nil
            (preRoll, postRoll) = (1, 1)
            packetCount = count
            mediaDuration = duration
            priming = 0
            validLength = duration
            hasRegularTimeTable = true
            items = ITunesItemList()
            chapters = []
            damage = lost.map { DamageEvent($0.kind, at: $0.offset, message: "\(path): \($0.message)") }
            trackID = 0
        }
    }

    /// The bytes of the packets at `indices` of an MP4 track (read where its sample table
    /// places them); `nil` for ADTS, or a packet that cannot be placed or read.
    public func packetBytes(_ indices: Range<Int>) -> [[UInt8]]? {
        guard container == .mp4, indices.upperBound <= packetCount,
              let source = FileByteSource.regularFile(at: path), let file = try? MP4File(source: source),
              let track = file.tracks.first(where: { $0.id == trackID }), track.fragments.runCount == 0,
              let locations = track.sampleLocations(indices) else { return nil }
        var packets: [[UInt8]] = []
        for location in locations {
            guard let bytes = try? source.read(at: location.offset, count: location.size), bytes.count == location.size else { return nil }
            packets.append(bytes)
        }
        return packets
    }

    /// `units` of `timescale` in seconds, three decimals.
    private static func seconds(_ units: Int64, timescale: Int) -> String {
        fixed(Double(units) / Double(max(timescale, 1)), digits: 3)
    }

    private static func encodedFormat(_ config: AudioSpecificConfig) throws(AACBitstreamError) -> EncodedAudioFormat {
        let format = try config.formatDescription()
        guard case .audio(let audio) = format else { preconditionFailure("an AudioSpecificConfig describes audio") }
        return audio
    }

    /// Seconds presented.
    public var seconds: Double { Double(validLength) / Double(max(timescale, 1)) }

    /// The title tag (`©nam`), when the file has one.
    public var title: String? {
        items.text("©nam")
    }

    /// The packets a decoder of `codec` needs before and after the one holding a sample, for
    /// packets of `packetDuration` units of `timescale`.
    static func roll(of codec: AudioCodecID, packetDuration: Int64, timescale: Int) -> (pre: Int, post: Int) {
        switch codec {
        case .flac, .alac: return (0, 0)
        case .opus:
            // OpusPacket.editPreRoll (200 ms), in whole packets.
            let units = Int64(timescale) * OpusPacket.editPreRoll / 48000
            return (Int((units + packetDuration - 1) / max(packetDuration, 1)), 0)
        default: return (1, 1)
        }
    }

    /// The packets to keep for presented samples `range` (media units from the presentation
    /// start): ``preRoll`` packets before the one holding the first sample (for AAC the frame
    /// whose overlap the first sample needs), through ``postRoll`` packets after the one holding
    /// the last; and where, in the kept packets' decoded samples, the range starts.
    public func packets(presenting range: Range<Int64>) -> (packets: ClosedRange<Int>, priming: Int64) {
        let start = priming + range.lowerBound
        let end = priming + range.upperBound
        let first = max(0, packetIndex(holding: start) - preRoll)
        let last = min(packetCount - 1, packetIndex(holding: end - 1) + postRoll)
        return (first...max(first, last), start - packetStart(first))
    }

    /// Where packet `index` starts, in media units from the first packet's start.
    public func packetStart(_ index: Int) -> Int64 {
        if let packetStarts {
            if packetStarts.indices.contains(index) { return packetStarts[index] }
            if index >= packetStarts.count { return mediaDuration }
        }
        return Int64(index).saturatingMultiplied(by: packetDuration)
    }

    /// The packet whose decoded samples hold media time `time`.
    public func packetIndex(holding time: Int64) -> Int {
        guard let packetStarts else { return Int(time / packetDuration) }
        var low = 0, high = min(packetStarts.count, packetCount)
        while high - low > 1 {
            let middle = (low + high) / 2
            if packetStarts[middle] <= time { low = middle } else { high = middle }
        }
        return low
    }
}
