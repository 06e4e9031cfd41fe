public import MediaCore

/// A ``/MediaCore/PacketSink`` that writes AAC packets as an ADTS stream (ISO/IEC 14496-3, 1.A.2.2)
/// to a committable byte sink: each packet's raw data block behind its own header, the header made
/// from the AudioSpecificConfig in the first packet's format. ``finish()`` commits the output.
public struct ADTSPacketWriter<Sink: CommittableByteSink>: PacketSink {
    private var sink: Sink
    private var writer: ADTSWriter<Sink>?

    /// A writer to `sink`; the stream's configuration comes from the first packet.
    public init(sink: Sink) {
        self.sink = sink
    }

    /// A writer to `sink` for the stream `config` describes.
    public init(sink: Sink, audioSpecificConfig config: AudioSpecificConfig) throws(AACBitstreamError) {
        self.sink = sink
        writer = try ADTSWriter(sink: sink, audioSpecificConfig: config)
    }

    /// Frames written.
    public var frameCount: Int { writer?.frameCount ?? 0 }

    /// Writes one AAC packet (a raw data block) as an ADTS frame.
    ///
    /// - Throws: ``AACBitstreamError`` when the packet is not AAC, its configuration cannot be
    ///   written as ADTS, or writing fails.
    public mutating func write(_ packet: MediaSample) throws(AACBitstreamError) {
        if writer == nil {
            guard case .audio(let audio) = packet.format, audio.codec == .aac else {
                throw .unrepresentable(structure: "ADTS stream", field: "codec", value: 0, allowed: "AAC packets")
            }
            let config = try AudioSpecificConfig(bytes: audio.decoderConfiguration)
            writer = try ADTSWriter(sink: sink, audioSpecificConfig: config)
        }
        try writer!.write(rawDataBlock: packet.data)
    }

    /// Writes a run of AAC packets as ADTS frames, with one copy of their bytes and one write.
    ///
    /// - Throws: as ``write(_:)``; a packet too long for a frame refuses the whole run before
    ///   anything of it is written.
    public mutating func write(run: MediaSampleRun) throws(AACBitstreamError) {
        if writer == nil {
            guard case .audio(let audio) = run.format, audio.codec == .aac else {
                throw .unrepresentable(structure: "ADTS stream", field: "codec", value: 0, allowed: "AAC packets")
            }
            writer = try ADTSWriter(sink: sink, audioSpecificConfig: try AudioSpecificConfig(bytes: audio.decoderConfiguration))
        }
        try writer!.write(rawDataBlocksOf: run)
    }

    /// Writes what is buffered and commits the output.
    public mutating func finish() throws(AACBitstreamError) {
        if let writer { sink = writer.sink }
        do { try sink.commit() } catch { throw .stream(error) }
    }

    /// Abandons the output.
    public mutating func cancel() {
        if let writer { sink = writer.sink }
        sink.cancel()
    }

    /// Removes the output, even one written in place.
    public mutating func discard() {
        if let writer { sink = writer.sink }
        sink.discard()
    }

    /// The byte sink, for an output that flushes as it goes (crash-safe recording).
    public var byteSink: Sink { writer?.sink ?? sink }
}
