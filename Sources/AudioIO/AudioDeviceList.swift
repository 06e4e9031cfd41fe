internal import CALSA
#if canImport(Glibc)
internal import Glibc
#endif

/// One PCM ALSA knows of, from `snd_device_name_hint`.
public struct AudioDevice: Sendable, Hashable {
    /// The name to open (`default`, `sysdefault:CARD=PCH`, `pulse`, …).
    public var name: String
    /// ALSA's description (may span lines: card, then device).
    public var description: String
    /// Whether it can record.
    public var canCapture: Bool
    /// Whether it can play.
    public var canPlay: Bool
}

/// The PCM devices ALSA lists (`snd_device_name_hint` over `"pcm"`, with `NAME`, `DESC` and
/// `IOID`), for choosing a device to capture from or play on. Devices whose `IOID` is absent do both directions. The list may be empty on a machine
/// without a sound card, and may name devices that fail to open (ALSA lists configured names).
public enum AudioDeviceList {
    /// Every PCM ALSA lists, in its order.
    public static func all() throws(ALSAError) -> [AudioDevice] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        try ALSAError.check(snd_device_name_hint(-1, "pcm", &hints), device: "pcm", operation: "listing devices")
        guard let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var devices: [AudioDevice] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = value(hint, "NAME") else { continue }
            let direction = value(hint, "IOID")
            devices.append(AudioDevice(
                name: name,
                description: value(hint, "DESC") ?? "",
                canCapture: direction == nil || direction == "Input",
                canPlay: direction == nil || direction == "Output"
            ))
        }
        return devices
    }

    /// The devices that can record.
    public static func capture() throws(ALSAError) -> [AudioDevice] {
        try all().filter(\.canCapture)
    }

    /// The devices that can play.
    public static func playback() throws(ALSAError) -> [AudioDevice] {
        try all().filter(\.canPlay)
    }

    /// One field of a hint, freed after copying.
    private static func value(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
        guard let text = snd_device_name_get_hint(hint, key) else { return nil }
        defer { free(text) }
        return String(cString: text)
    }
}
