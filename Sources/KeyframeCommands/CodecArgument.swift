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
        guard Keyframe.codecs.encoders.contains(where: { $0.codec == codec }) else { return nil }
        self.codec = codec
    }

    /// The names the tool encodes, for `--help` and errors.
    static var allValueStrings: [String] {
        var names: [String] = []
        for entry in Keyframe.codecs.encoders.reversed() where !names.contains(entry.codec.name) { names.append(entry.codec.name) }
        return names
    }

    /// The codec a command writes into `container`: `asked`, checked against what the container
    /// holds, or the container's own default; `--profile` other than `lc` only with AAC.
    ///
    /// - Throws: a usage error naming the codec and the container when one cannot hold the other.
    static func resolve(_ asked: CodecArgument?, container: MediaFileFormat, output: String, profile: ProfileArgument) throws -> AudioCodecID {
        guard let codec = asked?.codec ?? container.defaultAudioCodec else {
            throw CommandFailure("\(output): \(container) holds no compressed audio", status: .usage)
        }
        do { try container.check(holds: codec, path: FilePath(output)) } catch {
            throw CommandFailure("--codec \(codec): \(error)", status: .usage)
        }
        if codec != .aac, profile != .lc {
            throw CommandFailure("--profile \(profile.rawValue): profiles are AAC's; \(codec) has none", status: .usage)
        }
        return codec
    }
}
