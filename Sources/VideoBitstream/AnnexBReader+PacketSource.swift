public import MediaCore

extension AnnexBReader: PacketSource {
    /// The next access unit, in decode order, with its presentation time from the picture
    /// order count; `nil` at the end of the stream.
    public mutating func next() throws(VideoBitstreamError) -> MediaSample? {
        try nextSample()
    }
}
