internal import MediaCore

/// One access unit of an H.264 or H.265 stream (ITU-T H.264 7.4.1.2.3, H.265 7.4.2.4.4) in the
/// form an MP4 sample takes (ISO/IEC 14496-15, 5.3.2 and 8.3.2), with what presentation order
/// needs.
struct AccessUnit {
    /// The NAL units that go into the sample, each behind a 4-byte big-endian length: every unit
    /// of the access unit but the parameter sets (VPS, SPS, PPS) and the access unit delimiter.
    var data: [UInt8]
    /// Absolute offset of the access unit's first NAL unit.
    var offset: Int64
    /// An H.264 IDR picture, or an H.265 IRAP picture.
    var isSync: Bool
    /// The picture order count (H.264 8.2.1 `PicOrderCnt`, H.265 8.3.1 `PicOrderCntVal`).
    var pictureOrderCount: Int64
    /// The picture starts a new run of picture order counts, before which every earlier picture
    /// is output (H.264: IDR or MMCO 5, C.4.4; H.265: IRAP with `NoRaslOutputFlag` 1, C.5.2.2).
    var startsSequence: Bool
    /// A bound the SPS gives on reordering, for ranking with a full window: H.264
    /// `max_num_reorder_frames`, else `max_dec_frame_buffering`; H.265 `sps_max_num_reorder_pics`.
    var reorderBound: Int?
    /// The reorder depth the SPS declares, which encoders set to the delay of their GOP
    /// structure: H.264 `max_num_reorder_frames` (E.2.1), H.265 `sps_max_num_reorder_pics`
    /// (7.4.3.2.1).
    var declaredReorderDepth: Int?
    /// The frame duration the SPS's VUI gives, as (value, timescale), when it gives one.
    var vuiFrameDuration: (value: Int64, timescale: Int64)?
    /// Codec, size and parameter sets in force.
    var format: VideoFormat

    /// Appends `unit` to `data` behind its 4-byte big-endian length.
    static func appendLengthPrefixed(_ unit: [UInt8], to data: inout [UInt8]) {
        let count = UInt32(truncatingIfNeeded: unit.count)
        data.append(UInt8(truncatingIfNeeded: count >> 24))
        data.append(UInt8(truncatingIfNeeded: count >> 16))
        data.append(UInt8(truncatingIfNeeded: count >> 8))
        data.append(UInt8(truncatingIfNeeded: count))
        data.append(contentsOf: unit)
    }
}
