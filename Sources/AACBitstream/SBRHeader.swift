public import MediaCore

/// `sbr_header()` (ISO/IEC 14496-3, 4.4.2.8 Table 4.63; semantics 4.5.2.8): the frequency range
/// and the tools of an SBR stream.
///
/// A header read without `bs_header_extra_1` or `bs_header_extra_2` takes the defaults of
/// those blocks (not the previous header's values), as the spec and FFmpeg do; the writer sends
/// an extra block only when one of its values differs from the defaults.
public struct SBRHeader: Sendable, Hashable {
    /// `bs_amp_res`: 0 = 1.5 dB, 1 = 3 dB envelope steps (a FIXFIX frame of one envelope uses
    /// 1.5 dB whatever this says; see ``SBRGrid/amplitudeResolution(header:)``).
    public var amplitudeResolution: UInt8
    /// `bs_start_freq` (0...15): with the output rate, the lowest SBR subband k0 (4.6.18.3.2).
    public var startFrequency: UInt8
    /// `bs_stop_freq` (0...15): the highest SBR subband k2; 14 and 15 are 2·k0 and 3·k0.
    public var stopFrequency: UInt8
    /// `bs_xover_band` (0...7): the index in the master table where the SBR range starts.
    public var crossoverBand: UInt8
    /// `bs_freq_scale` (0...3, default 2): bands per octave of the master table (0 = linear).
    public var frequencyScale: UInt8
    /// `bs_alter_scale` (default true): a coarser upper region (master), or double-width linear bands.
    public var alterScale: Bool
    /// `bs_noise_bands` (0...3, default 2): noise floor bands per octave.
    public var noiseBands: UInt8
    /// `bs_limiter_bands` (0...3, default 2).
    public var limiterBands: UInt8
    /// `bs_limiter_gains` (0...3, default 2).
    public var limiterGains: UInt8
    /// `bs_interpol_freq` (default true).
    public var interpolatesFrequency: Bool
    /// `bs_smoothing_mode` (default true).
    public var smoothingMode: Bool

    /// A header; everything after `crossoverBand` defaults to the values a header without
    /// extra blocks has.
    public init(amplitudeResolution: UInt8 = 1, startFrequency: UInt8, stopFrequency: UInt8, crossoverBand: UInt8 = 0,
                frequencyScale: UInt8 = 2, alterScale: Bool = true, noiseBands: UInt8 = 2,
                limiterBands: UInt8 = 2, limiterGains: UInt8 = 2, interpolatesFrequency: Bool = true, smoothingMode: Bool = true) {
        self.amplitudeResolution = amplitudeResolution
        self.startFrequency = startFrequency
        self.stopFrequency = stopFrequency
        self.crossoverBand = crossoverBand
        self.frequencyScale = frequencyScale
        self.alterScale = alterScale
        self.noiseBands = noiseBands
        self.limiterBands = limiterBands
        self.limiterGains = limiterGains
        self.interpolatesFrequency = interpolatesFrequency
        self.smoothingMode = smoothingMode
    }

    /// Reads `sbr_header()`; `bs_reserved` is read and ignored (FFmpeg skips it).
    public init(from reader: inout BitReader) throws(AACBitstreamError) {
        let fields = try AACBitstreamError.reading("sbr_header") { () throws(BinaryReadError) -> [UInt8] in
            var fields: [UInt8] = []
            for width in [1, 4, 4, 3, 2, 1, 1] { fields.append(try reader.read(width)) }
            if fields[5] == 1 { for width in [2, 1, 2] { fields.append(try reader.read(width)) } }
            if fields[6] == 1 { for width in [2, 2, 1, 1] { fields.append(try reader.read(width)) } }
            return fields
        }
        self.init(amplitudeResolution: fields[0], startFrequency: fields[1], stopFrequency: fields[2], crossoverBand: fields[3])
        var next = 7
        if fields[5] == 1 {
            frequencyScale = fields[next]
            alterScale = fields[next + 1] == 1
            noiseBands = fields[next + 2]
            next += 3
        }
        if fields[6] == 1 {
            limiterBands = fields[next]
            limiterGains = fields[next + 1]
            interpolatesFrequency = fields[next + 2] == 1
            smoothingMode = fields[next + 3] == 1
        }
    }

    /// Whether `bs_header_extra_1` is needed: a frequency scale, alter scale or noise band
    /// count other than the defaults (2, true, 2).
    public var needsExtra1: Bool { frequencyScale != 2 || !alterScale || noiseBands != 2 }

    /// Whether `bs_header_extra_2` is needed: limiter or smoothing values other than the
    /// defaults (2, 2, true, true).
    public var needsExtra2: Bool { limiterBands != 2 || limiterGains != 2 || !interpolatesFrequency || !smoothingMode }

    /// Whether the fields that decide the frequency tables (start, stop, crossover, scale, alter
    /// scale, noise bands) equal `other`'s: a change resets the decoder (4.6.18.3.1).
    public func hasSameSpectrum(as other: SBRHeader) -> Bool {
        startFrequency == other.startFrequency && stopFrequency == other.stopFrequency && crossoverBand == other.crossoverBand
            && frequencyScale == other.frequencyScale && alterScale == other.alterScale && noiseBands == other.noiseBands
    }

    /// Checks every field fits its width.
    func validate() throws(AACBitstreamError) {
        for (field, value, limit) in [("bs_amp_res", amplitudeResolution, 1), ("bs_start_freq", startFrequency, 15),
                                      ("bs_stop_freq", stopFrequency, 15), ("bs_xover_band", crossoverBand, 7),
                                      ("bs_freq_scale", frequencyScale, 3), ("bs_noise_bands", noiseBands, 3),
                                      ("bs_limiter_bands", limiterBands, 3), ("bs_limiter_gains", limiterGains, 3)]
        where Int(value) > limit {
            throw .unrepresentable(structure: "sbr_header", field: field, value: Int64(value), allowed: "0...\(limit)")
        }
    }

    /// Writes `sbr_header()` (16 bits, 21 with `bs_header_extra_1`, 22 more with both extras);
    /// a field beyond its width is ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)``.
    public func write(to writer: inout BitWriter) throws(AACBitstreamError) {
        try validate()
        writer.write(amplitudeResolution, bits: 1)
        writer.write(startFrequency, bits: 4)
        writer.write(stopFrequency, bits: 4)
        writer.write(crossoverBand, bits: 3)
        writer.write(0, bits: 2)   // bs_reserved
        writer.writeFlag(needsExtra1)
        writer.writeFlag(needsExtra2)
        if needsExtra1 {
            writer.write(frequencyScale, bits: 2)
            writer.writeFlag(alterScale)
            writer.write(noiseBands, bits: 2)
        }
        if needsExtra2 {
            writer.write(limiterBands, bits: 2)
            writer.write(limiterGains, bits: 2)
            writer.writeFlag(interpolatesFrequency)
            writer.writeFlag(smoothingMode)
        }
    }
}
