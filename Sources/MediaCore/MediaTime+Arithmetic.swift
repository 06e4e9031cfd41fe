extension MediaTime {
    /// How a conversion to a coarser timescale rounds.
    public enum Rounding: Sendable, Hashable {
        /// Toward negative infinity.
        case down
        /// Toward positive infinity.
        case up
        /// Toward zero.
        case towardZero
        /// To the nearest unit; halves away from zero.
        case nearest
        /// Only exact conversions; anything else throws.
        case exact
    }

    /// This time expressed in `timescale` units.
    public func converted(to timescale: Int32, rounding: Rounding = .nearest) throws(MediaTimeError) -> MediaTime {
        guard timescale > 0 else { throw .invalidTimescale(Int64(timescale)) }
        if timescale == self.timescale { return self }
        let numerator = Int128(value) * Int128(timescale)
        let denominator = Int128(self.timescale)
        var quotient = numerator / denominator
        let remainder = numerator % denominator
        if remainder != 0 {
            switch rounding {
            case .towardZero: break
            case .down: if numerator < 0 { quotient -= 1 }
            case .up: if numerator > 0 { quotient += 1 }
            case .nearest:
                if remainder.magnitude * 2 >= denominator.magnitude { quotient += numerator < 0 ? -1 : 1 }
            case .exact: throw .overflow(operation: "exact conversion of \(self) to timescale \(timescale)")
            }
        }
        guard let result = Int64(exactly: quotient) else {
            throw .overflow(operation: "conversion of \(self) to timescale \(timescale)")
        }
        return MediaTime(value: result, timescale: timescale)
    }

    /// The sum, in the least common multiple of the two timescales (exact, or an error).
    public func adding(_ other: MediaTime) throws(MediaTimeError) -> MediaTime {
        let (a, b, scale) = try Self.commonTimescale(self, other, operation: "\(self) + \(other)")
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { throw .overflow(operation: "\(self) + \(other)") }
        return MediaTime(value: sum, timescale: scale)
    }

    /// The difference, in the least common multiple of the two timescales (exact, or an error).
    public func subtracting(_ other: MediaTime) throws(MediaTimeError) -> MediaTime {
        let (a, b, scale) = try Self.commonTimescale(self, other, operation: "\(self) - \(other)")
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        guard !overflow else { throw .overflow(operation: "\(self) - \(other)") }
        return MediaTime(value: difference, timescale: scale)
    }

    /// This time multiplied by an integer factor, in the same timescale.
    public func multiplied(by factor: Int64) throws(MediaTimeError) -> MediaTime {
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        guard !overflow else { throw .overflow(operation: "\(self) × \(factor)") }
        return MediaTime(value: product, timescale: timescale)
    }

    /// The absolute value of the time.
    public var magnitude: MediaTime {
        get throws(MediaTimeError) {
            guard value != .min else { throw .overflow(operation: "magnitude of \(self)") }
            return MediaTime(value: value < 0 ? -value : value, timescale: timescale)
        }
    }

    private static func commonTimescale(
        _ lhs: MediaTime, _ rhs: MediaTime, operation: @autoclosure () -> String
    ) throws(MediaTimeError) -> (Int64, Int64, Int32) {
        if lhs.timescale == rhs.timescale { return (lhs.value, rhs.value, lhs.timescale) }
        let gcd = Int64(greatestCommonDivisor(UInt64(lhs.timescale), UInt64(rhs.timescale)))
        let lcm = Int64(lhs.timescale) / gcd * Int64(rhs.timescale)
        guard let scale = Int32(exactly: lcm) else { throw .overflow(operation: operation()) }
        let (a, overflowA) = lhs.value.multipliedReportingOverflow(by: lcm / Int64(lhs.timescale))
        let (b, overflowB) = rhs.value.multipliedReportingOverflow(by: lcm / Int64(rhs.timescale))
        guard !overflowA, !overflowB else { throw .overflow(operation: operation()) }
        return (a, b, scale)
    }
}
