import MediaCore
import VideoBitstream

// The video fuzz targets: H.264 and H.265 parameter sets and slice headers, and the Annex B
// reader end to end. Inputs are Annex B byte streams (what `ffmpeg -f h264` / `-f hevc` writes);
// the checks name the clause of ITU-T H.264 or H.265 they come from. The one check
// that needs MP4's `avcC` / `hvcC` parsers is in `VideoConfigurationRecordCheck.swift`.

extension FuzzTarget {
    // MARK: h264

    /// Every NAL unit of the stream through the H.264 parsers, in stream order, with the
    /// parameter sets seen so far: what parses is within the ranges the semantics give, parses
    /// the same from a canonically re-escaped copy, and (for the sets) builds an `avcC` that
    /// parses back to itself.
    static func h264ParameterSets(_ data: [UInt8]) {
        let units = nalUnitsChecked(data)
        var sequenceSets: [Int: H264SequenceParameterSet] = [:]
        var pictureSets: [Int: H264PictureParameterSet] = [:]
        var parsedSets: [[UInt8]] = []
        for unit in units {
            switch unit.h264Type {
            case .sequenceParameterSet:
                let parsed = sameFromReescaped(unit, headerLength: 1) { (u: NALUnit) throws(VideoBitstreamError) in
                    try H264SequenceParameterSet(nalUnit: u)
                }
                guard let sps = parsed else { continue }
                checkRanges(sps)
                sequenceSets[sps.id] = sps
                parsedSets.append(unit.bytes)
            case .pictureParameterSet:
                let parsed = sameFromReescaped(unit, headerLength: 1) { (u: NALUnit) throws(VideoBitstreamError) in
                    try H264PictureParameterSet(nalUnit: u)
                }
                guard let pps = parsed else { continue }
                checkRanges(pps)
                pictureSets[pps.id] = pps
                parsedSets.append(unit.bytes)
            case let type where type.hasSliceHeader:
                let parsed = sameFromReescaped(unit, headerLength: 1) { (u: NALUnit) throws(VideoBitstreamError) in
                    try H264SliceHeader(nalUnit: u, pictureParameterSets: pictureSets, sequenceParameterSets: sequenceSets)
                }
                guard let slice = parsed else { continue }
                // It parsed, so its PPS and that PPS's SPS are there.
                guard let pps = pictureSets[slice.pictureParameterSetID], let sps = sequenceSets[pps.sequenceParameterSetID] else {
                    preconditionFailure("H.264 slice header parsed without its PPS or SPS")
                }
                checkRanges(slice, sps: sps)
            default:
                // Not a parameter set or a slice: the parsers refuse it with a typed error.
                precondition((try? H264SequenceParameterSet(nalUnit: unit)) == nil, "H.264 SPS parser accepts another NAL unit type")
                precondition((try? H264PictureParameterSet(nalUnit: unit)) == nil, "H.264 PPS parser accepts another NAL unit type")
            }
        }
        if parsedSets.contains(where: { $0[0] & 0x1F == 7 }) {
            checkAVCConfigurationRecord(parameterSets: Array(parsedSets.prefix(64)))
        }
    }

    /// ITU-T H.264 7.4.2.1.1 (and E.2.1 for the VUI fields).
    private static func checkRanges(_ sps: H264SequenceParameterSet) {
        precondition((0...31).contains(sps.id), "H.264 SPS: seq_parameter_set_id out of 0...31")
        precondition((0...3).contains(sps.chromaFormatIDC), "H.264 SPS: chroma_format_idc out of 0...3")
        precondition(!sps.separateColourPlane || sps.chromaFormatIDC == 3, "H.264 SPS: separate_colour_plane_flag without 4:4:4")
        precondition((8...14).contains(sps.bitDepthLuma) && (8...14).contains(sps.bitDepthChroma), "H.264 SPS: bit depth out of 8...14")
        precondition((4...16).contains(sps.log2MaxFrameNum), "H.264 SPS: log2_max_frame_num_minus4 out of 0...12")
        precondition((0...2).contains(sps.picOrderCountType), "H.264 SPS: pic_order_cnt_type out of 0...2")
        precondition((4...16).contains(sps.log2MaxPicOrderCountLsb), "H.264 SPS: log2_max_pic_order_cnt_lsb_minus4 out of 0...12")
        precondition(sps.offsetsForReferenceFrame.count <= 255, "H.264 SPS: num_ref_frames_in_pic_order_cnt_cycle over 255")
        let offsets = Int(Int32.min) + 1...Int(Int32.max)
        precondition(sps.offsetsForReferenceFrame.allSatisfy(offsets.contains) && offsets.contains(sps.offsetForNonReferencePicture)
                     && offsets.contains(sps.offsetForTopToBottomField), "H.264 SPS: a picture order count offset out of −2^31+1...2^31−1")
        precondition((0...16).contains(sps.maxNumberOfReferenceFrames), "H.264 SPS: max_num_ref_frames over MaxDpbFrames (16)")
        precondition(sps.pictureWidthInMacroblocks >= 1 && sps.pictureHeightInMapUnits >= 1, "H.264 SPS: empty picture")
        precondition(!sps.frameMacroblocksOnly || !sps.macroblockAdaptiveFrameField, "H.264 SPS: MBAFF with frame_mbs_only_flag")
        // 7.4.2.1.1 frame_crop_*_offset: the cropped picture is not empty.
        precondition(sps.width >= 1 && sps.width <= sps.pictureWidthInMacroblocks * 16, "H.264 SPS: cropped width out of range")
        precondition(sps.height >= 1 && sps.height <= sps.frameHeightInMacroblocks * 16, "H.264 SPS: cropped height out of range")
        if let reorder = sps.maxNumberOfReorderFrames, let buffering = sps.maxDecodedFrameBuffering {
            // E.2.1: max_num_reorder_frames in 0...max_dec_frame_buffering, which is at most
            // MaxDpbFrames (16). (Its lower bound max_num_ref_frames is not enforced by the parser:
            // nothing depends on it.)
            precondition((0...buffering).contains(reorder), "H.264 SPS VUI: max_num_reorder_frames over max_dec_frame_buffering")
            precondition(buffering <= 16, "H.264 SPS VUI: max_dec_frame_buffering over 16")
        }
        precondition((sps.maxNumberOfReorderFrames == nil) == (sps.maxDecodedFrameBuffering == nil),
                      "H.264 SPS VUI: one of max_num_reorder_frames and max_dec_frame_buffering without the other")
        if let duration = sps.frameDuration {
            precondition(duration.value > 0 && (1...Int64(Int32.max)).contains(duration.timescale), "H.264 SPS VUI: frame duration out of range")
        }
    }

    /// ITU-T H.264 7.4.2.2 (the ranges that do not depend on the SPS).
    private static func checkRanges(_ pps: H264PictureParameterSet) {
        precondition((0...255).contains(pps.id), "H.264 PPS: pic_parameter_set_id out of 0...255")
        precondition((0...31).contains(pps.sequenceParameterSetID), "H.264 PPS: seq_parameter_set_id out of 0...31")
        precondition((1...8).contains(pps.numberOfSliceGroups), "H.264 PPS: num_slice_groups_minus1 out of 0...7")
        precondition((1...32).contains(pps.defaultActiveReferencesL0) && (1...32).contains(pps.defaultActiveReferencesL1),
                     "H.264 PPS: num_ref_idx_lX_default_active_minus1 out of 0...31")
        precondition((0...2).contains(pps.weightedBipredictionIDC), "H.264 PPS: weighted_bipred_idc out of 0...2")
        // −(26 + QpBdOffsetY)...+25, QpBdOffsetY at most 6 × 6.
        precondition((-36...51).contains(pps.initialQP), "H.264 PPS: pic_init_qp_minus26 out of −62...25")
    }

    /// ITU-T H.264 7.4.3 (and 7.4.1 for `nal_ref_idc`), with the SPS in force.
    private static func checkRanges(_ slice: H264SliceHeader, sps: H264SequenceParameterSet) {
        precondition((0...9).contains(slice.sliceType), "H.264 slice: slice_type out of 0...9")
        precondition((0...255).contains(slice.pictureParameterSetID), "H.264 slice: pic_parameter_set_id out of 0...255")
        // first_mb_in_slice in 0...PicSizeInMbs − 1, or PicSizeInMbs / 2 − 1 with MbaffFrameFlag;
        // PicSizeInMbs counts the macroblocks of a field for a field picture (7-25, 7-27).
        let pictureHeight = sps.frameHeightInMacroblocks / (slice.fieldPicture ? 2 : 1)
        let mbaff = sps.macroblockAdaptiveFrameField && !slice.fieldPicture
        let pictureSize = sps.pictureWidthInMacroblocks * pictureHeight
        precondition(slice.firstMacroblock >= 0 && slice.firstMacroblock < (mbaff ? pictureSize / 2 : pictureSize),
                     "H.264 slice: first_mb_in_slice out of the picture")
        precondition(sps.separateColourPlane ? (0...2).contains(slice.colourPlaneID) : slice.colourPlaneID == 0,
                     "H.264 slice: colour_plane_id out of 0...2")
        precondition((0..<Int(sps.maxFrameNum)).contains(slice.frameNum), "H.264 slice: frame_num over MaxFrameNum")
        precondition(!slice.fieldPicture || !sps.frameMacroblocksOnly, "H.264 slice: field_pic_flag with frame_mbs_only_flag")
        precondition(slice.fieldPicture || !slice.bottomField, "H.264 slice: bottom_field_flag in a frame")
        precondition((0..<Int(sps.maxPicOrderCountLsb)).contains(slice.picOrderCountLsb), "H.264 slice: pic_order_cnt_lsb over MaxPicOrderCntLsb")
        precondition((0...127).contains(slice.redundantPictureCount), "H.264 slice: redundant_pic_cnt out of 0...127")
        if slice.isIDR {
            precondition([2, 4].contains(slice.sliceKind), "H.264 slice: an IDR slice that is not I or SI")
            precondition((0...65535).contains(slice.idrPictureID), "H.264 slice: idr_pic_id out of 0...65535")
            precondition(slice.frameNum == 0, "H.264 slice: frame_num of an IDR picture is not 0")
            precondition(slice.nalReferenceIDC != 0, "H.264 slice: nal_ref_idc 0 in an IDR picture (7.4.1)")
        }
    }

    // MARK: hevc

    /// Every NAL unit of the stream through the H.265 parsers, in stream order, with the
    /// parameter sets seen so far: what parses is within the ranges the semantics give, parses
    /// the same from a canonically re-escaped copy, and (for the sets) builds an `hvcC` that
    /// parses back to itself.
    static func hevcParameterSets(_ data: [UInt8]) {
        let units = nalUnitsChecked(data)
        var videoSets: [Int: HEVCVideoParameterSet] = [:]
        var sequenceSets: [Int: HEVCSequenceParameterSet] = [:]
        var pictureSets: [Int: HEVCPictureParameterSet] = [:]
        var parsedSets: [[UInt8]] = []
        for unit in units {
            switch unit.hevcType {
            case .videoParameterSet:
                let parsed = sameFromReescaped(unit, headerLength: 2) { (u: NALUnit) throws(VideoBitstreamError) in
                    try HEVCVideoParameterSet(nalUnit: u)
                }
                guard let vps = parsed else { continue }
                // 7.4.3.1.
                precondition((0...15).contains(vps.id), "HEVC VPS: vps_video_parameter_set_id out of 0...15")
                precondition((1...7).contains(vps.maxSubLayers), "HEVC VPS: vps_max_sub_layers_minus1 out of 0...6")
                precondition((1...64).contains(vps.maxLayers), "HEVC VPS: vps_max_layers_minus1 out of 0...63")
                checkRanges(vps.profileTierLevel)
                videoSets[vps.id] = vps
                parsedSets.append(unit.bytes)
            case .sequenceParameterSet:
                let parsed = sameFromReescaped(unit, headerLength: 2) { (u: NALUnit) throws(VideoBitstreamError) in
                    try HEVCSequenceParameterSet(nalUnit: u)
                }
                guard let sps = parsed else { continue }
                checkRanges(sps)
                sequenceSets[sps.id] = sps
                parsedSets.append(unit.bytes)
            case .pictureParameterSet:
                let parsed = sameFromReescaped(unit, headerLength: 2) { (u: NALUnit) throws(VideoBitstreamError) in
                    try HEVCPictureParameterSet(nalUnit: u)
                }
                guard let pps = parsed else { continue }
                // 7.4.3.3.1.
                precondition((0...63).contains(pps.id), "HEVC PPS: pps_pic_parameter_set_id out of 0...63")
                precondition((0...15).contains(pps.sequenceParameterSetID), "HEVC PPS: pps_seq_parameter_set_id out of 0...15")
                precondition((0...7).contains(pps.numberOfExtraSliceHeaderBits), "HEVC PPS: num_extra_slice_header_bits out of 0...7")
                precondition((1...15).contains(pps.defaultActiveReferencesL0) && (1...15).contains(pps.defaultActiveReferencesL1),
                             "HEVC PPS: num_ref_idx_lX_default_active_minus1 out of 0...14")
                pictureSets[pps.id] = pps
                parsedSets.append(unit.bytes)
            case let type where type.isDefinedSlice:
                let parsed = sameFromReescaped(unit, headerLength: 2) { (u: NALUnit) throws(VideoBitstreamError) in
                    try HEVCSliceSegmentHeader(nalUnit: u, pictureParameterSets: pictureSets, sequenceParameterSets: sequenceSets)
                }
                guard let slice = parsed else { continue }
                checkRanges(slice, pictureSets: pictureSets, sequenceSets: sequenceSets)
            default:
                precondition((try? HEVCSequenceParameterSet(nalUnit: unit)) == nil, "HEVC SPS parser accepts another NAL unit type")
                precondition((try? HEVCSliceSegmentHeader(nalUnit: unit, pictureParameterSets: pictureSets,
                                                          sequenceParameterSets: sequenceSets)) == nil,
                              "HEVC slice segment header parser accepts a NAL unit type that is not a slice")
            }
        }
        let types = Set(parsedSets.map { ($0[0] >> 1) & 0x3F })
        if types.isSuperset(of: [32, 33, 34]) {
            checkHEVCConfigurationRecord(parameterSets: Array(parsedSets.prefix(64)), arrayCompleteness: data.count % 2 == 0)
        }
    }

    /// ITU-T H.265 7.4.4.
    private static func checkRanges(_ ptl: HEVCProfileTierLevel) {
        precondition(ptl.profileSpace <= 3 && ptl.profileIDC <= 31, "HEVC profile_tier_level: a field wider than its bits")
        precondition(ptl.constraintIndicatorFlags >> 48 == 0, "HEVC profile_tier_level: constraint flags wider than 48 bits")
    }

    /// ITU-T H.265 7.4.3.2.1 (and E.3.1 for the VUI fields).
    private static func checkRanges(_ sps: HEVCSequenceParameterSet) {
        precondition((0...15).contains(sps.videoParameterSetID), "HEVC SPS: sps_video_parameter_set_id out of 0...15")
        precondition((1...7).contains(sps.maxSubLayers), "HEVC SPS: sps_max_sub_layers_minus1 out of 0...6")
        checkRanges(sps.profileTierLevel)
        precondition((0...15).contains(sps.id), "HEVC SPS: sps_seq_parameter_set_id out of 0...15")
        precondition((0...3).contains(sps.chromaFormatIDC), "HEVC SPS: chroma_format_idc out of 0...3")
        precondition(!sps.separateColourPlane || sps.chromaFormatIDC == 3, "HEVC SPS: separate_colour_plane_flag without 4:4:4")
        precondition((8...16).contains(sps.bitDepthLuma) && (8...16).contains(sps.bitDepthChroma), "HEVC SPS: bit depth out of 8...16")
        precondition((4...16).contains(sps.log2MaxPicOrderCountLsb), "HEVC SPS: log2_max_pic_order_cnt_lsb_minus4 out of 0...12")
        // sps_max_dec_pic_buffering_minus1 in 0...MaxDpbSize − 1 (MaxDpbSize at most 16, A.4.2);
        // sps_max_num_reorder_pics in 0...sps_max_dec_pic_buffering_minus1.
        precondition((1...16).contains(sps.maxDecodedPictureBuffering), "HEVC SPS: sps_max_dec_pic_buffering_minus1 out of 0...15")
        precondition((0..<sps.maxDecodedPictureBuffering).contains(sps.maxNumberOfReorderPictures),
                     "HEVC SPS: sps_max_num_reorder_pics over sps_max_dec_pic_buffering_minus1")
        precondition((3...6).contains(sps.log2MinCodingBlockSize), "HEVC SPS: MinCbLog2SizeY out of 3...6")
        precondition((sps.log2MinCodingBlockSize...6).contains(sps.log2CodingTreeBlockSize), "HEVC SPS: CtbLog2SizeY out of MinCbLog2SizeY...6")
        // pic_width/height_in_luma_samples: not 0, and a multiple of MinCbSizeY.
        let minCodingBlock = 1 << sps.log2MinCodingBlockSize
        precondition(sps.codedWidth >= 1 && sps.codedWidth % minCodingBlock == 0, "HEVC SPS: pic_width_in_luma_samples not a multiple of MinCbSizeY")
        precondition(sps.codedHeight >= 1 && sps.codedHeight % minCodingBlock == 0, "HEVC SPS: pic_height_in_luma_samples not a multiple of MinCbSizeY")
        // conf_win_*_offset: the window is not empty (7-1, 7-2).
        precondition(sps.width >= 1 && sps.width <= sps.codedWidth, "HEVC SPS: conformance window width out of range")
        precondition(sps.height >= 1 && sps.height <= sps.codedHeight, "HEVC SPS: conformance window height out of range")
        precondition((0...64).contains(sps.numberOfShortTermReferencePictureSets), "HEVC SPS: num_short_term_ref_pic_sets out of 0...64")
        precondition((0...32).contains(sps.numberOfLongTermReferencePictures), "HEVC SPS: num_long_term_ref_pics_sps out of 0...32")
        precondition(sps.longTermReferencePicturesPresent || sps.numberOfLongTermReferencePictures == 0,
                     "HEVC SPS: long-term pictures without long_term_ref_pics_present_flag")
        if let idc = sps.minSpatialSegmentationIDC {
            precondition((0...4095).contains(idc), "HEVC SPS VUI: min_spatial_segmentation_idc out of 0...4095")
        }
        if let duration = sps.frameDuration {
            precondition(duration.value > 0 && (1...Int64(Int32.max)).contains(duration.timescale), "HEVC SPS VUI: frame duration out of range")
        }
    }

    /// ITU-T H.265 7.4.7.1 (and 7.4.2.2 for `TemporalId`), with the parameter sets in force.
    private static func checkRanges(_ slice: HEVCSliceSegmentHeader, pictureSets: [Int: HEVCPictureParameterSet],
                                    sequenceSets: [Int: HEVCSequenceParameterSet]) {
        precondition((0...63).contains(slice.pictureParameterSetID), "HEVC slice: slice_pic_parameter_set_id out of 0...63")
        precondition((0...2).contains(slice.sliceType), "HEVC slice: slice_type out of 0...2")
        precondition(!slice.nalUnitType.isIRAP || slice.temporalID == 0, "HEVC slice: TemporalId of an IRAP picture is not 0")
        guard slice.firstSliceSegmentInPicture else { return }
        guard let pps = pictureSets[slice.pictureParameterSetID], let sps = sequenceSets[pps.sequenceParameterSetID] else {
            preconditionFailure("HEVC first slice segment header parsed without its PPS or SPS")
        }
        precondition(!slice.nalUnitType.isIRAP || slice.sliceType == 2, "HEVC slice: an IRAP slice that is not I")
        precondition((0..<Int(sps.maxPicOrderCountLsb)).contains(slice.picOrderCountLsb), "HEVC slice: slice_pic_order_cnt_lsb over MaxPicOrderCntLsb")
        precondition(!slice.nalUnitType.isIDR || slice.picOrderCountLsb == 0, "HEVC slice: an IDR picture with a picture order count")
    }

    // MARK: annexb

    /// ``AnnexBNALUnitReader`` and ``AnnexBReader`` (as H.264 and as H.265) end to end:
    ///
    /// - the NAL units do not depend on the read size and partition the input: each unit is the
    ///   input's bytes at its offset, and what lies between units is zero bytes and start codes
    ///   only (B.2), so the units reassemble to the input minus start codes and zero bytes;
    /// - the samples, their times, formats and the error that ends the stream do not depend on
    ///   the read size;
    /// - the samples' NAL units, in order, are exactly the stream's units without the parameter
    ///   sets and access unit delimiters, up to the error or up to the last picture;
    /// - decode times are consecutive frames; presentation times are distinct, whole frames,
    ///   and never before the decode time (the reorder delay);
    /// - the format's configuration record is what `avcConfiguration()` / `hevcConfiguration()`
    ///   give, and parses back (`VideoConfigurationRecordCheck.swift`).
    static func annexBStream(_ data: [UInt8]) {
        let units = nalUnitsChecked(data)
        let small = Int(data.count > 4 ? data[4] : 0) % 29 + 1
        for codec in [VideoCodec.h264, .hevc] {
            let a = readSamples(data, codec: codec, chunkSize: small)
            let b = readSamples(data, codec: codec, chunkSize: 64 * 1024)
            precondition(a.samples == b.samples, "Annex B \(codec) samples depend on the chunk size")
            precondition(a.error == b.error, "Annex B \(codec) error depends on the chunk size: \(String(describing: a.error)) / \(String(describing: b.error))")
            precondition(a.delay == b.delay, "Annex B \(codec) composition delay depends on the chunk size")
            checkSamples(b.samples, error: b.error, units: units, codec: codec, delay: b.delay)
            checkConfiguration(data, codec: codec, samples: b.samples, error: b.error)
        }
    }

    /// The samples of `data` read as `codec`, and the error that ended them.
    private static func readSamples(_ data: [UInt8], codec: VideoCodec, chunkSize: Int)
        -> (samples: [MediaSample], error: VideoBitstreamError?, delay: Int64) {
        var samples: [MediaSample] = []
        do {
            var reader = try AnnexBReader(source: ArrayByteSource(data), codec: codec, chunkSize: chunkSize, reorderWindow: 8)
            do {
                while let sample = try reader.nextSample() {
                    samples.append(sample)
                    precondition(samples.count <= data.count, "Annex B reader delivers more samples than the input has bytes")
                }
            } catch {
                return (samples, error, reader.compositionDelay)
            }
            return (samples, nil, reader.compositionDelay)
        } catch {
            preconditionFailure("AnnexBReader refuses valid arguments: \(error)")
        }
    }

    private static func checkSamples(_ samples: [MediaSample], error: VideoBitstreamError?, units: [NALUnit], codec: VideoCodec, delay: Int64) {
        // The units that go into samples, in stream order (14496-15 5.3.2 / 8.3.2: no parameter sets, no AUD).
        let carried = units.filter { unit in
            switch codec {
            case .hevc:
                guard unit.bytes.count >= 2 else { return true }
                return !(32...35).contains(unit.hevcType.rawValue)
            default:
                return ![7, 8, 9].contains(unit.h264Type.rawValue)
            }
        }
        var delivered: [[UInt8]] = []
        var presentation = Set<Int64>()
        for (index, sample) in samples.enumerated() {
            var reader = sample.data[...]
            while !reader.isEmpty {
                precondition(reader.count >= 4, "Annex B sample: a NAL unit length cut short")
                let length = reader.prefix(4).reduce(0) { $0 << 8 | Int($1) }
                reader = reader.dropFirst(4)
                precondition(length >= 1 && length <= reader.count, "Annex B sample: a NAL unit length past the sample")
                delivered.append(Array(reader.prefix(length)))
                reader = reader.dropFirst(length)
            }
            let frame = sample.duration
            precondition(frame.value > 0, "Annex B sample: a duration that is not positive")
            precondition(sample.decodeTime.value == Int64(index) * frame.value && sample.decodeTime.timescale == frame.timescale,
                         "Annex B sample: decode times are not consecutive frames")
            precondition(sample.presentationTime.timescale == frame.timescale && sample.presentationTime.value % frame.value == 0,
                         "Annex B sample: a presentation time that is not a whole frame")
            precondition(sample.presentationTime >= sample.decodeTime, "Annex B sample: presented before it is decoded")
            precondition(presentation.insert(sample.presentationTime.value).inserted, "Annex B samples: two with one presentation time")
            if error == nil {
                // Ranks are 0..<count, each offset by the delay at the time it was given.
                precondition(sample.presentationTime.value / frame.value < Int64(samples.count) + delay,
                             "Annex B sample: presented later than its rank and the delay allow")
            }
            guard case .video(let format) = sample.format, format.codec == codec else {
                preconditionFailure("Annex B sample: not a \(codec) video format")
            }
            precondition(format.width >= 1 && format.height >= 1, "Annex B sample: an empty picture size")
            for set in format.parameterSets {
                precondition(units.contains { $0.bytes == set }, "Annex B sample: a parameter set that is not in the stream")
            }
        }
        precondition(delivered.count <= carried.count && zip(delivered, carried).allSatisfy { $0 == $1.bytes },
                     "Annex B \(codec): the samples' NAL units are not the stream's, in order")
        if error == nil {
            // What is left is after the last picture: no slice of a picture was dropped.
            for unit in carried.dropFirst(delivered.count) {
                switch codec {
                case .hevc:
                    precondition(unit.bytes.count < 2 || !unit.hevcType.isDefinedSlice || unit.hevcLayerID != 0,
                                 "Annex B HEVC: a slice segment at byte \(unit.offset) is in no sample")
                default:
                    precondition(!unit.h264Type.isVCL, "Annex B H.264: a slice at byte \(unit.offset) is in no sample")
                }
            }
        }
    }

    /// The configuration the reader reports for its first picture is the first sample's.
    private static func checkConfiguration(_ data: [UInt8], codec: VideoCodec, samples: [MediaSample], error: VideoBitstreamError?) {
        let record = firstConfigurationRecord(data, codec: codec)
        guard let first = samples.first, case .video(let format) = first.format else { return }
        guard let record else {
            preconditionFailure("Annex B \(codec): a first sample but no configuration record")
        }
        precondition(record == format.configurationRecord, "Annex B \(codec): the configuration record is not the first sample's")
        checkConfigurationRecordParses(record, codec: codec, parameterSets: format.parameterSets)
    }

    // MARK: shared

    /// The NAL units of `data` split as Annex B, checked to partition it (see ``annexBStream(_:)``),
    /// and the same whatever the read size. Empty when the input is not Annex B.
    static func nalUnitsChecked(_ data: [UInt8]) -> [NALUnit] {
        let small = Int(data.count > 3 ? data[3] : 0) % 23 + 1
        let a = nalUnits(data, chunkSize: small)
        let b = nalUnits(data, chunkSize: 64 * 1024)
        precondition(a.units == b.units && a.error == b.error, "Annex B NAL units depend on the chunk size")
        var position = 0
        for unit in b.units {
            let start = Int(unit.offset)
            precondition(start >= position && start + unit.bytes.count <= data.count, "Annex B NAL unit outside the input or overlapping")
            precondition(!unit.bytes.isEmpty && unit.bytes.last != 0, "Annex B NAL unit empty or ending in a zero byte")
            precondition(Array(data[start..<start + unit.bytes.count]) == unit.bytes, "Annex B NAL unit differs from the input bytes")
            precondition(isStartCodes(data[position..<start]), "Annex B bytes other than start codes and zeros between NAL units")
            precondition(!containsStartCode(unit.bytes), "Annex B NAL unit holds a start code")
            position = start + unit.bytes.count
        }
        switch b.error {
        case nil:
            // After the last unit: zeros, or start codes of empty units and zeros.
            var end = data.count
            while end > position, data[end - 1] == 0 { end -= 1 }
            precondition(end == position || isStartCodes(data[position..<end]), "Annex B bytes other than start codes and zeros after the last NAL unit")
        case .notAnnexB(let offset, _)?:
            precondition(b.units.isEmpty && offset >= 0 && Int(offset) < data.count && data[Int(offset)] != 0,
                         "Annex B: not-Annex-B reported after a NAL unit, or not at a non-zero byte")
            precondition(!isStartCodes(data[0...Int(offset)]), "Annex B: not-Annex-B reported for a start code")
        case let other?:
            preconditionFailure("Annex B NAL unit reader: unexpected error \(other)")
        }
        return b.units
    }

    private static func nalUnits(_ data: [UInt8], chunkSize: Int) -> (units: [NALUnit], error: VideoBitstreamError?) {
        var reader = AnnexBNALUnitReader(source: ArrayByteSource(data), chunkSize: chunkSize)
        var units: [NALUnit] = []
        do {
            while let unit = try reader.next() { units.append(unit) }
        } catch {
            return (units, error)
        }
        precondition(reader.offset == Int64(data.count), "Annex B NAL unit reader ends before the end of its input")
        return (units, nil)
    }

    /// Whether `bytes` is one or more start codes, each after any number of further zero bytes:
    /// `(00* 00 00 01)+` (several when empty NAL units were skipped).
    private static func isStartCodes(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.last == 1 else { return false }
        var zeros = 0
        for byte in bytes {
            switch byte {
            case 0: zeros += 1
            case 1:
                guard zeros >= 2 else { return false }
                zeros = 0
            default: return false
            }
        }
        return true
    }

    private static func containsStartCode(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 3 else { return false }
        for index in 2..<bytes.count where bytes[index] == 1 && bytes[index - 1] == 0 && bytes[index - 2] == 0 { return true }
        return false
    }

    /// Parses `unit` and a copy whose payload (after `headerLength` bytes) is unescaped and
    /// escaped again canonically (H.264 7.4.1, H.265 7.4.2: an `emulation_prevention_three_byte`
    /// after every `00 00` followed by a byte up to 3): both denote the same RBSP, so both must
    /// give the same value or the same error. Returns the value.
    private static func sameFromReescaped<T: Equatable>(_ unit: NALUnit, headerLength: Int,
                                                        _ parse: (NALUnit) throws(VideoBitstreamError) -> T) -> T? {
        let original = Result { () throws(VideoBitstreamError) in try parse(unit) }
        let head = unit.bytes.prefix(headerLength)
        let canonical = NALUnit(bytes: Array(head) + escape(unescape(unit.bytes.dropFirst(headerLength))), offset: unit.offset)
        let again = Result { () throws(VideoBitstreamError) in try parse(canonical) }
        precondition(original == again, "\(T.self) differs when the emulation prevention bytes change: \(original) / \(again)")
        return try? original.get()
    }

    /// The RBSP of a NAL unit payload: each `00 00 03` loses its `03`.
    static func unescape(_ payload: ArraySlice<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        var zeros = 0
        for byte in payload {
            if zeros >= 2, byte == 3 {
                zeros = 0
                continue
            }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return output
    }

    /// `rbsp` with an `emulation_prevention_three_byte` wherever two zeros precede a byte up to 3.
    static func escape(_ rbsp: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2, byte <= 3 {
                output.append(3)
                zeros = 0
            }
            output.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return output
    }
}
