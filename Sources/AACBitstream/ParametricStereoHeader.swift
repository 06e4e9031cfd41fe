public import MediaCore

/// The header fields of `ps_data()` (ISO/IEC 14496-3, 8.3, sent when
/// `enable_ps_header` is 1; semantics 8.4): which parameters a PS stream carries, at which
/// resolution, and whether `ps_extension()` data follows each frame.
///
/// A header stays in force until the next one: frames without one are read and written with
/// the last header's modes (``ParametricStereoHistory/header``).
public struct ParametricStereoHeader: Sendable, Hashable {
    /// `iid_mode` (0...5), `nil` when `enable_iid` is 0: 0 and 3 give 10 bands, 1 and 4 give 20,
    /// 2 and 5 give 34 (8.4); 3...5 use the fine IID quantiser (`iid_quant`).
    public var iidMode: UInt8?
    /// `icc_mode` (0...5), `nil` when `enable_icc` is 0: 0 and 3 give 10 bands, 1 and 4 give 20,
    /// 2 and 5 give 34; 3...5 select mixing procedure R_B instead of R_A (8.4).
    public var iccMode: UInt8?
    /// `enable_ext`: every frame under this header carries `ps_extension_size` and the
    /// `ps_extension()` data (IPD/OPD, which a baseline decoder skips by that size).
    public var extensionEnabled: Bool

    /// A header of the given fields.
    public init(iidMode: UInt8?, iccMode: UInt8?, extensionEnabled: Bool = false) {
        self.iidMode = iidMode
        self.iccMode = iccMode
        self.extensionEnabled = extensionEnabled
    }

    /// The number of stereo bands of a mode (8.4: `nr_iid_par`, `nr_icc_par`):
    /// 10, 20 or 34 for modes 0...5, 0 for no mode or a reserved one (6, 7).
    public static func bandCount(mode: UInt8?) -> Int {
        guard let mode, mode <= 5 else { return 0 }
        return [10, 20, 34][Int(mode) % 3]
    }

    /// `nr_iid_par`: IID values per envelope, 10, 20 or 34 by ``iidMode`` (0 when IID is off).
    public var iidBandCount: Int { Self.bandCount(mode: iidMode) }

    /// `nr_icc_par`: ICC values per envelope, 10, 20 or 34 by ``iccMode`` (0 when ICC is off).
    public var iccBandCount: Int { Self.bandCount(mode: iccMode) }

    /// `iid_quant`: IID values use the fine quantiser (`iid_mode` ≥ 3, values −15...15)
    /// instead of the default one (−7...7).
    public var fineIID: Bool { (iidMode ?? 0) >= 3 }

    /// Reads the fields after `enable_ps_header` = 1. A reserved `iid_mode` or `icc_mode` (6, 7)
    /// is ``AACBitstreamError/invalidField(structure:field:value:offset:allowed:)`` (FFmpeg refuses
    /// them too).
    public init(from reader: inout BitReader) throws(AACBitstreamError) {
        func flag() throws(AACBitstreamError) -> Bool {
            try AACBitstreamError.reading("ps_data") { () throws(BinaryReadError) in try reader.readFlag() }
        }
        func mode(_ name: String) throws(AACBitstreamError) -> UInt8 {
            let offset = reader.byteOffset
            let value: UInt8 = try AACBitstreamError.reading("ps_data") { () throws(BinaryReadError) in try reader.read(3) }
            guard value <= 5 else {
                throw .invalidField(structure: "ps_data", field: name, value: Int64(value), offset: offset, allowed: "0...5 (6 and 7 are reserved)")
            }
            return value
        }
        iidMode = try flag() ? try mode("iid_mode") : nil
        iccMode = try flag() ? try mode("icc_mode") : nil
        extensionEnabled = try flag()
    }

    /// Writes the fields after `enable_ps_header`: `enable_iid`, `iid_mode`, `enable_icc`,
    /// `icc_mode`, `enable_ext`. A mode beyond 5 is ``AACBitstreamError/unrepresentable(structure:field:value:allowed:)``
    /// and nothing is written.
    public func write(to writer: inout BitWriter) throws(AACBitstreamError) {
        try validate()
        writer.writeFlag(iidMode != nil)
        if let iidMode { writer.write(iidMode, bits: 3) }
        writer.writeFlag(iccMode != nil)
        if let iccMode { writer.write(iccMode, bits: 3) }
        writer.writeFlag(extensionEnabled)
    }

    /// Throws when a mode is reserved or out of range.
    func validate() throws(AACBitstreamError) {
        for (name, mode) in [("iid_mode", iidMode), ("icc_mode", iccMode)] {
            if let mode, mode > 5 {
                throw .unrepresentable(structure: "ps_data", field: name, value: Int64(mode), allowed: "0...5")
            }
        }
    }
}
