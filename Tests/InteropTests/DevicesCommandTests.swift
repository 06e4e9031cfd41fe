import Foundation
import Testing
import TestSupport

/// Issue 6, "Done means" 6: `keyframe devices --json` is one valid JSON object with `capture` and
/// `playback` arrays of `{name, description}` (both listing ALSA's `null` and, with
/// libasound2-plugins installed by `make deps`, `pulse`), the plain listing names the same
/// devices, and a device that does not exist is a clear error naming it, for `record` and `play`:
/// a non-zero exit, no crash, no hang, and nothing left under the output name.
@Suite(.blocking) struct DevicesCommandTests {
    @Test(.hangGuard(minutes: 15))
    func devicesJSONListsCaptureAndPlayback() throws {
        let result = try Subprocess.run(try ExternalTool.keyframe, ["devices", "--json"], environment: ProcessInfo.processInfo.environment,
                                        timeout: .seconds(30))
        try #require(result.status == 0, "devices --json exited \(result.status): \(result.standardError)")
        let object = try CaptureCheck.json(result, "devices --json")
        for key in ["capture", "playback"] {
            let list = try #require(object[key] as? [Any], "devices --json: no \(key) array in \(object)")
            let entries = list.compactMap { $0 as? [String: Any] }
            #expect(entries.count == list.count && entries.allSatisfy { $0["name"] is String && $0["description"] is String },
                    "devices --json: \(key) entries must be {name, description} strings: \(list)")
            let names = entries.compactMap { $0["name"] as? String }
            #expect(names.contains("null") && names.contains("pulse"), "devices --json: \(key) lists \(names); want null and pulse among them")
            #expect(Set(names).count == names.count, "devices --json: \(key) lists a name twice: \(names)")
        }
    }

    @Test(.hangGuard(minutes: 15))
    func devicesListsTheSameNames() throws {
        let plain = try ExternalTool.succeed(try ExternalTool.keyframe, ["devices"])
        let object = try CaptureCheck.json(try ExternalTool.succeed(try ExternalTool.keyframe, ["devices", "--json"]), "devices --json")
        let names = ["capture", "playback"].flatMap { ((object[$0] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } }
        #expect(!names.isEmpty)
        for name in names {
            #expect(plain.standardOutput.contains(name), "`keyframe devices` does not name \(name): \(plain.standardOutput)")
        }
    }

    @Test(.hangGuard(minutes: 15), arguments: [RecordContainer.wav, .m4a])
    func recordFromAMissingDeviceIsAClearError(container: RecordContainer) throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.\(container.rawValue)").path
        let result = try Subprocess.run(try ExternalTool.keyframe, ["record", output, "--device", "nope", "--duration", "1"],
                                        environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
        #expect(result.status != 0, "record --device nope exited 0")
        #expect(result.standardError.contains("'nope'") || result.standardError.contains("\"nope\""),
                "record --device nope: stderr should name the device: \(result.standardError)")
        #expect(!result.standardError.contains("Fatal error"), "record --device nope crashed: \(result.standardError)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(left.isEmpty, "record --device nope left \(left)")
    }

    @Test(.hangGuard(minutes: 15))
    func playToAMissingDeviceIsAClearError() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("in.wav").path
        try CaptureCheck.writeWAV(CaptureCheck.tone(frames: 4410, rate: 44100, frequencies: [1000, 1500]), rate: 44100, channels: 2, to: wav)
        let result = try Subprocess.run(try ExternalTool.keyframe, ["play", wav, "--device", "nope"],
                                        environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
        #expect(result.status != 0, "play --device nope exited 0")
        #expect(result.standardError.contains("'nope'") || result.standardError.contains("\"nope\""),
                "play --device nope: stderr should name the device: \(result.standardError)")
        #expect(!result.standardError.contains("Fatal error"), "play --device nope crashed: \(result.standardError)")
    }

    /// A device defined in no configuration, asked for with an `--alsa-config` that defines others,
    /// is the same clear error; and a missing `--alsa-config` file is an error naming the file.
    @Test(.hangGuard(minutes: 15))
    func alsaConfigurationErrorsAreClear() throws {
        let directory = try ExternalTool.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = try CaptureCheck.alsaConfiguration(in: directory, input: "/dev/zero")
        let output = directory.appendingPathComponent("out.wav").path
        let undefined = try Subprocess.run(try ExternalTool.keyframe,
                                           ["record", output, "--device", "nope", "--alsa-config", configuration, "--duration", "1"],
                                           environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
        #expect(undefined.status != 0 && undefined.standardError.contains("nope"), "record --device nope --alsa-config: \(undefined.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output), "record --device nope left \(output)")

        let missing = directory.appendingPathComponent("missing.conf").path
        let result = try Subprocess.run(try ExternalTool.keyframe,
                                        ["record", output, "--device", "kf_in", "--alsa-config", missing, "--duration", "1"],
                                        environment: ProcessInfo.processInfo.environment, timeout: .seconds(30))
        #expect(result.status != 0 && result.standardError.contains("missing.conf"),
                "record --alsa-config (missing file) exited \(result.status): \(result.standardError)")
        #expect(!result.standardError.contains("Fatal error"), "record --alsa-config (missing file) crashed: \(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output), "record with a missing --alsa-config left \(output)")
    }
}
