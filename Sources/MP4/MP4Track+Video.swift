internal import MediaCore
public import VideoBitstream

extension MP4Track {
    /// The `avcC` record of an H.264 track.
    public func avcConfiguration() throws(MP4Error) -> AVCDecoderConfigurationRecord? {
        guard let entry = sampleEntry, let bytes = entry.configurationBoxes["avcC"] else { return nil }
        var reader = ByteReader(bytes)
        do { return try AVCDecoderConfigurationRecord(from: &reader) } catch { throw .videoBitstream(path: path.appending("avcC"), error) }
    }

    /// The `hvcC` record of an HEVC track.
    public func hevcConfiguration() throws(MP4Error) -> HEVCDecoderConfigurationRecord? {
        guard let entry = sampleEntry, let bytes = entry.configurationBoxes["hvcC"] else { return nil }
        var reader = ByteReader(bytes)
        do { return try HEVCDecoderConfigurationRecord(from: &reader) } catch { throw .videoBitstream(path: path.appending("hvcC"), error) }
    }

    /// The parameter sets of an H.264 or HEVC track (VPS, SPS, PPS), from its `avcC` / `hvcC`.
    func videoParameterSets() throws(MP4Error) -> [[UInt8]] {
        if let avc = try avcConfiguration() { return avc.parameterSets }
        if let hevc = try hevcConfiguration() { return hevc.parameterSets }
        return []
    }

    /// A converter of this track's samples to an Annex-B stream.
    public func annexBConverter() throws(MP4Error) -> AnnexBConverter {
        if let avc = try avcConfiguration() { return AnnexBConverter(configuration: avc) }
        if let hevc = try hevcConfiguration() { return AnnexBConverter(configuration: hevc) }
        throw .unsupportedCodec(trackID: id, codec: codecName, reason: "Annex-B output needs an H.264 (avcC) or HEVC (hvcC) track")
    }
}
