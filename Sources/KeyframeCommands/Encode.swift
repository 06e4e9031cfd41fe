import ArgumentParser
import KeyFrameKit

/// `keyframe encode INPUT -o OUTPUT [--bitrate 128k]`: WAV or raw PCM to AAC or another codec.
struct Encode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode",
        abstract: "Encode a WAV or raw PCM file to AAC-LC, HE-AAC, HE-AAC v2, MP3, Opus, FLAC or ALAC.",
        discussion: """
            INPUT is a .wav (8/16/24/32-bit integer or 32/64-bit float, WAVE_FORMAT_EXTENSIBLE, RF64) \
            or raw interleaved .pcm (give --input-sample-rate, --input-channels, --input-format). OUTPUT .aac is ADTS; \
            .m4a/.mp4 is MP4 with a sample-exact edit list (the encoder's priming and the input's exact \
            length), so decoding it gives back exactly the input's samples; .mp3 is MP3 with a LAME tag \
            that trims both ends; .opus/.ogg is Ogg Opus whose pre-skip and last granule position trim \
            both ends; .flac is native FLAC with its MD5. The AAC encoder is libavcodec's native one \
            (MP3: LAME; Opus: libopus; FLAC and ALAC: libavcodec's); sample \
            rate and channels come from the input. --profile he-aac and he-aac-v2 put KeyFrameKit's SBR \
            (and parametric stereo) encoder over it; --profile auto chooses by the input's channels and \
            --bitrate (stereo: he-aac-v2 up to 40k, he-aac up to 64k; mono: he-aac up to 32k; lc above, \
            for more channels, and without --bitrate). Nothing is left under OUTPUT if encoding fails.
            """
    )

    @Argument(help: "The .wav or .pcm file to encode, or an object's URL (s3://bucket/key, https://host/path/file, env:NAME), copied in first.")
    var input: String

    @OptionGroup(title: "Object stores (an input's URL)") var objectStore: ObjectStoreOptions

    @Option(name: .shortAndLong, help: "The output file: .aac (ADTS), .m4a (MP4; AAC, or Opus, FLAC or ALAC with --codec), .mp3, .opus/.ogg or .flac.")
    var output: String

    @OptionGroup(title: "Encoding") var encoder: EncoderOptions

    @OptionGroup(title: "Encoding") var codecChoice: CodecOptions

    @Option(help: ArgumentHelp(
        "AAC scale-factor search (ffmpeg's -aac_coder): twoloop (ffmpeg's default; the same bytes as ffmpeg) or fast (half the CPU).",
        valueName: "coder"))
    var coder: CoderArgument = .twoloop

    @Flag(help: "With .m4a: fragmented, crash-safe output (moof+mdat every second, written in place).")
    var fragmented = false

    @Flag(help: "Encode what there is of a WAV that ends before its data chunk says (a cut recording).")
    var allowTruncated = false

    @OptionGroup(title: "Raw .pcm input") var rawInput: RawInputOptions

    // The names raw input had before `convert`'s: kept, hidden, for scripts.
    @Option(name: .customLong("sample-rate"), help: .hidden) var olderSampleRate: Int?
    @Option(name: .customLong("channels"), help: .hidden) var olderChannels: Int?
    @Option(name: .customLong("format"), help: .hidden) var olderFormat: RawSampleFormat?

    func run() throws {
        // An input in a store: copied into a staging directory, then as a file.
        if try RemoteObjects.ranWithLocalInput(self, input: \.input, objectStore: objectStore) { return }
        try checkDistinct(input: input, output: output)
        guard let container = Keyframe.formats.format(nameOf: FilePath(output)), container.contents.contains(.audioPackets),
              Keyframe.formats.entry(for: container)?.packetSink != nil else {
            throw CommandFailure("\(output): unknown output type; use \(Keyframe.formats.extensionList(holding: .audioPackets))")
        }
        let codec = try CodecArgument.resolve(codecChoice.codec, container: container, output: output, encoder: encoder)
        // Before the input is opened: a FIFO's open blocks until its writer comes.
        let control = StopSignals.cancellingControl()
        let inputPath = FilePath(input)
        let reader: PCMFileReader
        do {
            let raw: PCMFormat?
            if Keyframe.formats.detect(inputPath) == .rawPCM {
                raw = try rawInput.rawLayout(for: input, sampleRate: olderSampleRate, channels: olderChannels, format: olderFormat)
            } else {
                raw = nil
                try refuseRawLayout()
            }
            reader = try MediaFormatRegistry.containers.pcmInput(inputPath, as: PCMFileReader.self, options: MediaFormatRegistry.InputOptions(
                rawFormat: raw, allowsTruncatedWAV: allowTruncated))
        } catch let failure as PipelineError {
            let error: any Error = failure.underlying ?? failure
            if case .dataBeyondFile? = failure.underlying(as: WAVError.self) {
                throw CommandFailure("\(input): \(error) (a cut recording? --allow-truncated encodes what is there)", status: .unreadableInput)
            }
            throw CommandFailure(failure, naming: input)
        }
        let format = reader.format
        let line = ProgressLine(label: "encoding")
        var options = Transcode.EncodeOptions(bitrate: encoder.bitsPerSecond, coder: coder.coder,
                                              fragmentDuration: fragmented ? MediaTime(value: 1, timescale: 1) : nil,
                                              preferredBitrate: Transcode.defaultBitrate, profile: encoder.profile.choice)
        options.codec = codec
        options.codecs = Keyframe.codecs
        options.formats = Keyframe.formats
        let summary: Transcode.EncodeSummary
        do {
            summary = try Transcode.encode(reader, to: FilePath(output), options: options, control: control,
                                           progress: line.update)
        } catch {
            throw CommandFailure(error, naming: input)
        }
        let seconds = Double(summary.inputFrames) / Double(summary.sampleRate)
        line.finish(mediaSeconds: seconds, totalSeconds: seconds)
        print("\(output): \(Terminal.fixed(seconds, digits: 3)) s, \(summary.sampleRate) Hz, \(format.channelCount) ch → "
              + "\(summary.packets) \(CodecArgument.displayName(codec)) packets\(codec == .aac ? ProfileArgument.tag(summary.profile) : "")"
              + (summary.bitrate > 0 ? " at \(summary.bitrate) b/s" : "") + " (priming \(summary.priming), padding \(summary.padding))")
        try ExitStatus.finish(damage: summary.damage, in: input)
    }

    /// A WAV (or any input with a header) gives its own layout: the raw-input options, under
    /// their older names or their own, are a usage error that says what to use instead.
    private func refuseRawLayout() throws {
        let convert = "keyframe convert \(input) -o \(output)"
        if let rate = olderSampleRate ?? rawInput.inputSampleRate {
            let name = olderSampleRate != nil ? "--sample-rate" : "--input-sample-rate"
            throw CommandFailure("\(name) \(rate): \(input) gives its own rate (--sample-rate and --input-sample-rate describe raw .pcm "
                                 + "input); to resample, use `\(convert) --sample-rate \(rate)`", status: .usage)
        }
        if let channels = olderChannels ?? rawInput.inputChannels {
            let name = olderChannels != nil ? "--channels" : "--input-channels"
            throw CommandFailure("\(name) \(channels): \(input) gives its own channels (--channels and --input-channels describe raw "
                                 + ".pcm input); to downmix, use `\(convert) --channels \(channels)`", status: .usage)
        }
    }
}
