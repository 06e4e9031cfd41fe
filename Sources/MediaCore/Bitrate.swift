/// A bitrate as people write it: `96000`, `96k` or `0.128M` (decimal kilo and mega, as
/// FFmpeg's `-b:a` and Icecast's `ice-bitrate` count).
///
/// The one parser of bitrates in text: the command line's options and the publishing URLs'
/// `#bitrate=` read through it. Whether a bitrate fits an encoder is the encoder's to say, for
/// the output's rate and channels.
public struct Bitrate: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Bits per second.
    public let bitsPerSecond: Int

    /// `bitsPerSecond` bits per second.
    public init(bitsPerSecond: Int) { self.bitsPerSecond = bitsPerSecond }

    /// The bitrate written in `text`: a positive number, optionally followed by `k` (×1000) or
    /// `m` (×1,000,000), in either case; `nil` for anything else, zero, or a bitrate of
    /// 2³¹ b/s or more.
    public init?(_ text: some StringProtocol) {
        let lower = text.lowercased()
        var multiplier = 1.0
        var number = Substring(lower)
        if lower.hasSuffix("k") {
            multiplier = 1000
            number = number.dropLast()
        } else if lower.hasSuffix("m") {
            multiplier = 1_000_000
            number = number.dropLast()
        }
        guard let value = Double(number), value.isFinite, value > 0, value * multiplier < Double(Int32.max) else { return nil }
        let bits = Int((value * multiplier).rounded())
        guard bits > 0 else { return nil }
        bitsPerSecond = bits
    }

    /// `128k` for whole kilobits, else the bits per second: `96000` → `96k`, `132300` → `132300`.
    public var description: String {
        bitsPerSecond % 1000 == 0 ? "\(bitsPerSecond / 1000)k" : "\(bitsPerSecond)"
    }

    /// `low...high` in ``description``'s words: `8k...132300`.
    public static func describe(_ range: ClosedRange<Int>) -> String {
        "\(Bitrate(bitsPerSecond: range.lowerBound))...\(Bitrate(bitsPerSecond: range.upperBound))"
    }

    public static func < (a: Bitrate, b: Bitrate) -> Bool { a.bitsPerSecond < b.bitsPerSecond }
}
