internal import RealModule

/// The decoder's 64-band complex QMF synthesis filter bank (ISO/IEC 14496-3 4.6.18.4.2), in the
/// scale of ``QMFAnalysisBank``: analysis followed by this synthesis returns the input (16-bit
/// scale in, 16-bit scale out) delayed by ``QMFAnalysisBank/reconstructionDelay`` samples, at
/// about 60 dB SNR. The encoder uses it to check itself (what a decoder would rebuild from a
/// set of subband samples); it is not on the encoding path.
///
/// Per slot (with `v[0..<1280]` newest first):
/// 1. shift `v` by 128;
/// 2. `v[n] = (1/64)·Σ_{k=0..<64} Re(X[k]·exp(iπ(k+½)(2n−255)/128))`, n = 0..<128;
/// 3. `g[128i + j] = v[256i + j]`, `g[128i + 64 + j] = v[256i + 192 + j]`, i = 0..<5, j = 0..<64;
/// 4. `w[n] = g[n]·c[n]` with ``QMFPrototype/coefficients``;
/// 5. output sample j (oldest first) = `Σ_{i=0..<10} w[64i + j]`.
public struct QMFSynthesisBank: Sendable {
    /// Subbands per slot, and output samples per slot.
    public static let bandCount = 64

    /// Blocks of 128 `v` values kept, oldest first; `v` spans the newest 10.
    private static let blockCapacity = 10 + 14

    /// `cos(π(k+½)(2n−255)/128)/64`, row n (128 rows of 64 bands).
    private static let cosine: [Float] = matrix { Double.cos($0) }
    /// `sin(π(k+½)(2n−255)/128)/64`, row n.
    private static let sine: [Float] = matrix { Double.sin($0) }

    private static func matrix(_ function: (Double) -> Double) -> [Float] {
        var values = [Float](repeating: 0, count: 128 * 64)
        for n in 0..<128 {
            for k in 0..<64 {
                values[n * 64 + k] = Float(function(Double.pi * (Double(k) + 0.5) * Double(2 * n - 255) / 128) / 64)
            }
        }
        return values
    }

    /// The `v` blocks in arrival order; the newest is `blocks[end − 128 ..< end]`.
    private var blocks: [Float]
    private var end: Int

    /// A bank with an all-zero state.
    public init() {
        blocks = [Float](repeating: 0, count: Self.blockCapacity * 128)
        end = 10 * 128
    }

    /// Synthesises one slot (14496-3 4.6.18.4.2): reads 64 subband samples
    /// `X[k] = real[k] + i·imaginary[k]` and writes 64 output samples, oldest first.
    ///
    /// - Precondition: all three buffers hold at least 64 elements.
    public mutating func synthesize(real: UnsafeBufferPointer<Float>,
                                    imaginary: UnsafeBufferPointer<Float>,
                                    into output: UnsafeMutableBufferPointer<Float>) {
        precondition(real.count >= 64 && imaginary.count >= 64 && output.count >= 64,
                     "QMFSynthesisBank.synthesize reads 64 bands and writes 64 samples")
        let capacity = Self.blockCapacity * 128
        let start = end
        end = blocks.withUnsafeMutableBufferPointer { blocks -> Int in
            var start = start
            if start + 128 > capacity {
                let keep = 9 * 128
                for index in 0..<keep { blocks[index] = blocks[start - keep + index] }
                start = keep
            }
            Self.cosine.withUnsafeBufferPointer { cosine in
                Self.sine.withUnsafeBufferPointer { sine in
                    for n in 0..<128 {
                        var sum: Float = 0
                        for k in 0..<64 {
                            sum += real[k] * cosine[n * 64 + k] - imaginary[k] * sine[n * 64 + k]
                        }
                        blocks[start + n] = sum
                    }
                }
            }
            return start + 128
        }
        let newest = end - 128
        blocks.withUnsafeBufferPointer { blocks in
            QMFPrototype.coefficients.withUnsafeBufferPointer { c in
                for j in 0..<64 {
                    var sum: Float = 0
                    for i in 0..<5 {
                        // v[256i + j] is block 2i (from the newest), offset j;
                        // v[256i + 192 + j] is block 2i + 1, offset 64 + j.
                        sum += blocks[newest - 256 * i + j] * c[128 * i + j]
                        sum += blocks[newest - 128 * (2 * i + 1) + 64 + j] * c[128 * i + 64 + j]
                    }
                    output[j] = sum
                }
            }
        }
    }
}
