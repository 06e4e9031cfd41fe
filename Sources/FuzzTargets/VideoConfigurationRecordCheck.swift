import MediaCore
import VideoBitstream

// The `avcC` and `hvcC` records (ISO/IEC 14496-15 5.3.3.1, 8.3.3.1) that ``DecoderConfiguration``
// builds from parsed parameter sets, parsed back with the records' own parsers.

extension FuzzTarget {
    /// The `avcC` built from `parameterSets` (SPSs and PPSs that parsed, in stream order) holds
    /// them, takes its profile and high-profile extension from the first SPS, and parses back to
    /// itself.
    static func checkAVCConfigurationRecord(parameterSets: [[UInt8]]) {
        let sequenceSets = parameterSets.filter { $0[0] & 0x1F == 7 }
        let pictureSets = parameterSets.filter { $0[0] & 0x1F == 8 }
        let record: AVCDecoderConfigurationRecord
        do {
            record = try DecoderConfiguration.avc(parameterSets: parameterSets)
        } catch {
            // Only more sets than the record's counts hold may be refused (5.3.3.1.2).
            guard case .invalidRecordField = error, sequenceSets.count > 31 || pictureSets.count > 255 else {
                preconditionFailure("avcC refuses parameter sets that parsed: \(error)")
            }
            return
        }
        precondition(record.sequenceParameterSets == sequenceSets && record.pictureParameterSets == pictureSets,
                     "avcC does not hold the parameter sets it was built from")
        guard let sps = try? H264SequenceParameterSet(nalUnit: NALUnit(bytes: sequenceSets[0], offset: 0)) else {
            preconditionFailure("an SPS that parsed once does not parse again")
        }
        precondition(record.profileIndication == sps.profileIDC && record.profileCompatibility == sps.constraintFlags
                     && record.levelIndication == sps.levelIDC, "avcC profile, compatibility or level differs from the SPS")
        if let extensionFields = record.highProfileExtension {
            precondition(Int(extensionFields.chromaFormat) == sps.chromaFormatIDC
                         && Int(extensionFields.bitDepthLumaMinus8) + 8 == sps.bitDepthLuma
                         && Int(extensionFields.bitDepthChromaMinus8) + 8 == sps.bitDepthChroma,
                         "avcC high-profile extension differs from the SPS")
        } else {
            precondition([66, 77, 88].contains(sps.profileIDC), "avcC without the high-profile extension for profile \(sps.profileIDC)")
        }
        let bytes = record.serialized()
        var reader = ByteReader(bytes)
        let again = try? AVCDecoderConfigurationRecord(from: &reader)
        precondition(again == record, "avcC changes through write and parse")
    }

    /// The `hvcC` built from `parameterSets` (VPSs, SPSs and PPSs that parsed, in stream order)
    /// holds them in one array per type, takes chroma format and bit depths from the last SPS,
    /// and parses back to itself.
    static func checkHEVCConfigurationRecord(parameterSets: [[UInt8]], arrayCompleteness: Bool) {
        let groups = [32, 33, 34].map { type in parameterSets.filter { ($0[0] >> 1) & 0x3F == type } }
        let sequenceSets = groups[1].compactMap { try? HEVCSequenceParameterSet(nalUnit: NALUnit(bytes: $0, offset: 0)) }
        let videoSets = groups[0].compactMap { try? HEVCVideoParameterSet(nalUnit: NALUnit(bytes: $0, offset: 0)) }
        guard let last = sequenceSets.last, sequenceSets.count == groups[1].count, videoSets.count == groups[0].count else {
            preconditionFailure("a parameter set that parsed once does not parse again")
        }
        let record: HEVCDecoderConfigurationRecord
        do {
            record = try DecoderConfiguration.hevc(parameterSets: parameterSets, arrayCompleteness: arrayCompleteness)
        } catch {
            // Only bit depths its 3-bit fields cannot hold (8.3.3.1.2) may be refused.
            guard case .invalidArgument = error, last.bitDepthLuma > 15 || last.bitDepthChroma > 15 else {
                preconditionFailure("hvcC refuses parameter sets that parsed: \(error)")
            }
            return
        }
        precondition(record.arrays.map(\.nalUnits) == groups && record.arrays.map(\.nalUnitType) == [32, 33, 34]
                     && record.arrays.allSatisfy { $0.arrayCompleteness == arrayCompleteness },
                     "hvcC does not hold the parameter sets it was built from")
        precondition(Int(record.chromaFormatIDC) == last.chromaFormatIDC, "hvcC chroma_format_idc differs from the SPS")
        precondition(Int(record.bitDepthLumaMinus8) + 8 == last.bitDepthLuma && Int(record.bitDepthChromaMinus8) + 8 == last.bitDepthChroma,
                     "hvcC bit depths differ from the SPS")
        let layers = (sequenceSets.map(\.maxSubLayers) + videoSets.map(\.maxSubLayers)).max() ?? 0
        precondition(Int(record.numTemporalLayers) == layers, "hvcC numTemporalLayers differs from the parameter sets")
        precondition(record.minSpatialSegmentationIDC <= 4095 && record.parallelismType <= 3, "hvcC field out of range")
        let bytes = record.serialized()
        var reader = ByteReader(bytes)
        let again = try? HEVCDecoderConfigurationRecord(from: &reader)
        precondition(again == record, "hvcC changes through write and parse")
    }

    /// The bytes of the record ``AnnexBReader/avcConfiguration()`` or
    /// ``AnnexBReader/hevcConfiguration(arrayCompleteness:)`` gives for `data`; `nil` when it throws.
    static func firstConfigurationRecord(_ data: [UInt8], codec: VideoCodec) -> [UInt8]? {
        guard var reader = try? AnnexBReader(source: ArrayByteSource(data), codec: codec) else { return nil }
        switch codec {
        case .hevc: return (try? reader.hevcConfiguration())?.serialized()
        default: return (try? reader.avcConfiguration())?.serialized()
        }
    }

    /// `record` (an `avcC` or `hvcC` payload from a sample's format) parses, holds
    /// `parameterSets`, and writes back to its own bytes.
    static func checkConfigurationRecordParses(_ record: [UInt8], codec: VideoCodec, parameterSets: [[UInt8]]) {
        var reader = ByteReader(record)
        switch codec {
        case .hevc:
            let parsed = try? HEVCDecoderConfigurationRecord(from: &reader)
            precondition(parsed?.parameterSets == parameterSets, "hvcC of a sample format does not hold its parameter sets")
            precondition(parsed?.serialized() == record, "hvcC of a sample format does not write back to its bytes")
        default:
            let parsed = try? AVCDecoderConfigurationRecord(from: &reader)
            precondition(parsed?.parameterSets == parameterSets, "avcC of a sample format does not hold its parameter sets")
            precondition(parsed?.serialized() == record, "avcC of a sample format does not write back to its bytes")
        }
    }
}
