public import SystemPackage
internal import AudioBitstreams

/// Cutting, splitting and joining audio without re-encoding: `keyframe cut`, `split` and `join`.
///
/// Every edit is exact to the sample (HE-AAC to the core's, two output samples). In MP4 it keeps
/// whole packets — those a decoder needs before the first sample wanted (AAC's one frame of
/// overlap; HE-AAC's back to a frame a decoder may start at; Opus's 200 ms) through the one after
/// the last — and writes an edit list (ISO/IEC 14496-12 8.6.6) whose `media_time` skips to the
/// first sample wanted and whose `segment_duration` ends at the last; FLAC and ALAC frames the
/// range begins or ends inside are encoded again instead, losslessly. A join writes one edit per
/// part, each skipping that part's priming and padding, so that the output decodes to exactly
/// the parts' decoded audio one after another. MP3, Ogg Opus and native FLAC are edited in
/// their own containers (`AudioEditing+Native.swift`).
///
/// Composition: ``/MediaFormats/AudioTrackLayout`` (what the inputs hold) → ``/MediaFormats/PacketSpliceSource`` (the packets
/// kept, on one timeline) → ``/MediaFormats/MuxerOutput`` (a faststart M4A with the edits, tags and chapters),
/// around the ``/MediaCore/Pump``. Outputs are written under a temporary name and renamed when complete.
/// Each job detects and opens its files through the ``/MediaFormats/MediaFormatRegistry`` it is
/// given (`formats:`, `standard` by default).
public enum AudioEditing {
    /// A position in the presented audio: seconds, or samples at the output rate.
    public enum Position: Sendable, Hashable, CustomStringConvertible {
        /// Seconds from the start.
        case seconds(Double)
        /// Samples from the start, at the stream's output rate.
        case samples(Int64)

        /// `12.5` (seconds), `1:02:03.5` or `2:03` (hours, minutes, seconds), or `48000s`
        /// (samples); `nil` for anything else, a negative time, or one past 10⁹ seconds.
        public init?(positionArgument argument: String) {
            let text = String(argument.filter { $0 != " " })
            if text.hasSuffix("s"), let count = Int64(text.dropLast()), count >= 0 {
                self = .samples(count)
                return
            }
            let fields = text.split(separator: ":", omittingEmptySubsequences: false)
            guard (1...3).contains(fields.count) else { return nil }
            var seconds = 0.0
            for (index, field) in fields.enumerated() {
                guard let value = Double(field), value >= 0, value.isFinite else { return nil }
                if index < fields.count - 1, value != value.rounded() { return nil }
                seconds = seconds * 60 + value
            }
            // Past about 31 years no file reaches; the bound keeps every conversion exact.
            guard seconds <= 1e9 else { return nil }
            self = .seconds(seconds)
        }

        /// The position in media units of `layout` (its timescale is its output rate for AAC).
        func units(in layout: AudioTrackLayout) -> Int64 {
            switch self {
            case .samples(let count):
                let rate = max(layout.audioFormat.sampleRate, 1)
                return rate == layout.timescale ? count : Int64(saturating: (Double(count) * Double(layout.timescale) / Double(rate)).rounded())
            case .seconds(let seconds):
                return Int64(saturating: (seconds * Double(layout.timescale)).rounded())
            }
        }

        /// `12.5 s` or `48000 samples`.
        public var description: String {
            switch self {
            case .seconds(let seconds): "\(seconds) s"
            case .samples(let count): "\(count) samples"
            }
        }
    }

    /// What an edit wrote.
    public struct Summary: JobSummary, Sendable, Hashable {
        /// The file written.
        public var output: FilePath
        /// The codec of the packets, which an edit keeps.
        public var codec: AudioCodecID = .aac
        /// Packets written (AAC access units, MP3, FLAC or ALAC frames, Opus packets).
        public var packets: Int
        /// Samples presented (the edit's length).
        public var samples: Int64
        /// Samples per second of ``samples``: the media timescale, which for AAC is the output
        /// sample rate.
        public var sampleRate: Int
        /// The chapters written.
        public var chapters: [MovieChapter]
        /// What the pump did, stage by stage: the packets spliced, the muxer.
        public var report: JobReport

        /// Seconds presented.
        public var seconds: Double { Double(samples) / Double(max(sampleRate, 1)) }
    }

    // MARK: - Cut

    /// Writes the samples of `input` (an M4A/MP4 or ADTS file, or an MP3, Ogg Opus or FLAC file)
    /// from `start` up to `end` (the end of the input when `nil`) to `output`, of the input's
    /// container (M4A for ADTS), without re-encoding.
    ///
    /// The output keeps the input's tags (iTunSMPB rewritten for the cut) and its chapters,
    /// shifted to the cut's start and clipped to its length; a chapter that began before the
    /// start begins at 0.
    ///
    /// - Throws: `PipelineError.unsupported` for an output that is not `.m4a`/`.m4b`/`.mp4`,
    ///   an empty range, or a start past the end.
    @discardableResult
    public static func cut(_ input: FilePath, to output: FilePath, from start: Position, to end: Position? = nil,
                           formats: MediaFormatRegistry = .standard, control: JobControl? = nil,
                           progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        if let stream = try nativeStream(input, formats: formats) {
            try checkNativeOutput(output, for: stream, formats: formats)
            let range = try presentedRange(of: stream, from: start, to: end)
            return try writeNative(output, pieces: [(stream, range)], metadata: stream.metadata,
                                   chapters: shifted(stream.chapters, by: range.lowerBound, length: Int64(range.count), timescale: stream.sampleRate),
                                   control: control, progress: progress)
        }
        try checkOutput(output, formats: formats)
        let layout = try AudioTrackLayout(path: input, formats: formats)
        let range = coreAligned(try presentedRange(of: layout, from: start, to: end), of: layout, formats: formats)
        let chapters = shifted(layout.chapters, by: range.lowerBound, length: Int64(range.count), timescale: layout.timescale)
        return try write(output, pieces: [Piece(layout: layout, range: range, repeated: 0)], chapters: chapters, items: layout.items,
                         formats: formats, control: control, progress: progress)
    }

    /// How to read the frames of an HE-AAC track (SBR, and PS over it) to find where a decoder
    /// may start; `nil` for any other. Found from the AudioSpecificConfig (explicit or
    /// backward-compatible signalling) or, where the configuration says AAC-LC at a core rate
    /// (ADTS, or an MP4 remuxed from it: implicit signalling), from an SBR fill element in the
    /// first frame.
    static func spectralBandReplication(of layout: AudioTrackLayout, formats: MediaFormatRegistry) -> (blocks: RawDataBlock.Configuration, outputRate: Int)? {
        guard layout.audioFormat.codec == .aac, let config = try? AudioSpecificConfig(bytes: layout.audioFormat.decoderConfiguration) else { return nil }
        var found = config.sbrPresent || config.psPresent
        if !found, config.audioObjectType == .aacLC, config.samplingFrequency <= 24000 {
            found = (try? firstFrameCarriesSBR(layout.path, config: config, formats: formats)) ?? false
        }
        guard found else { return nil }
        let blocks = RawDataBlock.Configuration(samplingFrequencyIndex: config.samplingFrequencyIndex, channelConfiguration: config.channelConfiguration)
        return (blocks, config.sbrPresent || config.psPresent ? config.outputSampleRate : config.samplingFrequency * 2)
    }

    /// `range` with each end moved back to an even sample of the decoded stream when `layout` is
    /// HE-AAC timed at its output rate (the stream's end excepted): the core runs at half that
    /// rate, and iTunSMPB and FFmpeg's decoder skip whole core samples, so an odd `media_time`
    /// would start the decode a sample off. An HE-AAC edit is exact to two output samples.
    static func coreAligned(_ range: Range<Int64>, of layout: AudioTrackLayout, formats: MediaFormatRegistry) -> Range<Int64> {
        guard let sbr = spectralBandReplication(of: layout, formats: formats), layout.timescale == sbr.outputRate else { return range }
        let lower = range.lowerBound - (layout.priming + range.lowerBound) % 2
        let upper = range.upperBound == layout.validLength ? range.upperBound : range.upperBound - (layout.priming + range.upperBound) % 2
        return max(0, lower)..<max(max(0, lower) + 1, upper)
    }

    /// Frames an HE-AAC edit looks back through for one a decoder may start at.
    static let independentFrameSearch = 64

    /// For HE-AAC, the first packet of `kept` moved back to a frame a decoder may start at
    /// (``/AACBitstream/RawDataBlock/isIndependentOfEarlierBlocks(outputSampleRate:)``: an SBR
    /// header, values coded in frequency only), at least two frames before the one holding the
    /// first sample: the core's MDCT overlap and the SBR's QMF history then hold the source's
    /// values again by that sample. SBR's envelopes are coded against the frame before, so a
    /// decoder that started elsewhere would play wrong high bands until the next such frame.
    /// KeyFrameKit's encoder makes every 8th frame one (``/SpectralBandReplication/SBREncoder/headerInterval``).
    ///
    /// - Throws: `PipelineError.unsupported` when none lies within ``independentFrameSearch``
    ///   frames before, naming the file.
    static func startingAtIndependentFrame(_ kept: (packets: ClosedRange<Int>, priming: Int64), of layout: AudioTrackLayout,
                                           sbr: (blocks: RawDataBlock.Configuration, outputRate: Int),
                                           formats: MediaFormatRegistry) throws(PipelineError) -> (packets: ClosedRange<Int>, priming: Int64) {
        let start = layout.packetStart(kept.packets.lowerBound) + kept.priming
        let holding = layout.packetIndex(holding: start)
        let latest = max(0, holding - 2)
        guard latest > 0 else {
            return (0...kept.packets.upperBound, start)
        }
        let earliest = max(0, latest - independentFrameSearch)
        let frames = try packetBytes(earliest...latest, of: layout, formats: formats)
        for index in stride(from: latest, through: earliest, by: -1) {
            let bytes = frames[index - earliest]
            if index == 0 || (try? RawDataBlock(parsing: bytes, configuration: sbr.blocks))?.isIndependentOfEarlierBlocks(outputSampleRate: sbr.outputRate) == true {
                return (index...kept.packets.upperBound, start - layout.packetStart(index))
            }
        }
        throw .unsupported("\(layout.path): no HE-AAC frame within \(independentFrameSearch) before sample \(start) is one a decoder may start at "
                           + "(an SBR header, values coded in frequency only), so it cannot be cut there without re-encoding; "
                           + "keyframe convert re-encodes it (keyframe convert \(layout.path) -o OUT.m4a)")
    }

    /// The bytes of packets `indices` of `layout`'s track: read where an MP4's tables place them,
    /// or, for ADTS or a fragmented file, read through from the start.
    static func packetBytes(_ indices: ClosedRange<Int>, of layout: AudioTrackLayout, formats: MediaFormatRegistry) throws(PipelineError) -> [[UInt8]] {
        if let bytes = layout.packetBytes(indices.lowerBound..<(indices.upperBound + 1)) { return bytes }
        var input = try formats.aacInput(layout.path, purpose: .copying)
        var skipped = input.skip(packets: indices.lowerBound)
        while skipped < indices.lowerBound, try input.next() != nil { skipped += 1 }
        var packets: [[UInt8]] = []
        while packets.count < indices.count, let packet = try input.next() { packets.append(packet.data) }
        guard packets.count == indices.count else { throw .unsupported("\(layout.path): packets \(indices) cannot be read") }
        return packets
    }

    /// Whether the first AAC frame at `path` (ADTS, or an MP4 whose config says AAC-LC, as
    /// FFmpeg's remux of an HE-AAC ADTS stream writes it) carries SBR data (a fill element of
    /// `EXT_SBR_DATA`, ISO/IEC 14496-3 4.4.2.8): HE-AAC signalled implicitly.
    private static func firstFrameCarriesSBR(_ path: FilePath, config: AudioSpecificConfig, formats: MediaFormatRegistry) throws(PipelineError) -> Bool {
        var input = try formats.aacInput(path)
        guard let packet = try input.next() else { return false }
        let block: RawDataBlock
        do {
            block = try RawDataBlock(parsing: packet.data, configuration: RawDataBlock.Configuration(
                samplingFrequencyIndex: config.samplingFrequencyIndex, channelConfiguration: config.channelConfiguration))
        } catch {
            return false
        }
        return block.carriesSBR
    }

    /// The presented range `start..<end` of `layout`, in media units, checked.
    static func presentedRange(of layout: AudioTrackLayout, from start: Position, to end: Position?) throws(PipelineError) -> Range<Int64> {
        let lower = start.units(in: layout)
        let upper = min(end?.units(in: layout) ?? layout.validLength, layout.validLength)
        guard lower < layout.validLength else {
            // Of a file cut short, the end is where it can be read to; the damage says why.
            let readable = layout.damage.map { " readable samples (\($0))" } ?? " samples"
            throw .unsupported("\(layout.path): the start, \(start), is at or past the end of its \(layout.validLength)\(readable) "
                               + "(\(seconds(layout.validLength, layout)) s)")
        }
        guard lower < upper else {
            throw .unsupported("\(layout.path): the end, \(end?.description ?? "the end"), is not after the start, \(start)")
        }
        return lower..<upper
    }

    // MARK: - Split

    /// Where ``split(_:into:at:formats:control:progress:)`` cuts.
    public enum SplitPoints: Sendable, Hashable {
        /// At these positions.
        case positions([Position])
        /// At every chapter: a part per chapter, titled by it.
        case chapters
    }

    /// Splits `input` into consecutive parts in `directory` (`NAME-01.m4a`, `NAME-02.m4a`, …
    /// after the input's name; `.m4b` for an `.m4b` input; the input's own container for MP3,
    /// Ogg Opus and FLAC), each exact to the sample, so that joining them gives back the input's
    /// samples.
    ///
    /// Parts at ``SplitPoints/positions(_:)`` keep the input's tags and the chapters that fall in
    /// them; parts at ``SplitPoints/chapters`` take the chapter's title as their title tag and
    /// the chapter's number as their track number.
    ///
    /// - Throws: `PipelineError.unsupported` for points out of order or past the end, a
    ///   file without chapters split at chapters, or a part that would exist already.
    public static func split(_ input: FilePath, into directory: FilePath, at points: SplitPoints, formats: MediaFormatRegistry = .standard,
                             control: JobControl? = nil, progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> [Summary] {
        let native = try nativeStream(input, formats: formats)
        let layout = native == nil ? try AudioTrackLayout(path: input, formats: formats) : nil
        let length = native?.length ?? layout?.validLength ?? 0
        let timescale = native?.sampleRate ?? layout?.timescale ?? 1
        let inputChapters = native?.chapters ?? layout?.chapters ?? []
        var bounds: [Int64]
        var titles: [String?]
        switch points {
        case .positions(let positions):
            bounds = positions.map { position in native.map { position.samples(at: $0.sampleRate) } ?? layout.map(position.units(in:)) ?? 0 }
            titles = Array(repeating: nil, count: bounds.count + 1)
        case .chapters:
            let starts = inputChapters.map { Int64((try? $0.startTime.converted(to: Int32(clamping: timescale), rounding: .nearest).value) ?? 0) }
            guard !inputChapters.isEmpty else { throw .unsupported("\(input): has no chapters to split at") }
            bounds = Array(starts.dropFirst())
            titles = inputChapters.map(\.title)
            if let first = starts.first, first > 0 {
                // Audio before the first chapter is a part of its own.
                bounds.insert(first, at: 0)
                titles.insert(nil, at: 0)
            }
        }
        guard zip(bounds, bounds.dropFirst()).allSatisfy({ $0 < $1 }), bounds.allSatisfy({ $0 > 0 && $0 < length }) else {
            throw .unsupported("\(input): split points must increase and lie inside its \(fixed(Double(length) / Double(max(timescale, 1)), digits: 3)) s")
        }
        if let layout {
            bounds = bounds.map { coreAligned($0..<length, of: layout, formats: formats).lowerBound }
        }
        let edges = [0] + bounds + [length]
        let stem = input.stem ?? "part"
        // A native part takes the input's extension when it names the format, else the format's first.
        let ext = native.map { stream in
            input.extension.map { $0.lowercased() }.flatMap { stream.format.fileExtensions.contains($0) ? $0 : nil } ?? stream.format.fileExtensions.first ?? "audio"
        } ?? (input.extension?.lowercased() == "m4b" ? "m4b" : "m4a")
        let width = max(2, String(edges.count - 1).count)
        let outputs = (1..<edges.count).map { number in
            directory.appending("\(stem)-\(String(repeating: "0", count: max(0, width - String(number).count)))\(number).\(ext)")
        }
        for path in outputs where FileSystemCalls.exists(path) {
            throw .unsupported("\(path) exists; split does not overwrite parts")
        }
        // The directory is made when it is missing, with any parents missing (as convert makes DIR/).
        var missing: [FilePath] = []
        var ancestor = directory
        while !ancestor.isEmpty, !FileSystemCalls.exists(ancestor) {
            missing.append(ancestor)
            ancestor.removeLastComponent()
        }
        for path in missing.reversed() {
            do { try FileSystemCalls.makeDirectory(path) } catch {
                throw .unsupported("cannot make the directory \(path): \(error)")
            }
        }
        var summaries: [Summary] = []
        var written: [FilePath] = []
        do throws(PipelineError) {
            for part in 0..<(edges.count - 1) {
                let range = edges[part]..<edges[part + 1]
                // The parts are read in order from one input: its position is the split's progress.
                let overall = progress.map { report in
                    { (inner: MediaProgress) in report(MediaProgress(mediaSeconds: inner.mediaSeconds, totalSeconds: Double(length) / Double(max(timescale, 1)))) }
                }
                if let native {
                    var metadata = native.metadata
                    var chapters: [MovieChapter] = []
                    if case .chapters = points {
                        metadata.tags.removeAll { $0.key == "title" || $0.key == "track" }
                        if let title = titles[part] { metadata.tags.append((key: "title", value: title)) }
                        metadata.tags.append((key: "track", value: "\(part + 1)/\(edges.count - 1)"))
                    } else {
                        chapters = shifted(native.chapters, by: range.lowerBound, length: Int64(range.count), timescale: timescale)
                    }
                    summaries.append(try writeNative(outputs[part], pieces: [(native, range)], metadata: metadata, chapters: chapters,
                                                     control: control, progress: overall))
                    written.append(outputs[part])
                    continue
                }
                guard let layout else { break }
                var items = layout.items
                var chapters: [MovieChapter] = []
                if case .chapters = points {
                    if let title = titles[part] {
                        items.set("©nam", type: 1, values: [Array(title.utf8)])
                    }
                    let number = UInt16(clamping: part + 1), total = UInt16(clamping: edges.count - 1)
                    items.set("trkn", type: 0, values: [[0, 0, UInt8(number >> 8), UInt8(number & 0xFF), UInt8(total >> 8), UInt8(total & 0xFF), 0, 0]])
                } else {
                    chapters = shifted(layout.chapters, by: range.lowerBound, length: Int64(range.count), timescale: layout.timescale)
                }
                summaries.append(try write(outputs[part], pieces: [Piece(layout: layout, range: range, repeated: 0)], chapters: chapters, items: items,
                                           formats: formats, control: control, progress: overall))
                written.append(outputs[part])
            }
        } catch {
            // No half split: the parts written so far go too.
            for path in written { try? FileSystemCalls.unlink(path) }
            throw error
        }
        return summaries
    }

    // MARK: - Join

    /// Joins `inputs` (M4A/MP4 or ADTS files sharing one stream configuration; or MP3, Ogg Opus
    /// or FLAC files of one format, rate and channel layout, written as that format) into `output`
    /// without re-encoding, gaplessly: an edit per part skips that part's priming and
    /// padding, so the output decodes to exactly the parts' decoded audio one after another.
    ///
    /// The output has a chapter per part, titled by the part's title tag, else its file name
    /// (none when the parts continue one stream with one title and no chapters: a split file),
    /// and the first part's tags, except those that describe that part only (track number,
    /// iTunSMPB, and the title unless every part has the same).
    ///
    /// - Throws: `PipelineError.unsupported` naming the input and the field that differs
    ///   when the inputs cannot be joined losslessly (object type, sample rate, channel
    ///   configuration, frame length, or any other AudioSpecificConfig bit).
    @discardableResult
    public static func join(_ inputs: [FilePath], to output: FilePath, formats: MediaFormatRegistry = .standard, control: JobControl? = nil,
                            progress: ((MediaProgress) -> Void)? = nil) throws(PipelineError) -> Summary {
        guard !inputs.isEmpty else { throw .unsupported("join needs at least one input") }
        if let first = try nativeStream(inputs[0], formats: formats) {
            try checkNativeOutput(output, for: first, formats: formats)
            var streams = [first]
            for input in inputs.dropFirst() {
                guard let stream = try nativeStream(input, formats: formats), stream.format == first.format else {
                    throw .unsupported("cannot join \(input) to \(inputs[0]) without re-encoding: it is not \(first.format)")
                }
                streams.append(stream)
            }
            return try joinNative(streams, to: output, control: control, progress: progress)
        }
        try checkOutput(output, formats: formats)
        var layouts: [AudioTrackLayout] = []
        for input in inputs { layouts.append(try AudioTrackLayout(path: input, formats: formats)) }
        let first = layouts[0]
        for (number, layout) in layouts.enumerated().dropFirst() {
            if let difference = difference(between: first, and: layout) {
                throw .unsupported("cannot join \(layout.path) to \(first.path) without re-encoding: input \(number + 1) differs from input 1 in \(difference)")
            }
        }
        var items = first.items
        // A title every part shares (parts split from one file) is the whole's; else each part's own.
        for key in Set(layouts.map(\.title)).count > 1 ? ["©nam", "trkn"] : ["trkn"] { items.remove(key) }
        // Consecutive parts of one stream (as `split` makes them) join into the stream again:
        // the packets the later part repeats are dropped and the two edits become one.
        var pieces: [Piece] = [Piece(layout: first, range: 0..<first.validLength, repeated: 0)]
        for (previous, layout) in zip(layouts, layouts.dropFirst()) {
            pieces.append(Piece(layout: layout, range: 0..<layout.validLength,
                                repeated: repeatedPackets(of: previous, in: layout, nextStartsAtFirstPacket: firstKeptPacket(of: layout, formats: formats) == 0)))
        }
        return try write(output, pieces: pieces, chapters: joinedChapters(pieces), items: items, formats: formats, control: control, progress: progress)
    }

    /// The chapters of a join: each part's own, moved to where the part starts; a part without
    /// any has one, titled by its title tag (else its file name). In a part that continues the
    /// stream of the one before (``Piece/repeated``, or any lossless part), a chapter at its start
    /// with the title of the chapter before it is that chapter going on (a chapter a split cut in
    /// two) and is not repeated. Parts that all continue one stream, with one title and no
    /// chapters, have none (a titled file without chapters, split and joined again).
    static func joinedChapters(_ pieces: [Piece]) -> [MovieChapter] {
        joinedChapters(pieces.map { piece in
            // Lossless frames join as they are, with no packets repeated: every part continues.
            JoinedPart(chapters: piece.layout.chapters, length: piece.layout.validLength, timescale: piece.layout.timescale,
                       title: piece.layout.title ?? piece.layout.path.stem, titleTag: piece.layout.title,
                       continues: piece.repeated > 0 || [.flac, .alac].contains(piece.layout.audioFormat.codec))
        })
    }

    /// The chapters of a join of native streams: each part's own, moved to where the part
    /// starts (`starts`, else where the lengths before it end); a part without any has one,
    /// titled by its title tag (else its file name). In a part that continues the stream of the
    /// one before (`continues`, by default every part: FLAC's frames join as they are), a chapter
    /// at its start with the title of the chapter before it is that chapter going on (a chapter a
    /// split cut in two) and is not repeated.
    static func joinedChapters(_ streams: [NativeStream], starts: [Int64]? = nil, continues: [Bool]? = nil) -> [MovieChapter] {
        joinedChapters(streams.enumerated().map { number, stream in
            JoinedPart(chapters: stream.chapters, length: stream.length, timescale: stream.sampleRate,
                       title: stream.title ?? stream.path.stem, titleTag: stream.title,
                       continues: continues?[number] ?? true, start: starts?[number])
        })
    }

    /// One part of a join, as its chapters see it.
    struct JoinedPart {
        var chapters: [MovieChapter]
        /// Samples presented, at `timescale`.
        var length: Int64
        var timescale: Int
        /// What a part without chapters is called.
        var title: String?
        /// Its title tag, when it has one.
        var titleTag: String?
        /// Whether it continues the stream of the part before.
        var continues: Bool
        /// Where it starts in the output, when not where the parts before end.
        var start: Int64?
    }

    /// Each part's chapters, moved to where it starts, at the first part's timescale.
    static func joinedChapters(_ parts: [JoinedPart]) -> [MovieChapter] {
        guard let first = parts.first else { return [] }
        // Parts of one stream (split from one file) with one title and no chapters: the whole
        // has none, as the file had. (Parts split at chapters are titled by them, and get them
        // back; untitled parts are named by their files.)
        if parts.allSatisfy({ $0.chapters.isEmpty && $0.titleTag != nil && $0.titleTag == first.titleTag }), parts.dropFirst().allSatisfy(\.continues) {
            return []
        }
        let scale = Int32(clamping: first.timescale)
        var chapters: [MovieChapter] = []
        var offset: Int64 = 0
        for part in parts {
            if let start = part.start { offset = start }
            let own = shifted(part.chapters, by: 0, length: part.length, timescale: part.timescale)
            let title = part.title ?? "Part \(chapters.count + 1)"
            for chapter in own.isEmpty ? [MovieChapter(startTime: MediaTime(value: 0, timescale: scale), title: title)] : own {
                let start = chapter.startTime.value
                if start == 0, part.continues, chapters.last?.title == chapter.title, !own.isEmpty { continue }
                chapters.append(MovieChapter(startTime: MediaTime(value: offset + start, timescale: scale), title: chapter.title))
            }
            offset += part.length
        }
        return chapters
    }

    /// How many packets `next` begins with that `previous` ends with, when `next` is the part
    /// of one stream that follows `previous` (a split keeps a packet or two either side of each
    /// cut, for the MDCT's overlap): the presentation of `previous` ends inside those packets
    /// exactly where `next`'s begins, and their bytes are the same. 0 otherwise (parts of
    /// different streams keep their own pre-roll, each behind its own edit).
    static func repeatedPackets(of previous: AudioTrackLayout, in next: AudioTrackLayout, nextStartsAtFirstPacket: Bool) -> Int {
        guard previous.container == .mp4, next.container == .mp4, previous.damage == nil, next.damage == nil,
              joinableConfiguration(previous.audioFormat) == joinableConfiguration(next.audioFormat),
              previous.timescale == next.timescale, previous.packetDuration == next.packetDuration,
              previous.packetStarts == nil, next.packetStarts == nil else { return 0 }
        let duration = previous.packetDuration
        // The whole of each is written: `previous` up to its last packet, `next` from its first.
        guard previous.packets(presenting: 0..<previous.validLength).packets.upperBound == previous.packetCount - 1,
              nextStartsAtFirstPacket else { return 0 }
        // A part keeps its codec's pre-roll, and an HE-AAC part the frames back to one a decoder
        // may start at (KeyFrameKit's encoder makes every 8th one): up to 20 repeat.
        let most = max(previous.preRoll + previous.postRoll + 3, 20)
        for count in stride(from: min(most, previous.packetCount - 1, next.packetCount - 1), through: 1, by: -1) {
            let endInOverlap = previous.priming + previous.validLength - Int64(previous.packetCount - count).saturatingMultiplied(by: duration)
            guard endInOverlap == next.priming,
                  let tail = previous.packetBytes((previous.packetCount - count)..<previous.packetCount),
                  let head = next.packetBytes(0..<count), tail == head else { continue }
            return count
        }
        return 0
    }

    /// The first packet an edit of the whole of `layout` keeps: its pre-roll's, or for HE-AAC
    /// the frame a decoder may start at before it.
    static func firstKeptPacket(of layout: AudioTrackLayout, formats: MediaFormatRegistry) -> Int {
        let presented = layout.packets(presenting: 0..<layout.validLength)
        guard let sbr = spectralBandReplication(of: layout, formats: formats) else { return presented.packets.lowerBound }
        return (try? startingAtIndependentFrame(presented, of: layout, sbr: sbr, formats: formats))?.packets.lowerBound ?? presented.packets.lowerBound
    }

    /// The first field in which `other`'s stream differs from `base`'s, as words; `nil` when
    /// their packets can share one track.
    static func difference(between base: AudioTrackLayout, and other: AudioTrackLayout) -> String? {
        let a = base.audioFormat, b = other.audioFormat
        if a.codec != b.codec { return "codec (\(a.codec) vs \(b.codec))" }
        if a.codec != .aac {
            if a.sampleRate != b.sampleRate { return "sample rate (\(a.sampleRate) Hz vs \(b.sampleRate) Hz)" }
            if a.channelCount != b.channelCount { return "channels (\(a.channelCount) vs \(b.channelCount))" }
            if base.timescale != other.timescale { return "media timescale (\(base.timescale) vs \(other.timescale))" }
            if base.packetDuration != other.packetDuration { return "packet duration (\(base.packetDuration) vs \(other.packetDuration))" }
            return joinableConfiguration(a) == joinableConfiguration(b) ? nil : "\(a.codec) configuration (\(joinableConfiguration(a).hexDigits()) vs \(joinableConfiguration(b).hexDigits()))"
        }
        if a.decoderConfiguration == b.decoderConfiguration, base.timescale == other.timescale, base.packetDuration == other.packetDuration {
            return nil
        }
        guard let x = try? AudioSpecificConfig(bytes: a.decoderConfiguration), let y = try? AudioSpecificConfig(bytes: b.decoderConfiguration) else {
            return "AudioSpecificConfig (\(a.decoderConfiguration.hexDigits()) vs \(b.decoderConfiguration.hexDigits()))"
        }
        if x.profileName != y.profileName || x.audioObjectType != y.audioObjectType {
            return "audio object type (\(x.profileName) vs \(y.profileName))"
        }
        if x.samplingFrequency != y.samplingFrequency { return "sampling frequency (\(x.samplingFrequency) Hz vs \(y.samplingFrequency) Hz)" }
        if x.outputSampleRate != y.outputSampleRate { return "output sample rate (\(x.outputSampleRate) Hz vs \(y.outputSampleRate) Hz)" }
        if x.channelConfiguration != y.channelConfiguration {
            return "channel configuration (\(x.channelConfiguration) vs \(y.channelConfiguration))"
        }
        if x.framesPerPacket != y.framesPerPacket { return "frame length (\(x.framesPerPacket) vs \(y.framesPerPacket) samples)" }
        if base.timescale != other.timescale { return "media timescale (\(base.timescale) vs \(other.timescale))" }
        if base.packetDuration != other.packetDuration { return "packet duration (\(base.packetDuration) vs \(other.packetDuration))" }
        // The same stream configuration written two ways (an M4A's explicit SBR signalling
        // beside an ADTS header's implicit one): the packets decode the same.
        return nil
    }

    /// The configuration of `format` less what describes one file only, so that the parts of
    /// one stream compare equal: Opus's pre-skip (RFC 7845 5.1); FLAC's length, MD5 and frame
    /// sizes (RFC 9639 8.2); ALAC's largest frame and average bitrate. Another codec's whole
    /// configuration.
    static func joinableConfiguration(_ format: EncodedAudioFormat) -> [UInt8] {
        switch format.codec {
        case .opus:
            guard var head = try? OpusHeader(bytes: format.decoderConfiguration) else { break }
            head.preSkip = 0
            return head.bytes
        case .flac:
            guard var info = try? FLACStreamInfo(bytes: format.decoderConfiguration) else { break }
            (info.minimumFrameSize, info.maximumFrameSize, info.totalSamples, info.md5) = (0, 0, 0, Array(repeating: 0, count: 16))
            return info.bytes
        case .alac:
            guard var config = try? ALACSpecificConfig(cookie: format.decoderConfiguration) else { break }
            (config.maximumFrameBytes, config.averageBitrate) = (0, 0)
            return config.bytes
        default: break
        }
        return format.decoderConfiguration
    }

    /// `format` as an edit writes it, presenting `samples` after skipping `priming` media units
    /// of `timescale`: Opus's pre-skip is the priming (the edit's `media_time`, which the
    /// Opus-in-ISOBMFF encapsulation 4.3 matches to it) where 16 bits hold it; FLAC's STREAMINFO
    /// gives the edit's length and no MD5 (zero: not computed, RFC 9639 8.2), which was the
    /// whole source's.
    static func editedFormat(_ format: EncodedAudioFormat, priming: Int64, samples: Int64, timescale: Int) -> EncodedAudioFormat {
        var edited = format
        switch format.codec {
        case .opus:
            edited = format.settingOpusPreSkip(priming: priming, timescale: timescale)
        case .flac:
            guard var info = try? FLACStreamInfo(bytes: format.decoderConfiguration) else { break }
            (info.minimumFrameSize, info.maximumFrameSize) = (0, 0)
            // Frames encoded again at the ends are of other sizes: the block size varies.
            info.minimumBlockSize = min(info.minimumBlockSize, 16)
            info.totalSamples = samples
            info.md5 = Array(repeating: 0, count: 16)
            edited.decoderConfiguration = info.bytes
        default: break
        }
        return edited
    }

    // MARK: - Writing

    /// What an edit writes of one input: the presented `range` of `layout`, whose first
    /// `repeated` packets the piece before it already wrote (its presentation then continues that
    /// piece's edit).
    struct Piece {
        var layout: AudioTrackLayout
        var range: Range<Int64>
        var repeated: Int
    }

    /// The frames a lossless piece (FLAC or ALAC in MP4) begins and ends inside, encoded again to
    /// hold only the samples of its range, by packet index; `nil`
    /// when its packets cannot be read where they lie (a fragmented file), or a frame encoded
    /// again does not decode to the samples it was made of (a stream whose configuration our
    /// encoder does not write): the piece then keeps its frames whole behind an edit.
    ///
    /// RFC 9639 9.1.6: only a FLAC stream's last frame may hold fewer than 16 samples. A FLAC
    /// piece that would begin with fewer begins with those and the next frame's samples as two
    /// frames of about half each; one that would end with fewer, and is not the stream's end
    /// (`endsStream`), ends with the frame before and those as two.
    private static func reencodedEnds(of piece: Piece, kept: (packets: ClosedRange<Int>, priming: Int64), endsStream: Bool,
                                      coder: LosslessFrameCoder) -> [Int: (bytes: [UInt8], duration: UInt32)]? {
        let layout = piece.layout
        let count = Int64(piece.range.count)
        let first = kept.packets.lowerBound
        let last = kept.packets.upperBound
        func length(_ index: Int) -> Int64 { layout.packetStart(index + 1) - layout.packetStart(index) }
        func start(_ index: Int) -> Int64 { layout.packetStart(index) - layout.packetStart(first) }
        // Where the range starts and ends, in samples from the start of packet `first`.
        let startInFirst = kept.priming
        let end = kept.priming + count
        let isFLAC = layout.audioFormat.codec == .flac
        var cuts: [(packets: Range<Int>, samples: Range<Int64>)] = []
        if first == last {
            cuts.append((first..<(first + 1), startInFirst..<end))
        } else {
            var head: (packets: Range<Int>, samples: Range<Int64>)?
            if isFLAC, startInFirst > 0, length(first) - startInFirst < 16 {
                head = (first..<(first + 2), startInFirst..<min(end, start(first + 1) + length(first + 1)))
            } else if startInFirst > 0 {
                head = (first..<(first + 1), startInFirst..<length(first))
            }
            var tail: (packets: Range<Int>, samples: Range<Int64>) = (last..<(last + 1), start(last)..<end)
            if isFLAC, !endsStream, end - start(last) < 16 {
                tail = ((last - 1)..<(last + 1), max(startInFirst, start(last - 1))..<end)
            }
            if let head, head.packets.upperBound > tail.packets.lowerBound {
                // The two overlap: one run of frames from the start to the end.
                cuts.append((head.packets.lowerBound..<tail.packets.upperBound, startInFirst..<end))
            } else {
                if let head { cuts.append(head) }
                cuts.append(tail)
            }
        }
        let bytesPerFrame = coder.pcmFormat.bytesPerFrame
        var replacements: [Int: (bytes: [UInt8], duration: UInt32)] = [:]
        for cut in cuts {
            guard let frames = layout.packetBytes(cut.packets) else { return nil }
            var pcm: [UInt8] = []
            for frame in frames {
                guard let decoded = try? coder.decode(frame) else { return nil }
                pcm += decoded
            }
            let range = Int(cut.samples.lowerBound - start(cut.packets.lowerBound))..<Int(cut.samples.upperBound - start(cut.packets.lowerBound))
            // A frame wholly kept (the stream's short last one) stays as it is.
            if cut.packets.count == 1, range.lowerBound == 0, range.count * bytesPerFrame == pcm.count { continue }
            guard range.lowerBound >= 0, range.upperBound * bytesPerFrame <= pcm.count, !range.isEmpty else { return nil }
            let wanted = Array(pcm[(range.lowerBound * bytesPerFrame)..<(range.upperBound * bytesPerFrame)])
            // As many frames as packets: a merged pair becomes two frames of about half each.
            guard let encoded = try? coder.encode(wanted, frames: cut.packets.count), encoded.count == cut.packets.count else { return nil }
            var decoded: [UInt8] = []
            for (index, frame) in zip(cut.packets, encoded) {
                guard let samples = try? coder.decode(frame) else { return nil }
                decoded += samples
                replacements[index] = (frame, UInt32(samples.count / bytesPerFrame))
            }
            guard decoded == wanted else { return nil }
        }
        return replacements
    }

    /// Writes the presented `range` of each piece, one after another, to `output`.
    private static func write(_ output: FilePath, pieces: [Piece], chapters: [MovieChapter],
                              items: ITunesItemList, formats: MediaFormatRegistry, control: JobControl?, progress: ((MediaProgress) -> Void)?) throws(PipelineError) -> Summary {
        var splice: [PacketSpliceSource.Piece] = []
        var edits: [Range<Int64>] = []
        var mediaOffset: Int64 = 0
        var packets = 0
        let coder = pieces[0].layout.losslessCoder
        for (number, piece) in pieces.enumerated() {
            let presented = piece.layout.packets(presenting: piece.range)
            let repeated = presented.packets.count > piece.repeated ? piece.repeated : 0
            // A part that continues the one before is written from its first packet on, past those repeated.
            var kept = (packets: (repeated > 0 ? repeated : presented.packets.lowerBound)...presented.packets.upperBound, priming: presented.priming)
            if repeated == 0, let sbr = spectralBandReplication(of: piece.layout, formats: formats) {
                kept = try startingAtIndependentFrame(kept, of: piece.layout, sbr: sbr, formats: formats)
            }
            let input = try formats.aacInput(piece.layout.path, purpose: .copying)
            // A lossless stream begins and ends exactly where the range does: the frames it
            // begins and ends inside are encoded again, so no edit is needed to trim them (and
            // players that ignore one present the same samples).
            if let coder, repeated == 0, let ends = reencodedEnds(of: piece, kept: kept, endsStream: number == pieces.count - 1, coder: coder) {
                splice.append(PacketSpliceSource.Piece(input: input, packets: kept.packets, replacements: ends))
                let length = Int64(piece.range.count)
                if let last = edits.last, last.upperBound == mediaOffset {
                    edits[edits.count - 1] = last.lowerBound..<(mediaOffset + length)
                } else {
                    edits.append(mediaOffset..<(mediaOffset + length))
                }
                packets += kept.packets.count
                mediaOffset += length
                continue
            }
            // A decoder gives every packet's full length, a stream's short last one included
            // (its stts says less: the padding it ends with). Inside a join that packet lasts
            // its full length, so that the media timeline is the decoded one. A table that
            // jitters is rewritten whole, every packet a frame's length.
            // (Lossless frames whose lengths vary decode to what their table says: kept as they are.)
            let isLast = number == pieces.count - 1
            let varying = piece.layout.packetStarts != nil
            splice.append(PacketSpliceSource.Piece(input: input, packets: kept.packets,
                                                   packetDuration: varying || (isLast && piece.layout.hasRegularTimeTable) ? nil
                                                       : UInt32(clamping: piece.layout.packetDuration)))
            if repeated > 0, let last = edits.last {
                edits[edits.count - 1] = last.lowerBound..<(last.upperBound + Int64(piece.range.count))
            } else {
                edits.append((mediaOffset + kept.priming)..<(mediaOffset + kept.priming + Int64(piece.range.count)))
            }
            packets += kept.packets.count
            mediaOffset += varying ? piece.layout.packetStart(kept.packets.upperBound + 1) - piece.layout.packetStart(kept.packets.lowerBound)
                : Int64(kept.packets.count).saturatingMultiplied(by: piece.layout.packetDuration)
        }
        var configuration = MuxerConfiguration(layout: .fastStart, mediaTypes: .audio, encoderName: "KeyFrameKit",
                                               expectedSampleCount: packets + chapters.count * 40)
        configuration.isAudiobook = output.extension?.lowercased() == "m4b"
        configuration.audioCodecs = formats.audioCodecs
        var sink = try MuxerOutput(path: output, configuration: configuration)
        var metadata = ITunesMetadata()
        metadata.verbatimItems = items.items.filter { $0.key != MetadataTags.gaplessKey && $0.key != "©too" }.map(\.box)
        do {
            try sink.muxer.setMetadata(metadata)
            try sink.muxer.setChapters(chapters)
        } catch {
            sink.cancel()
            throw .container(error)
        }
        sink.muxer.setEdits(keeping: edits)
        let samples = edits.reduce(0) { $0 + Int64($1.count) }
        let first = pieces[0].layout
        let format = first.audioFormat.codec == .aac ? nil : FormatDescription.audio(
            editedFormat(first.audioFormat, priming: edits.first?.lowerBound ?? 0, samples: samples, timescale: first.timescale))
        var source = PacketSpliceSource(pieces: splice, format: format)
        var runs = SampleRunSink(sink)
        var report = try Pump.run(from: &source, into: &runs, control: control, progress: progress)
        // An input cut short is edited as far as it reads; what is lost comes first.
        // (An ADTS input's skipped bytes, met again while reading, are said once.)
        let measured = pieces.compactMap(\.layout.damage)
        report.damage = measured + report.damage.filter { event in !measured.contains { $0.kind == event.kind && $0.offset == event.offset } }
        return Summary(output: output, codec: first.audioFormat.codec, packets: packets, samples: samples, sampleRate: first.timescale, chapters: chapters.normalized(), report: report)
    }

    private static func checkOutput(_ output: FilePath, formats: MediaFormatRegistry) throws(PipelineError) {
        // The registry decides (an MP4 by any of its names); the message names the usual ones.
        guard formats.format(nameOf: output) == .mp4 else {
            throw .unsupported("\(output): edits are written as M4A; name the output .m4a, .m4b or .mp4", path: output)
        }
    }

    /// `chapters` of a stream, as seen from `start` (media units) for `length`: shifted, the one
    /// playing at `start` moved to 0, those after the end dropped.
    static func shifted(_ chapters: [MovieChapter], by start: Int64, length: Int64, timescale: Int) -> [MovieChapter] {
        guard !chapters.isEmpty else { return [] }
        let scale = Int32(clamping: timescale)
        var result: [MovieChapter] = []
        for chapter in chapters.normalized() {
            let time = (try? chapter.startTime.converted(to: scale, rounding: .nearest).value) ?? 0
            let moved = time - start
            guard moved < length else { break }
            let chapter = MovieChapter(startTime: MediaTime(value: max(0, moved), timescale: scale), title: chapter.title)
            if moved <= 0, !result.isEmpty { result[0] = chapter } else { result.append(chapter) }
        }
        return result
    }

    private static func seconds(_ units: Int64, _ layout: AudioTrackLayout) -> String {
        fixed(Double(units) / Double(max(layout.timescale, 1)), digits: 3)
    }


}
