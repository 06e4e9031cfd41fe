import Foundation
import SpectralBandReplication

/// The decoder's 32-band complex analysis filter bank of ISO/IEC 14496-3 4.6.18.4.1, straight from
/// the spec text in Double (FFmpeg's `sbr_qmf_analysis` with its `-2·32768` MDCT scale on ±1.0
/// floats is the same thing on 16-bit-scaled input):
/// shift `x[0..<320]` by 32 (newest at 0), `z[n] = x[n]·c[2n]`, `u[n] = Σ_j z[n + 64j]`,
/// `W[k] = Σ_{n=0..<64} 2·u[n]·exp(iπ(k+½)(2n−½)/64)`, k = 0..<32.
struct DecoderQMFAnalysis32 {
    private var x = [Double](repeating: 0, count: 320)
    private let window = QMFPrototype.coefficients.enumerated().filter { $0.offset % 2 == 0 }.map { Double($0.element) }

    /// One slot from 32 new half-rate samples, oldest first: (real, imaginary) per band.
    mutating func analyze(_ samples: ArraySlice<Float>) -> (real: [Double], imaginary: [Double]) {
        precondition(samples.count == 32)
        x.replaceSubrange(0..<0, with: samples.reversed().map(Double.init))
        x.removeLast(32)
        var u = [Double](repeating: 0, count: 64)
        for n in 0..<64 {
            for j in 0..<5 { u[n] += x[n + 64 * j] * window[n + 64 * j] }
        }
        var real = [Double](repeating: 0, count: 32), imaginary = real
        for k in 0..<32 {
            for n in 0..<64 {
                let phase = Double.pi * (Double(k) + 0.5) * (2 * Double(n) - 0.5) / 64
                real[k] += 2 * u[n] * cos(phase)
                imaginary[k] += 2 * u[n] * sin(phase)
            }
        }
        return (real, imaginary)
    }
}
