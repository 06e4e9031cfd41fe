/// `samplingFrequencyIndex` of ISO/IEC 14496-3, 1.6.3.4 (Table 1.18), shared by ADTS headers,
/// the AudioSpecificConfig and the program_config_element.
public struct SamplingFrequencyIndex: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The frequencies of indices 0–12; 13 and 14 are reserved and 15 is the escape to an explicit rate.
    public static let frequencies = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
    /// The escape value: a 24-bit frequency follows in an AudioSpecificConfig.
    public static let escape = SamplingFrequencyIndex(rawValue: 15)

    /// The 4-bit index.
    public let rawValue: UInt8

    /// An index; values above 15 do not fit the 4-bit field.
    public init(rawValue: UInt8) {
        precondition(rawValue < 16, "samplingFrequencyIndex is 4 bits")
        self.rawValue = rawValue
    }

    /// The index of a frequency of the table, or `nil` if it has none.
    public init?(frequency: Int) {
        guard let index = Self.frequencies.firstIndex(of: frequency) else { return nil }
        self.rawValue = UInt8(index)
    }

    /// The frequency in Hz for indices 0–12, `nil` for reserved and escape values.
    public var frequency: Int? {
        Int(rawValue) < Self.frequencies.count ? Self.frequencies[Int(rawValue)] : nil
    }

    /// A sentence for people: what it is and, for errors, where.
    public var description: String {
        frequency.map { "\($0) Hz" } ?? (rawValue == 15 ? "escape" : "reserved (\(rawValue))")
    }
}
