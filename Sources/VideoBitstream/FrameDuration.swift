/// Helpers for the frame duration a VUI gives (ITU-T H.264 E.2.1, H.265 E.3.1).
enum FrameDuration {
    /// `value / timescale` reduced by their greatest common divisor; `nil` when either is not
    /// positive or the reduced timescale does not fit a `MediaTime` (32 bits).
    static func reduced(_ value: Int64, _ timescale: Int64) -> (value: Int64, timescale: Int64)? {
        guard value > 0, timescale > 0 else { return nil }
        var (a, b) = (value, timescale)
        while b != 0 { (a, b) = (b, a % b) }
        let result = (value / a, timescale / a)
        guard result.1 <= Int64(Int32.max) else { return nil }
        return result
    }
}
