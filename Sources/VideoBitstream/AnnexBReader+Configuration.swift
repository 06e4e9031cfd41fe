extension AnnexBReader {
    /// The `avcC` record of an H.264 stream, built from the parameter sets that come before its
    /// first picture (``DecoderConfiguration/avc(parameterSets:nalUnitLengthSize:)``), with the
    /// 4-byte NAL unit lengths the samples use. Reads ahead as far as the first picture.
    ///
    /// - Throws: ``VideoBitstreamError/invalidArgument(_:)`` for an HEVC reader,
    ///   ``VideoBitstreamError/noPictures`` for a stream without pictures, and what
    ///   ``nextSample()`` throws.
    public mutating func avcConfiguration() throws(VideoBitstreamError) -> AVCDecoderConfigurationRecord {
        guard codec == .h264 else { throw .invalidArgument("avcConfiguration() is for H.264 streams; this one is \(codec)") }
        return try DecoderConfiguration.avc(parameterSets: firstFormat().parameterSets)
    }

    /// The `hvcC` record of an HEVC stream, built from the parameter sets that come before its
    /// first picture (``DecoderConfiguration/hevc(parameterSets:arrayCompleteness:)``), with the
    /// 4-byte NAL unit lengths the samples use. Reads ahead as far as the first picture.
    ///
    /// - Parameter arrayCompleteness: `true` (the default) since the samples carry no parameter
    ///   sets (`hvc1`); `false` gives the record FFmpeg writes for `hev1`.
    /// - Throws: ``VideoBitstreamError/invalidArgument(_:)`` for an H.264 reader,
    ///   ``VideoBitstreamError/noPictures`` for a stream without pictures, and what
    ///   ``nextSample()`` throws.
    public mutating func hevcConfiguration(arrayCompleteness: Bool = true) throws(VideoBitstreamError) -> HEVCDecoderConfigurationRecord {
        guard codec == .hevc else { throw .invalidArgument("hevcConfiguration() is for HEVC streams; this one is \(codec)") }
        return try DecoderConfiguration.hevc(parameterSets: firstFormat().parameterSets, arrayCompleteness: arrayCompleteness)
    }
}
