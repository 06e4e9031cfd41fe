#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The SBR frequency band tables of one header at one output rate (ISO/IEC 14496-3,
/// 4.6.18.3.2: the master table, the derived high, low and noise tables; 4.6.18.6.3: the
/// patches), computed as FFmpeg does (`sbr_make_f_master`, `sbr_make_f_derived`,
/// `sbr_hf_calc_npatches`, in `Float` with round-half-even like `lrintf`).
///
/// Every requirement of 4.6.18.3.2 that FFmpeg checks is a typed error: `k2 − k0` beyond 48
/// (≤ 32 kHz), 35 (44.1 kHz) or 32 (≥ 48 kHz), a master table of no bands or of a delta ≤ 0,
/// a crossover band at or past its end, `kx` > 32, `kx + M` > 64, more than 5 noise bands,
/// and a patch construction that fails or needs too many patches.
public struct SBRFrequencyTables: Sendable, Hashable {
    /// The header the tables were made from.
    public let header: SBRHeader
    /// The output (SBR) sampling rate: twice the AAC core's.
    public let outputSampleRate: Int
    /// The first QMF subband of the master table (k0).
    public let k0: Int
    /// The QMF subband above the master table (k2).
    public let k2: Int
    /// The master table `f_master` (its band borders, `N_master + 1` entries).
    public let master: [Int]
    /// The high-resolution table `f_TableHigh`: `N_high + 1` QMF-band borders.
    public let high: [Int]
    /// The low-resolution table `f_TableLow`: `N_low + 1` borders.
    public let low: [Int]
    /// The noise floor table `f_TableNoise`: `N_Q + 1` borders.
    public let noise: [Int]
    /// The patches of the high-frequency generator, lowest first.
    public let patches: [SBRPatch]

    /// The first QMF subband of the SBR range (`kx = f_TableHigh[0]`).
    public var kx: Int { high[0] }
    /// The number of QMF subbands of the SBR range (`M = f_TableHigh[N_high] − kx`).
    public var m: Int { high[high.count - 1] - high[0] }
    /// `N_high`.
    public var highBandCount: Int { high.count - 1 }
    /// `N_low`.
    public var lowBandCount: Int { low.count - 1 }
    /// `N_Q`.
    public var noiseBandCount: Int { noise.count - 1 }

    /// The band borders of one frequency resolution (`r(l)` = 1 is high).
    public func bands(highResolution: Bool) -> [Int] { highResolution ? high : low }

    /// The number of envelope bands of one frequency resolution (`n[r]`).
    public func bandCount(highResolution: Bool) -> Int { highResolution ? highBandCount : lowBandCount }

    /// The output rates SBR over AAC supports here, and the row of start offsets each uses
    /// (FFmpeg `sbr_offset`, 4.6.18.3.2.1).
    static let startOffsets: [Int: [Int]] = [
        16000: [-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7],
        22050: [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13],
        24000: [-5, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16],
        32000: [-6, -4, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16],
        44100: [-4, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16, 20],
        48000: [-4, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 13, 16, 20],
    ]

    /// The tables of `header` at `outputSampleRate` (16000, 22050, 24000, 32000, 44100 or
    /// 48000 Hz); any other rate, or a header whose tables break a requirement, is a typed error.
    public init(header: SBRHeader, outputSampleRate: Int) throws(AACBitstreamError) {
        func invalid(_ field: String, _ value: Int, _ allowed: String) -> AACBitstreamError {
            .invalidField(structure: "SBR frequency tables", field: field, value: Int64(value), offset: 0, allowed: allowed)
        }
        guard let offsets = Self.startOffsets[outputSampleRate] else {
            throw invalid("output sample rate", outputSampleRate, "16000, 22050, 24000, 32000, 44100 or 48000")
        }
        try header.validate()
        let rate = outputSampleRate
        let temp = rate < 32000 ? 3000 : rate < 64000 ? 4000 : 5000
        let startMin = ((temp << 7) + rate / 2) / rate
        let stopMin = ((temp << 8) + rate / 2) / rate
        let k0 = startMin + offsets[Int(header.startFrequency)]
        var k2: Int
        switch header.stopFrequency {
        case 14: k2 = 2 * k0
        case 15: k2 = 3 * k0
        default:
            k2 = stopMin + Self.makeBands(start: stopMin, stop: 64, count: 13).sorted().prefix(Int(header.stopFrequency)).reduce(0, +)
        }
        k2 = min(64, k2)
        let maximumSpan = rate <= 32000 ? 48 : rate == 44100 ? 35 : 32
        guard k2 - k0 <= maximumSpan else { throw invalid("k2 - k0", k2 - k0, "at most \(maximumSpan)") }

        // Master table (4.6.18.3.2.1).
        var deltas: [Int]
        if header.frequencyScale == 0 {
            let dk = header.alterScale ? 2 : 1
            let count = ((k2 - k0 + (dk & 2)) >> dk) << 1
            guard count > 0 else { throw invalid("N_master", count, "more than 0") }
            deltas = Array(repeating: dk, count: count)
            let difference = k2 - k0 - count * dk
            if difference < 0 {
                deltas[0] -= 1
                if difference < -1, count > 1 { deltas[1] -= 1 }
            } else if difference > 0 {
                deltas[count - 1] += 1
            }
        } else {
            let halfBands = Float(7 - Int(header.frequencyScale))
            let twoRegions = 49 * k2 > 110 * k0
            let k1 = twoRegions ? 2 * k0 : k2
            let count0 = Self.roundHalfEven(halfBands * log2f(Float(k1) / Float(k0))) * 2
            guard count0 > 0, count0 <= 48 else { throw invalid("num_bands_0", count0, "1...48") }
            let lower = Self.makeBands(start: k0, stop: k1, count: count0).sorted()
            deltas = lower
            if twoRegions {
                let warp: Float = header.alterScale ? 0.76923076923076923077 : 1
                let count1 = Self.roundHalfEven(halfBands * warp * log2f(Float(k2) / Float(k1))) * 2
                guard count1 > 0, count1 <= 48 else { throw invalid("num_bands_1", count1, "1...48") }
                var upper = Self.makeBands(start: k1, stop: k2, count: count1)
                let lowerMaximum = lower[lower.count - 1]
                if let upperMinimum = upper.min(), upperMinimum < lowerMaximum {
                    upper.sort()
                    let change = min(lowerMaximum - upper[0], (upper[upper.count - 1] - upper[0]) >> 1)
                    upper[0] += change
                    upper[upper.count - 1] -= change
                }
                deltas += upper.sorted()
            }
        }
        guard deltas.allSatisfy({ $0 > 0 }) else {
            throw invalid("master table delta", deltas.min() ?? 0, "more than 0")
        }
        var master = [k0]
        for delta in deltas { master.append(master[master.count - 1] + delta) }
        let crossover = Int(header.crossoverBand)
        guard crossover < deltas.count else { throw invalid("bs_xover_band", crossover, "below N_master \(deltas.count)") }

        // Derived tables (4.6.18.3.2.2).
        let high = Array(master[crossover...])
        let highCount = high.count - 1
        let kx = high[0]
        let m = high[highCount] - kx
        guard kx + m <= 64 else { throw invalid("kx + M", kx + m, "at most 64") }
        guard kx <= 32 else { throw invalid("kx", kx, "at most 32") }
        let lowCount = (highCount + 1) >> 1
        let odd = highCount & 1
        var low = [high[0]]
        if lowCount > 0 { for k in 1...lowCount { low.append(high[2 * k - odd]) } }
        let noiseCount = max(1, Self.roundHalfEven(Float(header.noiseBands) * log2f(Float(k2) / Float(kx))))
        guard noiseCount <= 5 else { throw invalid("N_Q", noiseCount, "at most 5") }
        var noise = [low[0]]
        var index = 0
        for k in 1...noiseCount {
            index += (lowCount - index) / (noiseCount + 1 - k)
            noise.append(low[min(index, lowCount)])
        }

        self.header = header
        self.outputSampleRate = outputSampleRate
        self.k0 = k0
        self.k2 = k2
        self.master = master
        self.high = high
        self.low = low
        self.noise = noise
        self.patches = try Self.makePatches(master: master, k0: k0, kx: kx, m: m, rate: rate)
    }

    /// `lrintf` in the default rounding mode: to nearest, ties to even.
    static func roundHalfEven(_ value: Float) -> Int {
        guard value.isFinite, value.magnitude < 1_000_000 else { return 0 }
        return Int(value.rounded(.toNearestOrEven))
    }

    /// FFmpeg's `make_bands`: `count` band widths from `start` to `stop` on a geometric scale,
    /// in `Float`; the last takes what is left.
    static func makeBands(start: Int, stop: Int, count: Int) -> [Int] {
        guard count > 0 else { return [] }
        let base = powf(Float(stop) / Float(start), 1 / Float(count))
        var product = Float(start)
        var previous = start
        var bands: [Int] = []
        for _ in 0..<(count - 1) {
            product *= base
            let present = roundHalfEven(product)
            bands.append(present - previous)
            previous = present
        }
        bands.append(stop - previous)
        return bands
    }

    /// The patch construction of 4.6.18.6.3 (Figure 4.46; FFmpeg `sbr_hf_calc_npatches`), with
    /// every loop bounded; FFmpeg's own bound lets a sixth patch through, and so does this.
    static func makePatches(master: [Int], k0: Int, kx: Int, m: Int, rate: Int) throws(AACBitstreamError) -> [SBRPatch] {
        func failed(_ field: String, _ value: Int) -> AACBitstreamError {
            .invalidField(structure: "SBR frequency tables", field: field, value: Int64(value), offset: 0, allowed: "a patch construction of at most 6 patches")
        }
        let masterCount = master.count - 1
        let goal = ((1000 << 11) + rate / 2) / rate
        var k: Int
        if goal < kx + m {
            k = 0
            while k < masterCount, master[k] < goal { k += 1 }
        } else {
            k = masterCount
        }
        var patches: [SBRPatch] = []
        var usb = kx
        var msb = k0
        var lastK = -1
        var lastMSB = -1
        var sb = 0
        var rounds = 0
        repeat {
            rounds += 1
            guard k != lastK || msb != lastMSB, rounds <= 64 else { throw failed("patch construction", k) }
            lastK = k
            lastMSB = msb
            var odd = 0
            var i = k
            repeat {
                sb = master[i]
                odd = (sb + k0) & 1
                i -= 1
            } while i >= 0 && sb > k0 - 1 + msb - odd
            guard patches.count <= 5 else { throw failed("patches", patches.count + 1) }
            let count = max(sb - usb, 0)
            if count > 0 {
                patches.append(SBRPatch(sourceStart: k0 - odd - count, count: count))
                usb = sb
                msb = sb
            } else {
                msb = kx
            }
            if master[k] - sb < 3 { k = masterCount }
        } while sb != kx + m
        if patches.count > 1, patches[patches.count - 1].count < 3 { patches.removeLast() }
        return patches
    }
}
