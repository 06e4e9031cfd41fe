import ArgumentParser

/// A bitrate on the command line: `96000`, `96k` or `0.5M`.
struct Bitrate: ExpressibleByArgument {
    let bitsPerSecond: Int

    init?(argument: String) {
        let text = argument.lowercased()
        var multiplier = 1.0
        var number = Substring(text)
        if text.hasSuffix("k") { multiplier = 1000; number = number.dropLast() }
        if text.hasSuffix("m") { multiplier = 1_000_000; number = number.dropLast() }
        guard let value = Double(number), value > 0, value * multiplier < Double(Int32.max) else { return nil }
        bitsPerSecond = Int((value * multiplier).rounded())
    }

    /// How `--help` shows a default: `128k`, or the bits per second when not whole kilobits.
    var defaultValueDescription: String {
        bitsPerSecond % 1000 == 0 ? "\(bitsPerSecond / 1000)k" : "\(bitsPerSecond)"
    }
}
