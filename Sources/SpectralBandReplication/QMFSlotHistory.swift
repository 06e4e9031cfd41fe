/// The QMF slots of one channel the encoder still needs, by absolute slot number: slot `m` holds
/// the 64 complex subband samples the analysis made from input samples up to `64m + 63`.
///
/// Slots before the stream (negative numbers) read as silence; slots are dropped from the front
/// once no frame needs them, so the memory stays at about three frames.
public struct QMFSlotHistory: Sendable {
    /// Subbands per slot.
    public static let bandCount = 64

    /// The number of the first slot held.
    public private(set) var firstSlot = 0
    /// Real parts, 64 per slot, from ``firstSlot``.
    @usableFromInline private(set) var real: [Float] = []
    /// Imaginary parts, 64 per slot, from ``firstSlot``.
    @usableFromInline private(set) var imaginary: [Float] = []

    /// An empty history starting at slot 0.
    public init() {
        real.reserveCapacity(Self.bandCount * 128)
        imaginary.reserveCapacity(Self.bandCount * 128)
    }

    /// The number one past the last slot held.
    public var endSlot: Int { firstSlot + real.count / Self.bandCount }

    /// Appends the next slot.
    public mutating func append(real newReal: UnsafeBufferPointer<Float>, imaginary newImaginary: UnsafeBufferPointer<Float>) {
        real.append(contentsOf: newReal)
        imaginary.append(contentsOf: newImaginary)
    }

    /// Drops the slots before `slot`.
    public mutating func discard(before slot: Int) {
        let count = min(max(0, slot - firstSlot), endSlot - firstSlot)
        guard count > 0 else { return }
        real.removeFirst(count * Self.bandCount)
        imaginary.removeFirst(count * Self.bandCount)
        firstSlot += count
    }

    /// The energy |X(k, m)|² of subband `band` in slot `slot`; 0 outside what is held.
    @inlinable
    public func energy(band: Int, slot: Int) -> Float {
        let (re, im) = sample(band: band, slot: slot)
        return re * re + im * im
    }

    /// X(k, m) of subband `band` in slot `slot` as (real, imaginary); 0 outside what is held
    /// (and for a subband outside 0..<64).
    @inlinable
    public func sample(band: Int, slot: Int) -> (Float, Float) {
        guard slot >= firstSlot, slot < endSlot, band >= 0, band < Self.bandCount else { return (0, 0) }
        let index = (slot - firstSlot) * Self.bandCount + band
        return (real[index], imaginary[index])
    }
}
