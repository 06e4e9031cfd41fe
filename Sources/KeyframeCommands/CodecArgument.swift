import ArgumentParser
import KeyFrameKit

/// `--codec aac|mp3|opus|flac|alac`: the codec encoded, by the name the codec registry knows it
/// by (``/MediaCore/AudioCodecID``); a codec of another package registered in the tool's registry
/// is one more name.
struct CodecArgument: ExpressibleByArgument, Hashable {
    /// The codec.
    var codec: AudioCodecID

    /// The codec named `argument`, if the tool encodes it.
    init?(argument: String) {
        let codec = AudioCodecID(argument.lowercased())
        guard Self.allValueStrings.contains(codec.name) else { return nil }
        self.codec = codec
    }

    /// The names the tool writes: codecs it encodes that a container it writes holds, in the
    /// containers' order (`aac, opus, flac, alac, mp3`), for `--help` and errors.
    static var allValueStrings: [String] {
        var names: [String] = []
        for format in Keyframe.formats.formats where Keyframe.formats.entry(for: format)?.packetSink != nil {
            for codec in format.audioCodecs where !names.contains(codec.name)
            && Keyframe.codecs.encoders.contains(where: { $0.codec == codec }) { names.append(codec.name) }
        }
        return names
    }

    /// `codec` as people write it: AAC, MP3, Opus, FLAC, ALAC; another codec's name as it is.
    static func displayName(_ codec: AudioCodecID) -> String {
        switch codec {
        case .aac, .mp3, .flac, .alac: codec.name.uppercased()
        case .opus: "Opus"
        default: codec.name
        }
    }

    /// The codec a command writes into `container`: `asked`, checked against what the container
    /// holds, or the container's own default; `--profile` other than `lc` only with AAC;
    /// `--bitrate` only with a lossy codec; `sampleRate` (`--sample-rate`) one the codec takes.
    ///
    /// - Throws: a usage error naming the codec and the container when one cannot hold the other,
    ///   and naming the option it refuses.
    static func resolve(_ asked: CodecArgument?, container: MediaFileFormat, output: String, encoder: EncoderOptions,
                        sampleRate: Int? = nil) throws -> AudioCodecID {
        let codec = try resolve(asked, container: container, output: output, profile: encoder.profile)
        if encoder.bitrate != nil, codec == .flac || codec == .alac {
            throw CommandFailure("--bitrate: \(displayName(codec)) is lossless and takes none", status: .usage)
        }
        if let sampleRate, codec != .aac, let rates = Keyframe.codecs.sampleRates(for: codec), !rates.contains(sampleRate) {
            throw CommandFailure("--sample-rate \(sampleRate): \(displayName(codec)) takes \(rates.sorted().map(String.init).joined(separator: ", ")) Hz",
                                 status: .usage)
        }
        return codec
    }

    /// The codec a command writes into `container` (``resolve(_:container:output:encoder:sampleRate:)``
    /// without the bitrate and rate checks).
    static func resolve(_ asked: CodecArgument?, container: MediaFileFormat, output: String, profile: ProfileArgument) throws -> AudioCodecID {
        guard let codec = asked?.codec ?? container.defaultAudioCodec else {
            throw CommandFailure("\(output): \(container) holds no compressed audio", status: .usage)
        }
        do { try container.check(holds: codec, path: FilePath(output), described: Keyframe.codecs.descriptions) } catch {
            throw CommandFailure("--codec \(codec): \(error)", status: .usage)
        }
        if codec != .aac, profile != .lc {
            throw CommandFailure("--profile \(profile.rawValue): profiles are AAC's; \(codec) has none", status: .usage)
        }
        return codec
    }
}

/// `--codec`, on the commands that write any codec a container holds (`encode`, `convert`).
struct CodecOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The codec: \(CodecArgument.allValueStrings.joined(separator: ", ")). Default: the output's own (.m4a, .mp4 and .aac: AAC; "
            + ".mp3: MP3; .opus and .ogg: Opus; .flac: FLAC). --profile is AAC's; a codec the output cannot hold is refused.",
        valueName: "codec"))
    var codec: CodecArgument?
}

/// A `--codec` that takes any name ``CodecArgument`` takes, so that a codec the command cannot
/// write is refused by the command in its own words, and whose `--help` lists the codecs it
/// writes (``lists(_:)``).
protocol ListedCodecArgument: ExpressibleByArgument, Hashable {
    /// The codec.
    var codec: AudioCodecID { get }
    init(codec: AudioCodecID)
    /// Whether `--help` lists `codec`.
    static func lists(_ codec: AudioCodecID) -> Bool
}

extension ListedCodecArgument {
    /// The codec named `argument`, if the tool encodes it.
    init?(argument: String) {
        guard let named = CodecArgument(argument: argument) else { return nil }
        self.init(codec: named.codec)
    }

    /// The codecs the tool encodes that the command writes.
    static var allValueStrings: [String] { CodecArgument.allValueStrings.filter { lists(AudioCodecID($0)) } }
}

/// `--codec` of the commands that write fMP4 segments (`package`, and `record` into .m4a or
/// `--hls`): `--help` lists the codecs whose ISO BMFF sample entry is registered (aac, opus,
/// flac, alac).
struct SegmentCodecArgument: ListedCodecArgument {
    let codec: AudioCodecID
    init(codec: AudioCodecID) { self.codec = codec }
    static func lists(_ codec: AudioCodecID) -> Bool { Keyframe.codecs.descriptions.matching(codec) != nil }
}

/// `--codec` of `publish`: `--help` lists the codecs some registered live destination carries
/// (aac, mp3, opus).
struct LiveCodecArgument: ListedCodecArgument {
    let codec: AudioCodecID
    init(codec: AudioCodecID) { self.codec = codec }
    static func lists(_ codec: AudioCodecID) -> Bool { Keyframe.destinations.entries.contains { $0.codecs.contains(codec) } }
}
