import ArgumentParser
import KeyFrameKit

/// `keyframe devices`: the ALSA PCMs that can record and play.
struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List ALSA capture and playback devices.",
        discussion: """
            The PCM names ALSA knows (snd_device_name_hint): sound cards, `default`, and plugins such as \
            `pulse`. Give a name to `record --device` or `play --device`. A listed name may still fail to \
            open (ALSA lists what is configured); a machine without a sound card may list none but \
            `null` and `pulse`.
            """
    )

    @Flag(help: "Print {\"capture\": [...], \"playback\": [...]} as JSON on stdout.")
    var json = false

    func run() throws {
        ALSALibrary.silenceDiagnostics()
        let devices: [AudioDevice]
        do { devices = try AudioDeviceList.all() } catch { throw CommandFailure("listing ALSA devices: \(error)") }
        let capture = devices.filter(\.canCapture), playback = devices.filter(\.canPlay)
        if json {
            let entry = { (device: AudioDevice) in DeviceEntry(name: device.name, description: device.description) }
            try JSONOutput.print(DeviceListReport(capture: capture.map(entry), playback: playback.map(entry)))
            return
        }
        let width = devices.map(\.name.count).max() ?? 0
        for (title, list) in [("capture", capture), ("playback", playback)] {
            print("\(title) devices:")
            if list.isEmpty { print("  (none)") }
            for device in list {
                let summary = device.description.split(separator: "\n").map { $0.trimmingCharacters(in: " ") }.joined(separator: " — ")
                let name = device.name + String(repeating: " ", count: max(0, width - device.name.count))
                print("  \(name)  \(summary)")
            }
        }
    }
}

/// `devices --json`.
struct DeviceListReport: Encodable {
    var capture: [DeviceEntry]
    var playback: [DeviceEntry]
}

/// One device in `devices --json`.
struct DeviceEntry: Encodable {
    var name: String
    var description: String
}

extension Substring {
    fileprivate func trimmingCharacters(in characters: Character) -> String {
        String(drop { $0 == characters }.reversed().drop { $0 == characters }.reversed())
    }
}
