/// Arithmetic on values that come from files: never traps, saturates at the bounds. A sum that
/// saturates belongs to a file that is broken anyway; the parsers check what matters (offsets
/// inside the file) separately.
extension Int64 {
    /// `self + other`, clamped to `Int64.min...Int64.max`.
    @inlinable
    public func saturatingAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, clamped to `Int64.min...Int64.max`.
    @inlinable
    public func saturatingSubtracting(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }

    /// `self × other`, clamped to `Int64.min...Int64.max`.
    @inlinable
    public func saturatingMultiplied(by other: Int64) -> Int64 {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) != (other < 0) ? .min : .max) : product
    }
}

extension Int64 {
    /// `value` rounded to the nearest integer and clamped to `Int64`'s range; NaN is 0. For
    /// durations and counts derived from file values, which can be absurd.
    @inlinable
    public init(saturating value: Double) {
        let rounded = value.rounded()
        if rounded.isNaN {
            self = 0
        } else if rounded >= 9.2e18 {
            self = .max
        } else if rounded <= -9.2e18 {
            self = .min
        } else {
            self = Int64(rounded)
        }
    }
}
