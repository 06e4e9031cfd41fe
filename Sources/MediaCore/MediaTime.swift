/// An exact rational time, `value / timescale` seconds, as the media timescales of ISO/IEC
/// 14496-12 (8.2.2, 8.4.2) count it (Core Media's `CMTime` on Apple's platforms).
///
/// Comparison is exact across timescales (cross-multiplied in 128 bits). Arithmetic never traps:
/// ``adding(_:)``, ``subtracting(_:)``, ``multiplied(by:)`` and ``converted(to:rounding:)`` throw
/// ``MediaTimeError`` when a result does not fit. Two times are equal when they denote the same
/// instant (`1/2 == 2/4`), and hash alike.
public struct MediaTime: Sendable, CustomStringConvertible {
    /// The numerator: a count of `1/timescale`-second units.
    public let value: Int64
    /// Units per second; always positive.
    public let timescale: Int32

    /// The time `value / timescale` seconds.
    ///
    /// - Precondition: `timescale > 0`. For values from a file use ``init(validatingValue:timescale:)``.
    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime timescale must be positive")
        self.value = value
        self.timescale = timescale
    }

    /// The time `value / timescale` seconds, for values that come from untrusted input.
    public init(validatingValue value: Int64, timescale: Int64) throws(MediaTimeError) {
        guard timescale > 0, timescale <= Int64(Int32.max) else { throw .invalidTimescale(timescale) }
        self.value = value
        self.timescale = Int32(timescale)
    }

    /// Time zero.
    public static let zero = MediaTime(value: 0, timescale: 1)

    /// The time in seconds, as a floating-point approximation.
    public var seconds: Double { Double(value) / Double(timescale) }

    /// A sentence for people: what it is and, for errors, where.
    public var description: String { "\(value)/\(timescale)" }
}

/// Why a ``MediaTime`` operation could not give an exact result.
public enum MediaTimeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A timescale that is zero, negative or wider than 32 bits.
    case invalidTimescale(Int64)
    /// The result of `operation` does not fit in 64-bit value / 32-bit timescale.
    case overflow(operation: String)

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        switch self {
        case .invalidTimescale(let scale): "invalid timescale \(scale): must be 1...\(Int32.max)"
        case .overflow(let operation): "media time overflow in \(operation)"
        }
    }
}

extension MediaTime: Comparable, Hashable {
    /// Whether `lhs` is earlier than `rhs`, compared exactly.
    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) < Int128(rhs.value) * Int128(lhs.timescale)
    }

    /// Whether the two denote the same instant (`1/2 == 2/4`).
    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        Int128(lhs.value) * Int128(rhs.timescale) == Int128(rhs.value) * Int128(lhs.timescale)
    }

    /// Hashes the reduced fraction, so equal instants hash alike.
    public func hash(into hasher: inout Hasher) {
        let divisor = greatestCommonDivisor(value.magnitude, UInt64(timescale))
        hasher.combine(value / Int64(divisor))
        hasher.combine(Int64(timescale) / Int64(divisor))
    }
}

/// The greatest common divisor of `a` and `b` (1 when both are 0).
@usableFromInline
package func greatestCommonDivisor(_ a: UInt64, _ b: UInt64) -> UInt64 {
    var (x, y) = (a, b)
    while y != 0 { (x, y) = (y, x % y) }
    return x == 0 ? 1 : x
}
