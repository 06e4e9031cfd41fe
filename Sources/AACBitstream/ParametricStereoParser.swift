public import MediaCore

/// Reads Parametric Stereo from the `bs_extended_data` of a mono SBR element, frame after frame,
/// as a decoder does (ISO/IEC 14496-3, 8.3 `ps_data()`, 8.4; 4.4.2.8 `sbr_extension()`; FFmpeg
/// `ff_ps_read_data`, faad2 `ps_data`): the modes come from the last header and time deltas
/// from the previous envelope, so the parser keeps a ``ParametricStereoHistory``.
///
/// - Extended data whose first `bs_extension_id` is not 2 (EXTENSION_ID_PS), or that is shorter
///   than a byte (a decoder's extension loop reads an id only while 8 bits remain), is no PS:
///   `nil`, and the state is unchanged. Only the first extension is read; bits after `ps_data()`
///   are fill, or further extensions, which are not interpreted.
/// - A frame before the first header (or after an error) cannot be read (its modes are not
///   known): it is skipped, `nil`, as FFmpeg (which applies PS only after a header) and faad2 do.
///   ``header`` is `nil` exactly then, which tells this case from "no PS".
/// - `ps_extension()` data (IPD/OPD, which baseline PS ignores) is skipped by its counted size
///   and kept verbatim in ``ParametricStereoFrame/extensionPayload``.
/// - A reserved mode, a value outside its quantiser's range, border positions that do not
///   increase strictly, time coding without previous values of the same band count (see
///   ``ParametricStereoHistory``), or data that runs past the extended data is a typed error
///   (``AACBitstreamError``), and the parser then forgets its header and history until the next
///   header (FFmpeg turns PS off until the next header too). Error offsets count from the first
///   byte of the extended data plus `baseOffset`.
public struct ParametricStereoParser: Sendable {
    /// The header in force and the previous envelope's values.
    public private(set) var history = ParametricStereoHistory()

    /// The header in force, `nil` before the first one (or after an error).
    public var header: ParametricStereoHeader? { history.header }

    /// A parser at a stream's start.
    public init() {}

    /// Reads the PS frame in `extendedData` (the whole `bs_extended_data` payload, as in
    /// ``SBRExtensionData/extendedData``): `nil` when it holds no PS or no header has been seen,
    /// the frame otherwise. Frames read here write back (``ParametricStereoFrame/write(to:history:)``
    /// with the history before this call) to exactly the bits of their `ps_data()`.
    public mutating func parse(extendedData: BitString, baseOffset: Int64 = 0) throws(AACBitstreamError) -> ParametricStereoFrame? {
        guard extendedData.count > 7 else { return nil }
        var reader = BitReader(extendedData.bytes, baseOffset: baseOffset)
        let id = try AACBitstreamError.reading("bs_extended_data") { () throws(BinaryReadError) in try reader.readBits(2) }
        guard id == ParametricStereoFrame.extensionID else { return nil }
        do throws(AACBitstreamError) {
            guard let read = try Self.readFrame(&reader, history: history) else { return nil }
            guard reader.bitsConsumed <= extendedData.count else {
                throw .invalidField(structure: "ps_data", field: "length in bits", value: Int64(reader.bitsConsumed - 2),
                                    offset: baseOffset, allowed: "at most \(extendedData.count - 2) (the extended data)")
            }
            history = read.history
            return read.frame
        } catch {
            history = ParametricStereoHistory()
            throw error
        }
    }

    /// Reads `ps_data()` against `history`; `nil` when neither the frame nor `history` has a header.
    static func readFrame(_ reader: inout BitReader, history: ParametricStereoHistory) throws(AACBitstreamError)
        -> (frame: ParametricStereoFrame, history: ParametricStereoHistory)? {
        func bits(_ count: Int) throws(AACBitstreamError) -> Int {
            try AACBitstreamError.reading("ps_data") { () throws(BinaryReadError) in Int(try reader.readBits(count)) }
        }
        let frameHeader = try bits(1) == 1 ? try ParametricStereoHeader(from: &reader) : nil
        guard let header = frameHeader ?? history.header else { return nil }
        let variableBorders = try bits(1) == 1
        let envelopeCount = ParametricStereoFrame.envelopeCounts[variableBorders ? 1 : 0][try bits(2)]
        var borderPositions: [Int] = []
        if variableBorders {
            for index in 0..<envelopeCount {
                let offset = reader.byteOffset
                let position = try bits(5)
                if let last = borderPositions.last, position <= last {
                    throw .invalidField(structure: "ps_data", field: "border_position[\(index)]", value: Int64(position), offset: offset,
                                        allowed: "\(last + 1)...31 (strictly increasing)")
                }
                borderPositions.append(position)
            }
        }
        var next = history
        next.header = header
        let iid = try readParameter(header.iidMode.map { .iid(fine: $0 >= 3) }, bands: header.iidBandCount,
                                    envelopes: envelopeCount, previous: history.iid, from: &reader)
        let icc = try readParameter(header.iccMode.map { _ in .icc }, bands: header.iccBandCount,
                                    envelopes: envelopeCount, previous: history.icc, from: &reader)
        next.iid = header.iidMode == nil ? nil : iid.rows.last ?? history.iid
        next.icc = header.iccMode == nil ? nil : icc.rows.last ?? history.icc
        var extensionPayload: BitString?
        if header.extensionEnabled {
            var size = try bits(4)
            if size == 15 { size += try bits(8) }
            let count = size * 8
            if size > 0 {
                extensionPayload = try AACBitstreamError.reading("ps_extension") { () throws(BinaryReadError) in try reader.readBitString(count) }
            }
        }
        let frame = ParametricStereoFrame(header: frameHeader, variableBorders: variableBorders, borderPositions: borderPositions,
                                          iidTimeDelta: iid.flags, iid: iid.rows, iccTimeDelta: icc.flags, icc: icc.rows,
                                          extensionPayload: extensionPayload)
        return (frame, next)
    }

    /// Reads one parameter's envelopes; a disabled one (`parameter` nil) gives an empty row and a
    /// false flag per envelope.
    private static func readParameter(_ parameter: ParametricStereoParameter?, bands: Int, envelopes: Int, previous: [Int]?,
                                      from reader: inout BitReader) throws(AACBitstreamError) -> (rows: [[Int]], flags: [Bool]) {
        guard let parameter else {
            return (Array(repeating: [], count: envelopes), Array(repeating: false, count: envelopes))
        }
        var rows: [[Int]] = []
        var flags: [Bool] = []
        for envelope in 0..<envelopes {
            let offset = reader.byteOffset
            let time = try AACBitstreamError.reading("ps_data") { () throws(BinaryReadError) in try reader.readFlag() }
            var base: [Int]?
            if time {
                base = envelope > 0 ? rows[envelope - 1] : previous
                guard let reference = base, reference.count == bands else {
                    throw .invalidField(structure: "ps_data", field: parameter.flagName + "[0]", value: 1, offset: offset,
                                        allowed: "0 (no previous envelope of \(bands) bands to code against)")
                }
            }
            rows.append(try parameter.read(count: bands, base: base, from: &reader))
            flags.append(time)
        }
        return (rows, flags)
    }
}
