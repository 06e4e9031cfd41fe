/// The gapless playback information of the iTunes `----:com.apple.iTunes:iTunSMPB` tag: how
/// many samples of encoder delay (priming) come before the audio, how many of padding after it,
/// and the length of the original audio.
///
/// The tag's text is a row of hexadecimal fields, for example
/// `" 00000000 00000840 000001C0 00000000000A1234 00000000 …"`: the 2nd is the priming, the
/// 3rd the padding, the 4th (16 digits) the original sample count. The other fields are zero
/// in every file Apple and the common encoders write.
public struct ITunesGaplessInfo: Sendable, Hashable {
    /// Encoder delay in samples (per channel) before the first real sample.
    public var priming: Int
    /// Padding samples after the last real sample.
    public var padding: Int
    /// The number of samples of the original audio.
    public var originalSampleCount: Int64

    /// Gapless information with every field given.
    public init(priming: Int, padding: Int, originalSampleCount: Int64) {
        self.priming = priming
        self.padding = padding
        self.originalSampleCount = originalSampleCount
    }

    /// Parses the tag's text; `nil` unless it holds at least four hexadecimal fields (of up to
    /// 16 digits) whose values fit.
    public init?(text: String) {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\0" })
        guard fields.count >= 4 else { return nil }
        var values: [UInt64] = []
        for field in fields.prefix(4) {
            guard field.count <= 16, let value = UInt64(field, radix: 16) else { return nil }
            values.append(value)
        }
        guard values[1] <= UInt64(UInt32.max), values[2] <= UInt64(UInt32.max), values[3] <= UInt64(Int64.max) else { return nil }
        self.init(priming: Int(values[1]), padding: Int(values[2]), originalSampleCount: Int64(values[3]))
    }

    /// The tag's text as iTunes (and fdkaac) write it: a leading space, then twelve fields of
    /// upper-case hexadecimal separated by spaces, the 4th 16 digits and the others 8; values
    /// outside a field's range are clamped to it.
    public var text: String {
        func hex(_ value: UInt64, digits: Int) -> String {
            let text = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        func clamp32(_ value: Int) -> UInt64 { UInt64(min(max(value, 0), Int(UInt32.max))) }
        let fields = [hex(0, digits: 8), hex(clamp32(priming), digits: 8), hex(clamp32(padding), digits: 8),
                      hex(UInt64(max(originalSampleCount, 0)), digits: 16)] + Array(repeating: hex(0, digits: 8), count: 8)
        return " " + fields.joined(separator: " ")
    }
}
