import Foundation
import SpectralBandReplication

/// The encoder's 64-band analysis evaluated term by term in Double (3GPP TS 26.404 §5.2 with the
/// `2n − 1` phase ``QMFAnalysisBank`` documents): the yardstick for its folded SIMD evaluation.
struct ReferenceQMFAnalysis64 {
    private var x = [Double](repeating: 0, count: 640)
    private let window = QMFPrototype.coefficients.map(Double.init)

    /// One slot from 64 new samples, oldest first.
    mutating func analyze(_ samples: ArraySlice<Float>) -> (real: [Double], imaginary: [Double]) {
        precondition(samples.count == 64)
        x.replaceSubrange(0..<0, with: samples.reversed().map(Double.init))
        x.removeLast(64)
        var u = [Double](repeating: 0, count: 128)
        for n in 0..<128 {
            for j in 0..<5 { u[n] += x[n + 128 * j] * window[n + 128 * j] }
        }
        var real = [Double](repeating: 0, count: 64), imaginary = real
        for k in 0..<64 {
            for n in 0..<128 {
                let phase = Double.pi * (Double(k) + 0.5) * (2 * Double(n) - 1) / 128
                real[k] += u[n] * cos(phase)
                imaginary[k] += u[n] * sin(phase)
            }
        }
        return (real, imaginary)
    }
}
