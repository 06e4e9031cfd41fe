
/// The fields of `ics_info()` (ISO/IEC 14496-3, 4.4.2.1 Table 4.6; semantics 4.5.2.3.2) for
/// AAC-LC: the window and the bands coded.
public struct ChannelStreamInfo: Sendable, Hashable {
    /// `ics_reserved_bit`, kept as read (it should be 0).
    public var reservedBit: Bool
    /// `window_sequence` (Table 4.87).
    public var windowSequence: ICSInfo.WindowSequence
    /// `window_shape`: 0 sine, 1 Kaiser-Bessel derived.
    public var windowShape: UInt8
    /// `max_sfb`: the scalefactor bands coded in each window (6 bits long, 4 bits short).
    public var maxSFB: Int
    /// `scale_factor_grouping` (7 bits, eight short windows only): bit 6 − i set means window
    /// i + 1 joins the group of window i (4.5.2.3.2).
    public var scaleFactorGrouping: UInt8

    /// An `ics_info` with every field given.
    public init(reservedBit: Bool = false, windowSequence: ICSInfo.WindowSequence, windowShape: UInt8, maxSFB: Int, scaleFactorGrouping: UInt8 = 0) {
        self.reservedBit = reservedBit
        self.windowSequence = windowSequence
        self.windowShape = windowShape
        self.maxSFB = maxSFB
        self.scaleFactorGrouping = scaleFactorGrouping
    }

    /// Whether the frame has eight short windows.
    public var isEightShort: Bool { windowSequence == .eightShort }

    /// `num_windows`: 8 or 1.
    public var windowCount: Int { isEightShort ? 8 : 1 }

    /// `window_group_length[]`: the windows of each group (4.5.2.3.2); one group of one window
    /// for long windows.
    public var windowGroupLengths: [Int] {
        guard isEightShort else { return [1] }
        var lengths = [1]
        for bit in stride(from: 6, through: 0, by: -1) {
            if (scaleFactorGrouping >> UInt8(bit)) & 1 == 1 { lengths[lengths.count - 1] += 1 } else { lengths.append(1) }
        }
        return lengths
    }
}

/// One section of `section_data()` (ISO/IEC 14496-3, 4.4.2.1 Table 4.46): a run of
/// scalefactor bands sharing a codebook. Sections are kept as read, since an encoder may split
/// a run of one codebook and the frame must write back bit-exactly.
public struct Section: Sendable, Hashable {
    /// `sect_cb`: 0 ZERO_HCB, 1–11 spectral codebooks, 13 NOISE_HCB, 14 INTENSITY_HCB2,
    /// 15 INTENSITY_HCB (4.5.2.3.4, Table 4.88). 12 is reserved.
    public var codebook: UInt8
    /// The bands in the section (the sum of its `sect_len_incr` fields).
    public var length: Int

    /// A section of `length` bands coded with `codebook`.
    public init(codebook: UInt8, length: Int) {
        self.codebook = codebook
        self.length = length
    }

    /// ZERO_HCB.
    public static let zeroCodebook: UInt8 = 0
    /// NOISE_HCB (perceptual noise substitution).
    public static let noiseCodebook: UInt8 = 13
    /// INTENSITY_HCB2 (out of phase).
    public static let intensityCodebook2: UInt8 = 14
    /// INTENSITY_HCB (in phase).
    public static let intensityCodebook: UInt8 = 15
}

/// `pulse_data()` (ISO/IEC 14496-3, 4.4.2.1 Table 4.7; 4.5.2.3.4): up to four pulses added to
/// the quantised spectrum of a long window.
public struct PulseData: Sendable, Hashable {
    /// `pulse_start_sfb`.
    public var startBand: UInt8
    /// `pulse_offset[i]` (5 bits each); their count (1...4) is `number_pulse + 1`.
    public var offsets: [UInt8]
    /// `pulse_amp[i]` (4 bits each), one per offset.
    public var amplitudes: [UInt8]

    /// Pulses starting in band `startBand`.
    public init(startBand: UInt8, offsets: [UInt8], amplitudes: [UInt8]) {
        self.startBand = startBand
        self.offsets = offsets
        self.amplitudes = amplitudes
    }
}

/// `tns_data()` (ISO/IEC 14496-3, 4.4.2.1 Table 4.48; 4.6.9): temporal noise shaping
/// filters, per window, with their coefficients as coded indices.
public struct TNSData: Sendable, Hashable {
    /// One TNS filter.
    public struct Filter: Sendable, Hashable {
        /// `length` (6 bits long, 4 bits short): the bands the filter covers.
        public var length: UInt8
        /// `direction` (written only when the order is not 0).
        public var direction: Bool
        /// `coef_compress` (written only when the order is not 0).
        public var coefficientCompress: UInt8
        /// `coef[]`: one index per order (`coef_res + 3 − coef_compress` bits each).
        public var coefficients: [UInt8]

        /// A filter with every field given.
        public init(length: UInt8, direction: Bool, coefficientCompress: UInt8, coefficients: [UInt8]) {
            self.length = length
            self.direction = direction
            self.coefficientCompress = coefficientCompress
            self.coefficients = coefficients
        }
    }

    /// The filters of one window.
    public struct Window: Sendable, Hashable {
        /// `coef_res` (written only when there are filters).
        public var coefficientResolution: UInt8
        /// The window's filters (`n_filt`: up to 3 long, 1 short).
        public var filters: [Filter]

        /// A window's filters.
        public init(coefficientResolution: UInt8, filters: [Filter]) {
            self.coefficientResolution = coefficientResolution
            self.filters = filters
        }
    }

    /// One entry per window (8 for eight short windows, else 1).
    public var windows: [Window]

    /// TNS data for the given windows.
    public init(windows: [Window]) { self.windows = windows }
}

/// `individual_channel_stream()` of AAC-LC (ISO/IEC 14496-3, 4.4.2.1 Table 4.44; 4.5.2.3):
/// one channel's side information and its quantised spectrum.
public struct IndividualChannelStream: Sendable, Hashable {
    /// `global_gain`.
    public var globalGain: UInt8
    /// `ics_info()`: the channel's own, or the pair's common one (`common_window`).
    public var info: ChannelStreamInfo
    /// `section_data()`: the sections of each window group, in order.
    public var sections: [[Section]]
    /// `scale_factor_data()` decoded to values, `group · max_sfb + sfb`: the scalefactor of a
    /// spectral band, the intensity position of an intensity band, the noise energy of a noise
    /// band (4.6.2.3, 4.6.13, 4.6.8.1), 0 for a ZERO_HCB band.
    public var scaleFactors: [Int]
    /// `pulse_data()` when `pulse_data_present`.
    public var pulse: PulseData?
    /// `tns_data()` when `tns_data_present`.
    public var tns: TNSData?
    /// The quantised spectral coefficients (`x_quant`, 4.6.3.3): 1024 values, for short windows
    /// window `w`'s at `128·w ..< 128·(w+1)`. Bands not coded are 0.
    public var coefficients: [Int16]

    /// A channel stream with every field given.
    public init(globalGain: UInt8, info: ChannelStreamInfo, sections: [[Section]], scaleFactors: [Int],
                pulse: PulseData? = nil, tns: TNSData? = nil, coefficients: [Int16]) {
        self.globalGain = globalGain
        self.info = info
        self.sections = sections
        self.scaleFactors = scaleFactors
        self.pulse = pulse
        self.tns = tns
        self.coefficients = coefficients
    }

    /// The codebook of each band, `group · max_sfb + sfb`, from the sections.
    public var bandCodebooks: [UInt8] {
        var codebooks: [UInt8] = []
        codebooks.reserveCapacity(sections.count * info.maxSFB)
        for group in sections {
            for section in group { codebooks.append(contentsOf: repeatElement(section.codebook, count: section.length)) }
        }
        return codebooks
    }
}
