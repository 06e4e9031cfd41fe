public import MediaCore
public import VideoBitstream

/// Turns the samples of an H.264 or HEVC track of an ISO BMFF file, whose NAL units carry a
/// big-endian length prefix (ISO/IEC 14496-15, 5.3.2 and 8.3.2), into an Annex B byte stream
/// (ITU-T H.264 Annex B, H.265 Annex B): start codes instead of lengths, and the parameter
/// sets of the sample entry's configuration record put in front of the pictures that need them.
///
/// The output is byte-identical to what FFmpeg 5.1 writes for
/// `ffmpeg -i IN.mp4 -map 0:v:0 -c:v copy -f h264 OUT.h264` (or `-f hevc`), that is to its
/// `h264_mp4toannexb` and `hevc_mp4toannexb` bitstream filters. Their rules, which this type
/// follows (its own code):
///
/// - **H.264.** A NAL unit gets a 4-byte start code `00 00 00 01` when it is an SPS or a PPS or
///   the first thing written for the sample, and a 3-byte start code `00 00 01` otherwise. The
///   record's SPSs and PPSs (each with a 4-byte start code) go in front of the first IDR slice
///   of an IDR picture when no SPS or PPS was seen in-band since the last non-IDR slice that
///   ended an IDR run; when only an in-band SPS was seen, the record's PPSs go in front of it;
///   an in-band PPS with no SPS before it gets the record's SPSs in front. This state carries
///   from one sample to the next (``reset()`` starts over, as after a seek). Zero-length NAL
///   units are dropped.
/// - **HEVC.** Every NAL unit gets a 4-byte start code. All NAL units of the `hvcC` record, in
///   its order (VPS, SPS, PPS and any SEI), each with a 4-byte start code, go in front of the
///   first IRAP NAL unit (types 16 to 23) of each sample, whether or not the sample carries
///   parameter sets in-band.
///
/// The decision follows the NAL unit types, not the sample's sync flag, as FFmpeg's does.
public struct AnnexBConverter: Sendable {
    /// The codec: ``/MediaCore/VideoCodec/h264`` or ``/MediaCore/VideoCodec/hevc``.
    public let codec: VideoCodec
    /// The size of the samples' NAL unit length fields (1 to 4).
    public let nalUnitLengthSize: Int

    /// H.264: the record's SPSs, each behind a 4-byte start code.
    private let sequenceParameterSetBlock: [UInt8]
    /// H.264: the record's PPSs, each behind a 4-byte start code.
    private let pictureParameterSetBlock: [UInt8]
    /// HEVC: every NAL unit of the record, each behind a 4-byte start code.
    private let headerBlock: [UInt8]

    /// H.264: the next IDR slice starts a new IDR picture (FFmpeg's `new_idr`).
    private var newIDR = true
    /// H.264: an SPS was seen in-band since the state was last cleared.
    private var sequenceParameterSetSeen = false
    /// H.264: a PPS was seen in-band since the state was last cleared.
    private var pictureParameterSetSeen = false

    private static let longStartCode: [UInt8] = [0, 0, 0, 1]
    private static let shortStartCode: [UInt8] = [0, 0, 1]

    /// A converter for samples with `nalUnitLengthSize`-byte length fields, inserting
    /// `parameterSets` (NAL units without start codes).
    ///
    /// For H.264 the units whose type is 8 are the PPSs and all others the SPSs (both keep their
    /// order); pass ``/VideoBitstream/AVCDecoderConfigurationRecord/parameterSets``. For HEVC all units are put
    /// in front of IRAP pictures in the order given; to match FFmpeg pass
    /// ``/VideoBitstream/HEVCDecoderConfigurationRecord/allNALUnits`` (SEI included), or build the converter
    /// from the record itself.
    ///
    /// - Throws: ``MP4Error/unsupportedCodec(trackID:codec:reason:)`` (with track 0) for a codec
    ///   other than H.264 and HEVC; ``MP4Error/invalidField(path:field:value:offset:allowed:)``
    ///   for a length size outside 1...4.
    public init(codec: VideoCodec, nalUnitLengthSize: Int, parameterSets: [[UInt8]]) throws(MP4Error) {
        switch codec {
        case .h264:
            let sps = parameterSets.filter { ($0.first ?? 0) & 0x1F != 8 }
            let pps = parameterSets.filter { ($0.first ?? 0) & 0x1F == 8 }
            try self.init(codec: codec, nalUnitLengthSize: nalUnitLengthSize, first: sps, second: pps)
        case .hevc:
            try self.init(codec: codec, nalUnitLengthSize: nalUnitLengthSize, first: parameterSets, second: [])
        default:
            throw .unsupportedCodec(trackID: 0, codec: codec.description, reason: "Annex B conversion is defined for H.264 and HEVC only")
        }
    }

    /// A converter for the samples of an `avc1`/`avc3` track described by `configuration`.
    public init(configuration: AVCDecoderConfigurationRecord) {
        self.codec = .h264
        self.nalUnitLengthSize = configuration.nalUnitLengthSize
        self.sequenceParameterSetBlock = Self.startCoded(configuration.sequenceParameterSets)
        self.pictureParameterSetBlock = Self.startCoded(configuration.pictureParameterSets)
        self.headerBlock = []
    }

    /// A converter for the samples of an `hvc1`/`hev1` track described by `configuration`.
    ///
    /// Like FFmpeg, it puts the arrays of types VPS, SPS, PPS and SEI (32, 33, 34, 39, 40) in
    /// front of IRAP pictures, in the record's order; FFmpeg refuses a record with arrays of
    /// other types, which are left out here.
    public init(configuration: HEVCDecoderConfigurationRecord) {
        self.codec = .hevc
        self.nalUnitLengthSize = configuration.nalUnitLengthSize
        self.sequenceParameterSetBlock = []
        self.pictureParameterSetBlock = []
        let accepted: Set<UInt8> = [32, 33, 34, 39, 40]
        self.headerBlock = Self.startCoded(configuration.arrays.filter { accepted.contains($0.nalUnitType) }.flatMap(\.nalUnits))
    }

    private init(codec: VideoCodec, nalUnitLengthSize: Int, first: [[UInt8]], second: [[UInt8]]) throws(MP4Error) {
        guard (1...4).contains(nalUnitLengthSize) else {
            throw .invalidField(path: BoxPath(components: [codec == .hevc ? "hvcC" : "avcC"]), field: "lengthSizeMinusOne + 1",
                                value: Int64(nalUnitLengthSize), offset: 0, allowed: "1...4")
        }
        self.codec = codec
        self.nalUnitLengthSize = nalUnitLengthSize
        if codec == .hevc {
            self.sequenceParameterSetBlock = []
            self.pictureParameterSetBlock = []
            self.headerBlock = Self.startCoded(first)
        } else {
            self.sequenceParameterSetBlock = Self.startCoded(first)
            self.pictureParameterSetBlock = Self.startCoded(second)
            self.headerBlock = []
        }
    }

    private static func startCoded(_ units: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(units.reduce(0) { $0 + 4 + $1.count })
        for unit in units {
            bytes.append(contentsOf: longStartCode)
            bytes.append(contentsOf: unit)
        }
        return bytes
    }

    /// Forgets the in-band parameter sets seen so far, as FFmpeg's filter does when it is
    /// flushed (after a seek): the next IDR picture gets the record's parameter sets again.
    public mutating func reset() {
        newIDR = true
        sequenceParameterSetSeen = false
        pictureParameterSetSeen = false
    }

    /// Converts one sample (length-prefixed NAL units) to Annex B.
    ///
    /// An empty sample gives empty output and leaves the state alone. `isSync` does not change
    /// the output (FFmpeg decides from the NAL unit types); it is accepted so that callers pass
    /// what the sample table says. When the sample is malformed, nothing is returned and the
    /// state is left as it was.
    ///
    /// - Parameters:
    ///   - sample: the sample's bytes: NAL units, each behind a ``nalUnitLengthSize``-byte length.
    ///   - isSync: whether the sample table marks the sample as a sync sample.
    ///   - trackID: the sample's track, named in errors.
    ///   - sampleIndex: the sample's index in its track, named in errors.
    ///   - sampleOffset: the sample's absolute offset in the file, so that errors give absolute
    ///     byte offsets (0: offsets within the sample).
    /// - Throws: ``MP4Error/invalidField(path:field:value:offset:allowed:)`` with the path
    ///   `track N sample M` when a length field does not fit in the sample, a NAL unit runs past
    ///   its end, or (HEVC) a NAL unit is shorter than its 2-byte header.
    public mutating func convert(_ sample: [UInt8], isSync: Bool, trackID: UInt32, sampleIndex: Int,
                                 sampleOffset: Int64 = 0) throws(MP4Error) -> [UInt8] {
        guard !sample.isEmpty else { return [] }
        let location = Location(trackID: trackID, sampleIndex: sampleIndex, sampleOffset: sampleOffset)
        switch codec {
        case .hevc: return try convertHEVC(sample, location)
        default: return try convertH264(sample, location)
        }
    }

    /// Where a sample is, for error messages.
    private struct Location {
        var trackID: UInt32
        var sampleIndex: Int
        var sampleOffset: Int64

        var path: BoxPath { BoxPath(components: ["track \(trackID) sample \(sampleIndex)"]) }
    }

    /// Reads the length field at `position` and checks the NAL unit it announces against the sample.
    private func nalUnitLength(in sample: [UInt8], at position: Int, minimum: Int, _ location: Location) throws(MP4Error) -> Int {
        let left = sample.count - position
        guard left >= nalUnitLengthSize else {
            throw .invalidField(path: location.path, field: "NAL unit length field", value: Int64(left),
                                offset: location.sampleOffset + Int64(position),
                                allowed: "\(nalUnitLengthSize) bytes (only \(left) left in the \(sample.count)-byte sample)")
        }
        var length = 0
        for index in position..<(position + nalUnitLengthSize) {
            length = length << 8 | Int(sample[index])
        }
        let available = left - nalUnitLengthSize
        guard length <= available, length >= minimum else {
            throw .invalidField(path: location.path, field: "NAL unit length", value: Int64(length),
                                offset: location.sampleOffset + Int64(position),
                                allowed: "\(minimum)...\(available) (the bytes left in the \(sample.count)-byte sample)")
        }
        return length
    }

    private mutating func convertH264(_ sample: [UInt8], _ location: Location) throws(MP4Error) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(sample.count + sequenceParameterSetBlock.count + pictureParameterSetBlock.count + 64)
        var newIDR = self.newIDR
        var spsSeen = sequenceParameterSetSeen
        var ppsSeen = pictureParameterSetSeen
        var position = 0
        repeat {
            let length = try nalUnitLength(in: sample, at: position, minimum: 0, location)
            position += nalUnitLengthSize
            if length == 0 { continue }
            let type = sample[position] & 0x1F
            if type == 7 {
                spsSeen = true
                newIDR = true
            } else if type == 8 {
                ppsSeen = true
                newIDR = true
                if !spsSeen, !sequenceParameterSetBlock.isEmpty {
                    output.append(contentsOf: sequenceParameterSetBlock)
                    spsSeen = true
                }
            }
            if type == 5 {
                // first_mb_in_slice == 0 (ue(v) "1") starts a new IDR picture. FFmpeg reads the
                // byte after the header even for a 1-byte unit (the next byte, or zero padding).
                let next = position + 1 < sample.count ? sample[position + 1] : 0
                if !newIDR, next & 0x80 != 0 { newIDR = true }
                if newIDR, !spsSeen, !ppsSeen {
                    output.append(contentsOf: sequenceParameterSetBlock)
                    output.append(contentsOf: pictureParameterSetBlock)
                    newIDR = false
                } else if newIDR, spsSeen, !ppsSeen {
                    output.append(contentsOf: pictureParameterSetBlock)
                }
            }
            output.append(contentsOf: type == 7 || type == 8 || output.isEmpty ? Self.longStartCode : Self.shortStartCode)
            output.append(contentsOf: sample[position..<(position + length)])
            if !newIDR, type == 1 {
                newIDR = true
                spsSeen = false
                ppsSeen = false
            }
            position += length
        } while position < sample.count
        self.newIDR = newIDR
        sequenceParameterSetSeen = spsSeen
        pictureParameterSetSeen = ppsSeen
        return output
    }

    private func convertHEVC(_ sample: [UInt8], _ location: Location) throws(MP4Error) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(sample.count + headerBlock.count + 64)
        var gotIRAP = false
        var position = 0
        while position < sample.count {
            let length = try nalUnitLength(in: sample, at: position, minimum: 2, location)
            position += nalUnitLengthSize
            let type = (sample[position] >> 1) & 0x3F
            let isIRAP = (16...23).contains(type)
            if isIRAP, !gotIRAP { output.append(contentsOf: headerBlock) }
            gotIRAP = gotIRAP || isIRAP
            output.append(contentsOf: Self.longStartCode)
            output.append(contentsOf: sample[position..<(position + length)])
            position += length
        }
        return output
    }
}
