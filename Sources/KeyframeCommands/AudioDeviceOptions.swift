import ArgumentParser
import KeyFrameKit

/// `--device` and `--alsa-config`, shared by `record` and `play`.
struct AudioDeviceOptions: ParsableArguments {
    @Option(help: "The ALSA PCM: default, pulse, hw:1,0, plughw:1,0, or a name from --alsa-config (see `keyframe devices`).")
    var device = "default"

    @Option(name: .customLong("alsa-config"), help: ArgumentHelp(
        "An asound.conf-syntax file read after the system's ALSA configuration; the PCMs it defines can be given to --device.",
        valueName: "file"))
    var alsaConfig: String?

    /// The configuration to look the device up in: the system's plus `--alsa-config`, or `nil`
    /// for the system's alone (which also honours ALSA_CONFIG_PATH).
    func configuration() throws -> ALSAConfiguration? {
        ALSALibrary.silenceDiagnostics()
        guard let alsaConfig else { return nil }
        do { return try ALSAConfiguration(systemConfigurationAnd: [FilePath(alsaConfig)]) } catch {
            throw CommandFailure("--alsa-config \(alsaConfig): \(error)")
        }
    }
}
