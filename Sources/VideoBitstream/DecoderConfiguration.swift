internal import MediaCore

/// Builds the decoder configuration records (ISO/IEC 14496-15) of H.264 and H.265 streams from their parameter sets,
/// field for field as FFmpeg 5.1's `ff_isom_write_avcc` and `ff_isom_write_hvcc` fill them, so
/// that a muxer writes the `avcC` / `hvcC` FFmpeg writes for the same stream.
public enum DecoderConfiguration {
    /// The `avcC` record (ISO/IEC 14496-15 5.3.3.1) of the SPSs and PPSs among `parameterSets`
    /// (NAL units without start codes; other types are ignored), in their order.
    ///
    /// Profile, compatibility and level are bytes 1 to 3 of the first SPS (H.264 7.3.2.1.1:
    /// `profile_idc`, the constraint flags, `level_idc`). For profiles other than 66, 77 and 88
    /// the high-profile extension (5.3.3.1.2) follows with the first SPS's `chroma_format_idc`
    /// and bit depths and no SPS extensions, as FFmpeg writes it.
    ///
    /// - Throws: ``VideoBitstreamError/noPictures`` without an SPS; the SPS's parse errors;
    ///   ``VideoBitstreamError/invalidRecordField(record:field:value:offset:allowed:)`` when the record cannot hold the sets.
    public static func avc(parameterSets: [[UInt8]], nalUnitLengthSize: Int = 4) throws(VideoBitstreamError) -> AVCDecoderConfigurationRecord {
        let sequenceSets = parameterSets.filter { ($0.first ?? 0) & 0x1F == 7 }
        let pictureSets = parameterSets.filter { ($0.first ?? 0) & 0x1F == 8 }
        guard let first = sequenceSets.first else { throw .noPictures }
        let sps = try H264SequenceParameterSet(nalUnit: NALUnit(bytes: first, offset: 0))
        var extensionBytes: [UInt8] = []
        if ![66, 77, 88].contains(sps.profileIDC) {
            extensionBytes = [0xFC | UInt8(sps.chromaFormatIDC), 0xF8 | UInt8(sps.bitDepthLuma - 8), 0xF8 | UInt8(sps.bitDepthChroma - 8), 0]
        }
        return try AVCDecoderConfigurationRecord(profileIndication: sps.profileIDC, profileCompatibility: sps.constraintFlags,
                                                 levelIndication: sps.levelIDC, nalUnitLengthSize: nalUnitLengthSize,
                                                 sequenceParameterSets: sequenceSets, pictureParameterSets: pictureSets,
                                                 extensionBytes: extensionBytes)
    }

    /// The `hvcC` record (ISO/IEC 14496-15 8.3.3.1) of the VPSs, SPSs and PPSs among
    /// `parameterSets`, one array per type in that order, with 4-byte NAL unit lengths.
    ///
    /// The head follows FFmpeg: the general profile space, tier, profile, compatibility and
    /// constraint flags and level merge the `profile_tier_level( )` of every VPS and SPS (H.265
    /// 7.3.3; flags ANDed, profile and level the highest); `numTemporalLayers` is the largest
    /// `max_sub_layers_minus1` + 1; `temporalIdNested`, chroma format and bit depths come from
    /// the (last) SPS; `min_spatial_segmentation_idc` from the SPS VUI (E.2.1) and
    /// `parallelismType` from the PPS's tiles and wavefront flags (0 when the former is 0);
    /// `avgFrameRate` and `constantFrameRate` are 0.
    ///
    /// - Parameters:
    ///   - parameterSets: the stream's VPS, SPS and PPS NAL units.
    ///   - arrayCompleteness: the arrays' `array_completeness` bit: `true` when the samples carry
    ///     no parameter sets (as ``AnnexBReader``'s do; the `hvc1` sample entry), `false` for
    ///     `hev1` (what FFmpeg writes by default).
    /// - Throws: ``VideoBitstreamError/noPictures`` without a VPS, SPS and PPS; their parse
    ///   errors; ``VideoBitstreamError/invalidArgument(_:)`` when the record cannot hold them
    ///   (more than 65535 of a type or bytes in one, a bit depth over 15);
    ///   ``VideoBitstreamError/invalidRecordField(record:field:value:offset:allowed:)`` when the
    ///   record does not parse back.
    public static func hevc(parameterSets: [[UInt8]], arrayCompleteness: Bool = true) throws(VideoBitstreamError) -> HEVCDecoderConfigurationRecord {
        let types: [UInt8] = [32, 33, 34]
        let groups = types.map { type in parameterSets.filter { $0.count >= 2 && ($0[0] >> 1) & 0x3F == type } }
        guard groups.allSatisfy({ !$0.isEmpty }) else { throw .noPictures }
        var profileSpace: UInt8 = 0
        var tier = false
        var profile: UInt8 = 0
        var compatibility: UInt32 = 0xFFFF_FFFF
        var constraints: UInt64 = 0xFFFF_FFFF_FFFF
        var level: UInt8 = 0
        func merge(_ ptl: HEVCProfileTierLevel) {
            profileSpace = ptl.profileSpace
            if !tier, ptl.tierFlag {
                tier = true
                level = ptl.levelIDC
            } else {
                level = max(level, ptl.levelIDC)
            }
            profile = max(profile, ptl.profileIDC)
            compatibility &= ptl.profileCompatibilityFlags
            constraints &= ptl.constraintIndicatorFlags
        }
        var temporalLayers = 0
        var temporalNested = false
        var minSpatialSegmentation = 4097
        var chromaFormat = 0
        var bitDepthLuma = 8
        var bitDepthChroma = 8
        var parallelism = 0
        for unit in groups[0] {
            let vps = try HEVCVideoParameterSet(nalUnit: NALUnit(bytes: unit, offset: 0))
            temporalLayers = max(temporalLayers, vps.maxSubLayers)
            merge(vps.profileTierLevel)
        }
        for unit in groups[1] {
            let sps = try HEVCSequenceParameterSet(nalUnit: NALUnit(bytes: unit, offset: 0))
            temporalLayers = max(temporalLayers, sps.maxSubLayers)
            temporalNested = sps.temporalIDNesting
            merge(sps.profileTierLevel)
            if let value = sps.minSpatialSegmentationIDC { minSpatialSegmentation = min(minSpatialSegmentation, value) }
            chromaFormat = sps.chromaFormatIDC
            bitDepthLuma = sps.bitDepthLuma
            bitDepthChroma = sps.bitDepthChroma
        }
        // 8.3.3.1.2: bitDepthLumaMinus8 and bitDepthChromaMinus8 are 3 bits; H.265 allows 16 bits.
        guard bitDepthLuma <= 15, bitDepthChroma <= 15 else {
            throw .invalidArgument("an SPS of bit depth \(max(bitDepthLuma, bitDepthChroma)): an hvcC holds bit depths of at most 15")
        }
        for unit in groups[2] {
            let pps = try HEVCPictureParameterSet(nalUnit: NALUnit(bytes: unit, offset: 0))
            parallelism = switch (pps.entropyCodingSyncEnabled, pps.tilesEnabled) {
            case (true, true): 0
            case (true, false): 3
            case (false, true): 2
            case (false, false): 1
            }
        }
        if minSpatialSegmentation > 4096 { minSpatialSegmentation = 0 }
        if minSpatialSegmentation == 0 { parallelism = 0 }
        for group in groups {
            guard group.count <= 0xFFFF else {
                throw .invalidArgument("\(group.count) parameter sets of one type: an hvcC array holds at most 65535")
            }
            for unit in group where unit.count > 0xFFFF {
                throw .invalidArgument("a \(unit.count)-byte parameter set: an hvcC holds units of at most 65535 bytes")
            }
        }
        var writer = ByteWriter()
        writer.write(UInt8(1))
        writer.write(profileSpace << 6 | (tier ? 0x20 : 0) | profile & 0x1F)
        writer.write(compatibility)
        writer.writeBigEndian(constraints, byteCount: 6)
        writer.write(level)
        writer.write(UInt16(0xF000) | UInt16(minSpatialSegmentation))
        writer.write(UInt8(0xFC) | UInt8(parallelism))
        writer.write(UInt8(0xFC) | UInt8(chromaFormat))
        writer.write(UInt8(0xF8) | UInt8((bitDepthLuma - 8) & 0x07))
        writer.write(UInt8(0xF8) | UInt8((bitDepthChroma - 8) & 0x07))
        writer.write(UInt16(0))
        writer.write(UInt8(min(temporalLayers, 7) << 3) | (temporalNested ? 0x04 : 0) | 0x03)
        writer.write(UInt8(groups.count))
        for (type, group) in zip(types, groups) {
            writer.write((arrayCompleteness ? 0x80 : 0) | type)
            writer.write(UInt16(group.count))
            for unit in group {
                writer.write(UInt16(unit.count))
                writer.write(contentsOf: unit)
            }
        }
        var reader = ByteReader(writer.bytes)
        return try HEVCDecoderConfigurationRecord(from: &reader)
    }
}
