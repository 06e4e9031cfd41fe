import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit
import Synchronization

/// `keyframe convert INPUT -o OUTPUT`: any audio to gapless AAC, or to WAV/PCM.
struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert any audio (FLAC, MP3, Ogg, Opus, ALAC, AIFF, WAV, AAC…) to AAC, MP3, Opus, FLAC, ALAC, WAV or PCM.",
        discussion: """
            INPUT is whatever FFmpeg reads (FLAC, MP3, Ogg Vorbis, Opus in Ogg or WebM, ALAC, AIFF, \
            W64, the audio track of a video); WAV, ADTS and MP4 AAC are read by KeyFrameKit's own \
            readers. What the file declares about encoder delay and padding (MP3's LAME header, Opus \
            pre-skip, Vorbis end trimming, an edit list) is honoured, so OUTPUT holds exactly the \
            frames INPUT decodes to. OUTPUT .m4a/.mp4 is gapless AAC-LC with faststart (or Opus, FLAC \
            or ALAC with --codec); .aac is ADTS; .mp3 is MP3 (LAME) with an ID3v2.4 tag, chapters as \
            CHAP/CTOC and a LAME tag that trims both ends; .opus/.ogg is Ogg Opus at 48 kHz, its \
            pre-skip and last granule position trimming both ends; .flac is FLAC; .wav/.pcm is PCM \
            in the decoded sample type (or --format). Tags, cover and chapters are carried into \
            each (Vorbis comments and CHAPTERxxx in FLAC and Ogg). A rate AAC cannot carry (above \
            96 kHz) is resampled to 48 kHz (44.1 kHz for its multiples) with soxr. --profile he-aac or \
            he-aac-v2 writes HE-AAC (16–48 kHz; v2 takes stereo only); --profile auto chooses per \
            file by the output's channels (after --channels) and --bitrate: stereo he-aac-v2 up to \
            40k, he-aac up to 64k; mono he-aac up to 32k; lc above, for more channels, and without \
            --bitrate. Nothing is left under OUTPUT if the conversion fails.
            """
    )

    @Argument(help: "The file(s) to convert; several need OUTPUT to be a directory. One may be an object's URL (s3://bucket/key, https://host/path/file, env:NAME).")
    var inputs: [String]

    @OptionGroup(title: "Object stores (an input's or output's URL)") var objectStore: ObjectStoreOptions

    @Option(name: .shortAndLong, help: "The output file: .m4a/.mp4 (gapless AAC, or --codec), .aac (ADTS), .mp3, .opus/.ogg, .flac, .wav or .pcm; or a directory (DIR/, made if missing); or an object's URL (s3://bucket/key.m4a).")
    var output: String

    @Option(help: ArgumentHelp("Into a directory: the type of each output, by extension (m4a, mp4, aac, mp3, opus, ogg, flac, wav, pcm).", valueName: "ext"))
    var outputType = "m4a"

    @Option(help: "Into a directory: how many files to convert at once; default: the number of cores.")
    var jobs: Int?

    @Option(help: ArgumentHelp("AAC encoders working at once on segments of one file; default: the cores idle now for one file, "
                               + "1 per file in a batch. --threads 1 gives the same bytes as ffmpeg.", valueName: "n"))
    var threads: Int?

    @Flag(help: ArgumentHelp("Print one JSON object per file (input, output, ok, error, normalization) on stdout instead of the "
                             + "summary; into a directory, one per line."))
    var json = false

    /// The object a conversion through a staging directory goes to: put there before the
    /// summary, which names it (set by ``runThroughStaging()``, never on the command line).
    @Option(help: ArgumentHelp(visibility: .private))
    var storeOutput: String?

    var input: String { inputs[0] }

    @OptionGroup(title: "Encoding") var encoder: EncoderOptions

    @OptionGroup(title: "Encoding") var codecChoice: CodecOptions

    @Option(help: ArgumentHelp(
        "AAC scale-factor search: twoloop (ffmpeg's default; the same bytes as ffmpeg) or fast.", valueName: "coder"))
    var coder: CoderArgument = .twoloop

    @OptionGroup(title: "Encoding") var layout: OutputLayoutOptions

    @Option(help: ArgumentHelp("Sample type of .wav/.pcm output: s16le, s24le, s32le or f32le; default: the decoded one.",
                               valueName: "format"))
    var format: ConvertSampleFormat?

    @Option(parsing: .unconditional, help: ArgumentHelp("Normalise to this EBU R 128 integrated loudness (e.g. -16 or -23), measured in a first pass; "
                               + "a look-ahead limiter holds the true peak at --true-peak.", valueName: "LUFS"))
    var normalize: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("With --normalize: the true-peak ceiling in dBTP (ITU-R BS.1770-4, 4× oversampled); "
                               + "lossy outputs (AAC, MP3, Opus) are measured decoded, and encoded again lower while the codec's peaks pass it. Default: -1.", valueName: "dBTP"))
    var truePeak: Double?

    @Flag(help: ArgumentHelp("With --normalize: no limiter; the gain stops where the true peak meets --true-peak, and a target "
                             + "left more than 0.5 LU short is an error."))
    var noLimiter = false

    @Flag(help: "Write ReplayGain 2.0 track gain and peak (-18 LUFS reference) as iTunes tags (.m4a/.mp4).")
    var replaygain = false

    @Flag(help: "Do not carry the input's tags and cover art into the output (.m4a/.mp4, .mp3, .opus, .flac).")
    var noTags = false

    @OptionGroup(title: "Raw .pcm input") var rawInput: RawInputOptions

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("give at least one file to convert") }
        if output == "-" { throw ValidationError(standardOutputRefusal) }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        if normalize == nil, truePeak != nil || noLimiter { throw ValidationError("--true-peak and --no-limiter go with --normalize") }
        if let normalize, !(-70.0...0.0).contains(normalize) { throw ValidationError("--normalize \(normalize): give a loudness from -70 to 0 LUFS") }
        try layout.check(sampleRates: 1000...768_000, described: "a rate from 1000 to 768000 Hz (AAC: 8000 to 96000)")
        // One output file: its type is the command line's to get right.
        if inputs.count == 1, !output.hasSuffix("/"), !URLPath.isDirectory(output),
           Keyframe.formats.format(nameOf: FilePath(output)).map(Self.writes) != true {
            throw ValidationError("\(output): unknown output type; use \(Keyframe.formats.extensionList(holding: .audioPackets)) or "
                                  + Keyframe.formats.extensionList(holding: .pcm))
        }
    }

    /// Whether convert writes `format`: PCM (WAV, raw), or packets its registry entry writes.
    static func writes(_ format: MediaFileFormat) -> Bool {
        format.contents.contains(.pcm) || (format.contents.contains(.audioPackets) && Keyframe.formats.entry(for: format)?.packetSink != nil)
    }

    /// The codec options checked against the output's container, as usage errors: the codec it
    /// holds (``CodecArgument/resolve(_:container:output:encoder:sampleRate:)``), and none for PCM.
    private func checkCodecOptions(for container: MediaFileFormat, output: String) throws {
        if container.contents.contains(.audioPackets) {
            _ = try CodecArgument.resolve(codecChoice.codec, container: container, output: output, encoder: encoder, sampleRate: layout.sampleRate)
        } else if let asked = codecChoice.codec {
            let holders = Keyframe.formats.formats.filter { $0.audioCodecs.contains(asked.codec) && Keyframe.formats.entry(for: $0)?.packetSink != nil
                && $0.contents.contains(.audioPackets) }
            throw CommandFailure("--codec \(asked.codec): \(output) is \(container), which holds PCM; write \(asked.codec) to "
                                 + holders.map { ".\($0.fileExtensions[0])" }.joined(separator: " or "), status: .usage)
        }
    }

    func run() throws {
        if inputs.contains(where: { RemoteObjects.isRemote($0, objectStore: objectStore) }) || RemoteObjects.isRemote(output, objectStore: objectStore) {
            try runThroughStaging()
            return
        }
        if inputs.count > 1 || output.hasSuffix("/") || URLPath.isDirectory(output) {
            try runBatch()
            return
        }
        try checkDistinct(input: input, output: output)
        if let container = Keyframe.formats.format(nameOf: FilePath(output)) { try checkCodecOptions(for: container, output: output) }
        let options = try options(for: input)
        let line = ProgressLine(label: "converting")
        let summary = try convert(options: options, progress: line.update)
        let rate = summary.outputFormat?.sampleRate ?? 1
        let seconds = Double(summary.outputFrames) / Double(rate)
        line.finish(mediaSeconds: seconds, totalSeconds: seconds)
        // An output into a store is put there before anything says it was made, and named by
        // its URL (its secrets masked).
        var output = output
        if let storeOutput {
            try RemoteObjects.upload(FilePath(output), as: storeOutput, objectStore: objectStore)
            output = RemoteObjects.shown(storeOutput)
        }
        if let shortfall = Self.shortfall(summary, target: normalize) {
            Terminal.error("warning: \(output): \(shortfall)\n")
        }
        if let over = Self.peakOverCeiling(summary, ceiling: options.truePeakCeiling) {
            Terminal.error("warning: \(output): \(over)\n")
        }
        if json {
            try JSONOutput.print(BatchLine(input: input, output: output, ok: true, error: nil,
                                           normalization: NormalizationLine(summary, target: normalize),
                                           damage: summary.damage.isEmpty ? nil : summary.damage.map(\.message)))
            try ExitStatus.finish(damage: summary.damage, in: input)
            return
        }
        let layout = summary.outputFormat.map { "\($0.sampleRate) Hz, \($0.channelCount) ch" } ?? "no audio"
        var text = "\(output): \(Terminal.fixed(seconds, digits: 3)) s from \(summary.input) (\(summary.inputFrames) frames) → \(layout)"
        if summary.packets > 0 {
            let codec = codecChoice.codec?.codec ?? Keyframe.formats.format(nameOf: FilePath(output))?.defaultAudioCodec ?? .aac
            text += ", \(summary.packets) \(CodecArgument.displayName(codec)) packets"
                + (codec == .aac ? ProfileArgument.tag(summary.profile ?? .aacLC) : "")
                + ((summary.bitrate ?? 0) > 0 ? " at \(summary.bitrate ?? 0) b/s" : "") + " (priming \(summary.priming), padding \(summary.padding))"
        } else {
            text += ", \(summary.outputFrames) frames"
        }
        print(text)
        if !summary.splices.isEmpty {
            let moved = summary.splices.filter { $0.moved != 0 }.count
            let incompatible = summary.splices.filter { !$0.compatible }.count
            print("encoded in \(summary.splices.count + 1) segments: \(summary.splices.count) splices"
                  + (moved > 0 ? ", \(moved) moved to match window sequences" : "")
                  + (incompatible > 0 ? ", \(incompatible) with mismatched window sequences" : ""))
        }
        if let (measured, gain) = summary.normalization {
            var text = "normalised: \(Probe.loudnessText(measured)) → gain \(Terminal.fixed(gain, digits: 2)) dB"
            if let limiter = summary.limiter {
                text += limiter.maxGainReduction > 0
                    ? ", limited by up to \(Terminal.fixed(limiter.maxGainReduction, digits: 2)) dB for "
                        + "\(Terminal.fixed(limiter.limitedSeconds, digits: 2)) s"
                    : ", no limiting"
            }
            if let reached = summary.normalizedLoudness, reached.integrated.isFinite {
                text += " → \(Terminal.fixed(reached.integrated, digits: 1)) LUFS, \(Terminal.fixed(reached.truePeak, digits: 1)) dBTP"
                    + (summary.packets > 0 ? " decoded" : "")
            }
            if summary.encodes > 1 { text += " (encoded \(summary.encodes) times to hold the ceiling)" }
            print(text)
        }
        try ExitStatus.finish(damage: summary.damage, in: input)
    }

    /// Words for a limited normalisation that ended more than 0.5 LU from `target`: a programme
    /// so dense that holding its peaks at the ceiling keeps it from the loudness asked.
    static func shortfall(_ summary: Transcode.ConvertSummary, target: Double?) -> String? {
        guard let target, summary.limiter != nil, let reached = summary.normalizedLoudness?.integrated,
              reached.isFinite, abs(reached - target) > 0.5 else { return nil }
        return "reached \(Terminal.fixed(reached, digits: 1)) LUFS, not \(Terminal.fixed(target, digits: 1)): with its true peak "
            + "held at the ceiling the programme cannot be louder (raise --true-peak, or choose a lower target)"
    }

    /// Words for a normalised AAC output whose decoded true peak stayed over `ceiling` after
    /// the last encode: the codec's own peaks at this bitrate.
    static func peakOverCeiling(_ summary: Transcode.ConvertSummary, ceiling: Double) -> String? {
        guard summary.packets > 0, summary.normalization != nil, let peak = summary.normalizedLoudness?.truePeak,
              peak.isFinite, peak > ceiling else { return nil }
        return "decoded, its true peak is \(Terminal.fixed(peak, digits: 2)) dBTP, over the \(Terminal.fixed(ceiling, digits: 1)) dBTP "
            + "ceiling after \(summary.encodes) encodes: the codec's own peaks at this bitrate (raise the bitrate, or lower --true-peak)"
    }

    /// The options for converting `path` (a raw PCM input needs its layout).
    private func options(for path: String, batch: Bool = false) throws -> Transcode.ConvertOptions {
        var raw: PCMFormat?
        if Keyframe.formats.detect(FilePath(path)) == .rawPCM {
            raw = try rawInput.rawLayout(for: path)
        }
        var options = Transcode.ConvertOptions(bitrate: encoder.bitsPerSecond, coder: coder.coder, sampleRate: layout.sampleRate,
                                               channelCount: layout.channels, pcmSampleFormat: format?.sampleFormat, rawInputFormat: raw,
                                               normalizeTo: normalize, replayGain: replaygain, carriesTags: !noTags,
                                               threads: threads ?? (batch ? 1 : IdleProcessors.count(usable: ProcessInfo.processInfo.activeProcessorCount)),
                                               profile: encoder.profile.choice, truePeakCeiling: truePeak ?? -1, limitsTruePeak: !noLimiter)
        options.codec = codecChoice.codec?.codec
        options.codecs = Keyframe.codecs
        options.formats = Keyframe.formats
        return options
    }

    /// Several inputs into a directory, `--jobs` at a time: one progress line, a line per file as
    /// it ends (or a JSON object with `--json`), a non-zero exit if any failed.
    /// An input or output in an object store: the input copied into a private staging
    /// directory (ranged reads), converted there, and the output put into its store (with the
    /// `Content-Type` its extension says, kept a day by a CDN); the staging directory removed at the end.
    private func runThroughStaging() throws {
        guard inputs.count == 1, !output.hasSuffix("/") else {
            throw CommandFailure("an object store's URL converts one file into one file (\(inputs.count) inputs, output \(output))", status: .usage)
        }
        let staging = try RemoteObjects.stagingDirectory()
        defer { RemoteObjects.discard(staging) }
        var local = self
        let remoteOutput = RemoteObjects.isRemote(output, objectStore: objectStore)
        if remoteOutput {
            // The object's own name (an env:NAME output names it only in its URL); the store
            // asked once before any work, so that a wrong key or a missing bucket stops here.
            let (store, name) = try RemoteObjects.object(output, objectStore: objectStore, output: true)
            do { _ = try store.contains(name) } catch { throw CommandFailure("\(error)") }
            local.storeOutput = output
            let directory = staging.appending("out")
            do { try FileSystemCalls.makeDirectory(directory) } catch { throw CommandFailure("\(directory): \(error)") }
            local.output = directory.appending(name.split(separator: "/").last.map(String.init) ?? "output").string
        }
        try RemoteObjects.withLocalInput(input, objectStore: objectStore) { path in
            local.inputs = [path]
            try local.run()
        }
    }

    private func runBatch() throws {
        let directory = output.count > 1 && output.hasSuffix("/") ? String(output.dropLast()) : output
        let type = outputType.hasPrefix(".") ? String(outputType.dropFirst()) : outputType
        let writable = Keyframe.formats.formats.filter(Self.writes)
        guard let kind = Keyframe.formats.format(nameOf: FilePath("x.\(type)")), writable.contains(kind) else {
            throw CommandFailure("--output-type \(outputType): use " + writable.compactMap(\.fileExtensions.first).joined(separator: ", "), status: .usage)
        }
        try checkCodecOptions(for: kind, output: "--output-type \(type)")
        // DIR/ names a directory: made when missing, as `package` and `split` make theirs.
        if output.hasSuffix("/"), !URLPath.isDirectory(directory) {
            do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
                throw CommandFailure("\(output): cannot make the directory (\(error))")
            }
        }
        guard URLPath.isDirectory(directory) else { throw CommandFailure("\(output): no such directory") }
        var items: [Transcode.BatchItem] = []
        var taken: [String: String] = [:]
        for path in inputs {
            let name = FilePath(path).lastComponent?.stem ?? "output"
            let target = (directory.isEmpty ? "" : directory.hasSuffix("/") ? directory : directory + "/") + name + "." + type
            if let other = taken[target] {
                throw CommandFailure("\(path) and \(other) would both be written to \(target): rename one")
            }
            try checkDistinct(input: path, output: target)
            taken[target] = path
            items.append(Transcode.BatchItem(input: FilePath(path), output: FilePath(target)))
        }
        // Raw PCM needs its layout; other inputs share one set of options.
        let options = try options(for: inputs.first { Keyframe.formats.detect(FilePath($0)) == .rawPCM } ?? inputs[0], batch: true)
        let line = BatchProgressLine(total: items.count)
        let json = self.json
        let target = normalize
        let ceiling = normalize == nil ? nil : options.truePeakCeiling
        let batch = items
        let outcomes = Transcode.convert(batch: items, options: options, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount,
                                         control: StopSignals.cancellingControl(),
                                         itemFinished: { index, outcome in
                                             line.report(Self.describe(batch[index], outcome, json: json, target: target, ceiling: ceiling),
                                                         failed: outcome.isFailure && !json)
                                         },
                                         progress: { line.update($0) })
        line.finish()
        let failed = outcomes.filter(\.isFailure).count
        if !json {
            print("\(items.count - failed) of \(items.count) converted into \(directory.isEmpty ? "." : directory)/"
                  + (failed > 0 ? ", \(failed) failed" : ""))
        }
        if failed > 0 { throw ExitCode(1) }
        // Done, but from a damaged input: status 3, as for one file.
        let salvaged = outcomes.contains { if case .converted(let summary) = $0 { summary.damage.contains(where: \.losesData) } else { false } }
        if salvaged { throw ExitStatus.damaged.exitCode }
    }

    /// The line (or JSON object) for a finished item.
    private static func describe(_ item: Transcode.BatchItem, _ outcome: Transcode.BatchOutcome, json: Bool, target: Double?,
                                 ceiling: Double?) -> String {
        switch (outcome, json) {
        case (.converted(let summary), false):
            let seconds = Double(summary.outputFrames) / Double(summary.outputFormat?.sampleRate ?? 1)
            // A damaged input is salvaged: said on its line, the first damage and how many.
            let lost = summary.damage.filter(\.losesData)
            return "\(item.output): \(Terminal.fixed(seconds, digits: 3)) s from \(summary.input)"
                + (shortfall(summary, target: target).map { " (\($0))" } ?? "")
                + (ceiling.flatMap { peakOverCeiling(summary, ceiling: $0) }.map { " (\($0))" } ?? "")
                + (lost.first.map { "; damaged input: \($0)" + (lost.count > 1 ? " (and \(lost.count - 1) more)" : "") } ?? "")
        case (.failed(let error), false):
            return CommandFailure.message(error, naming: item.input.string)
        case (.converted(let summary), true):
            return JSONOutput.line(BatchLine(input: item.input.string, output: item.output.string, ok: true, error: nil,
                                             normalization: NormalizationLine(summary, target: target),
                                             damage: summary.damage.isEmpty ? nil : summary.damage.map(\.message)))
        case (.failed(let failure), true):
            return JSONOutput.line(BatchLine(input: item.input.string, output: item.output.string, ok: false, error: "\(failure)"))
        }
    }

    /// Runs the conversion; an error names INPUT (libavformat's errors do not by themselves).
    private func convert(options: Transcode.ConvertOptions, progress: @escaping (MediaProgress) -> Void) throws -> Transcode.ConvertSummary {
        do {
            return try Transcode.convert(FilePath(input), to: FilePath(output), options: options,
                                         control: StopSignals.cancellingControl(), progress: progress)
        } catch {
            throw CommandFailure(error, naming: input)
        }
    }
}

/// `--format` of `convert`'s PCM output.
enum ConvertSampleFormat: String, ExpressibleByArgument, CaseIterable {
    case s16le, s24le, s32le, f32le

    var sampleFormat: PCMSampleFormat {
        switch self {
        case .s16le: .int16
        case .s24le: .int24
        case .s32le: .int32
        case .f32le: .float32
        }
    }
}

extension Transcode.BatchOutcome {
    var isFailure: Bool {
        if case .failed = self { true } else { false }
    }
}

/// The one progress display of a batch on a terminal: files done and the share of the work,
/// redrawn in place; each finished file's line is printed above it.
final class BatchProgressLine: Sendable {
    private let total: Int
    private let enabled = Terminal.standardErrorIsTerminal
    /// Whether the progress is drawn on the current line; held while writing.
    private let drawn = Mutex(false)

    init(total: Int) { self.total = total }

    /// Prints a finished file's line (on stderr if it failed, else stdout), then the progress.
    func report(_ text: String, failed: Bool) {
        drawn.withLock { drawn in
            if drawn { Terminal.error("\r\u{1B}[K") }
            if failed { Terminal.error("Error: " + text + "\n") } else { print(text) }
            drawn = false
        }
    }

    func update(_ progress: Transcode.BatchProgress) {
        guard enabled else { return }
        let percent = Terminal.fixed(100 * progress.fraction, digits: 1)
        drawn.withLock { drawn in
            Terminal.error("\rconverting \(progress.converted + progress.failed)/\(total) files"
                           + (progress.failed > 0 ? " (\(progress.failed) failed)" : "") + "  \(percent)%\u{1B}[K")
            drawn = true
        }
    }

    func finish() {
        drawn.withLock { drawn in
            if drawn { Terminal.error("\r\u{1B}[K") }
            drawn = false
        }
    }
}

/// `convert --json`: one object per file (one line each into a directory).
struct BatchLine: Encodable {
    var input: String
    var output: String
    var ok: Bool
    var error: String?
    var normalization: NormalizationLine?
    /// The damage stepped over in the input (a salvage; status 3), each as its sentence.
    var damage: [String]? = nil
}

/// What `--normalize` did, in `--json`: the loudness measured before (`measured`), the target
/// and the gain applied (dB), the loudness after the gain and the limiter (`reached`; of an AAC
/// output, decoded), how many times it was encoded (`encodes`), and the limiter's largest gain reduction (dB) and how long it acted (seconds and
/// frames, attenuating by more than 0.1 dB); `limiter` is absent with `--no-limiter`.
struct NormalizationLine: Encodable {
    var target: Double
    var measured: Loudness
    var gain: Double
    var reached: Loudness?
    var encodes: Int
    var limiter: Limiter?

    struct Limiter: Encodable {
        var maxGainReduction: Double
        var limitedSeconds: Double
        var limitedFrames: Int64
    }

    init?(_ summary: Transcode.ConvertSummary, target: Double?) {
        guard let target, let (measured, gain) = summary.normalization else { return nil }
        self.target = target
        self.measured = measured
        self.gain = gain
        reached = summary.normalizedLoudness
        encodes = summary.encodes
        limiter = summary.limiter.map {
            Limiter(maxGainReduction: $0.maxGainReduction, limitedSeconds: $0.limitedSeconds, limitedFrames: $0.limitedFrames)
        }
    }
}
