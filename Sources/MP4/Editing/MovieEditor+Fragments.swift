public import MediaCore

extension MovieEditor {
    /// Adds `delta` to the absolute file offsets a movie fragment or a fragment random access
    /// box holds, for a rewrite that moves it by `delta` bytes (a `moov` that grew):
    ///
    /// - in a `moof`, each `traf/tfhd` whose flags have `base-data-offset-present` (0x000001)
    ///   (ISO/IEC 14496-12 8.8.7): its `base_data_offset`. Offsets relative to the `moof`
    ///   (`default-base-is-moof`, or no base offset) move with it and are left alone;
    /// - in an `mfra`, each `tfra` entry's `moof_offset` (8.8.10).
    ///
    /// Only offsets at or past `threshold` (the first byte that moves) change: an offset before
    /// it (GStreamer ends its `tfra` with a `moof_offset` of 0) stays as it was. `box` is the
    /// whole box, header included. Other boxes are returned unchanged.
    ///
    /// - Throws: ``MP4Error`` for a box too short for what its fields declare, or an offset
    ///   that would not fit its field.
    public static func shiftingFragmentOffsets(in box: [UInt8], type: FourCharacterCode, by delta: Int64,
                                               after threshold: Int64 = 0) throws(MP4Error) -> [UInt8] {
        guard delta != 0 else { return box }
        var bytes = box
        let path = BoxPath(components: [MetadataTags.latin1(type)])
        // An 8-byte header, or 16 with a 64-bit size (ISO/IEC 14496-12 4.2).
        let size32 = bytes.count >= 4 ? bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : 0
        let headerSize = size32 == 1 ? 16 : 8
        guard bytes.count >= headerSize else {
            throw .invalidBoxSize(path: path, offset: 0, size: Int64(bytes.count), reason: "shorter than its header")
        }
        switch MetadataTags.latin1(type) {
        case "moof":
            var moof = try BoxIterator(ByteReader(bytes, range: headerSize..<bytes.count), path: path)
            while let traf = try moof.next() {
                guard traf.header.type == "traf" else { continue }
                let trafPath = path.appending(traf.header.type)
                var children = try BoxIterator(traf.payload, path: trafPath)
                while let tfhd = try children.next() {
                    guard tfhd.header.type == "tfhd" else { continue }
                    let start = Int(tfhd.header.payloadOffset)
                    guard start + 4 <= Int(tfhd.header.end) else { continue }
                    let flags = bytes[(start + 1)..<(start + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    guard flags & 0x1 != 0 else { continue }
                    guard start + 16 <= Int(tfhd.header.end) else {
                        throw .invalidBoxSize(path: trafPath.appending(tfhd.header.type), offset: tfhd.header.offset, size: tfhd.header.size,
                                              reason: "too short for the base_data_offset its flags declare")
                    }
                    try add(delta, at: start + 8, width: 8, in: &bytes, path: trafPath.appending(tfhd.header.type), field: "base_data_offset",
                            after: threshold)
                }
            }
        case "mfra":
            var children = try BoxIterator(ByteReader(bytes, range: headerSize..<bytes.count), path: path)
            while let tfra = try children.next() {
                guard tfra.header.type == "tfra" else { continue }
                let tfraPath = path.appending(tfra.header.type)
                let start = Int(tfra.header.payloadOffset)
                let end = Int(tfra.header.end)
                guard start + 16 <= end else {
                    throw .invalidBoxSize(path: tfraPath, offset: tfra.header.offset, size: tfra.header.size, reason: "too short for its header")
                }
                let wide = bytes[start] == 1
                let sizes = bytes[start + 11]
                let tail = Int((sizes >> 4) & 3) + 1 + Int((sizes >> 2) & 3) + 1 + Int(sizes & 3) + 1
                let count = Int(bytes[(start + 12)..<(start + 16)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                let entrySize = (wide ? 16 : 8) + tail
                guard count <= (end - start - 16) / entrySize else {
                    throw .invalidBoxSize(path: tfraPath, offset: tfra.header.offset, size: tfra.header.size,
                                          reason: "\(count) entries of \(entrySize) bytes do not fit in it")
                }
                for entry in 0..<count {
                    let at = start + 16 + entry * entrySize + (wide ? 8 : 4)
                    try add(delta, at: at, width: wide ? 8 : 4, in: &bytes, path: tfraPath, field: "moof_offset", after: threshold)
                }
            }
        default:
            break
        }
        return bytes
    }

    private static func add(_ delta: Int64, at position: Int, width: Int, in bytes: inout [UInt8], path: BoxPath,
                            field: String, after threshold: Int64) throws(MP4Error) {
        let value = bytes[position..<(position + width)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard value >= UInt64(max(0, threshold)) else { return }
        let moved = Int64(truncatingIfNeeded: value) + delta
        guard moved >= 0, width == 8 || moved <= Int64(UInt32.max) else {
            throw .invalidField(path: path, field: field, value: moved, offset: Int64(position), allowed: "an offset within its \(width * 8) bits")
        }
        for byte in 0..<width { bytes[position + byte] = UInt8(truncatingIfNeeded: UInt64(moved) >> (8 * (width - 1 - byte))) }
    }
}
