import AACBitstream
import MediaCore

/// The fuzz targets: one per parser. Each takes arbitrary bytes, must never trap or hang, and
/// checks a property that only a correct parser keeps (a `precondition` failure is a finding).
///
/// The `keyframe-fuzz` executable drives them with libFuzzer; the tests replay every input in
/// `Tests/AACBitstreamTests/Regressions/` through them.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// ``ADTSReader``: frames and events do not depend on the chunk size; every header writes back
    /// to its own bytes.
    case adts
    /// ``AudioSpecificConfig``: whatever parses writes back to exactly the input bytes.
    case asc
    /// ``ESDescriptor`` (and the magic-cookie path): what parses writes back to bytes that parse
    /// to the same value and write back to themselves.
    case esds

    /// Runs the target on one input.
    public func run(_ data: [UInt8]) {
        switch self {
        case .adts: Self.adts(data)
        case .asc: Self.asc(data)
        case .esds: Self.esds(data)
        }
    }

    private static func adts(_ data: [UInt8]) {
        let small = Int(data.first ?? 0) % 61 + 1
        let a = readAll(data, chunkSize: small)
        let b = readAll(data, chunkSize: 64 * 1024)
        precondition(a.frames == b.frames, "ADTS frames depend on the chunk size")
        precondition(a.events == b.events, "ADTS events depend on the chunk size")
        precondition(a.statistics == b.statistics, "ADTS statistics depend on the chunk size")
        var consumed: Int64 = 0
        for frame in a.frames {
            precondition(frame.bytes.count == frame.header.frameLength, "frame length differs from its header")
            let header = try? frame.header.serialized()
            precondition(header.map { $0[...] == frame.bytes[0..<frame.header.headerLength] } ?? false,
                         "ADTS header does not write back to its bytes")
            consumed += Int64(frame.bytes.count)
        }
        precondition(consumed + a.statistics.skippedBytes + a.statistics.id3Bytes <= Int64(data.count) + 20,
                     "ADTS reader accounts for more bytes than it was given")
    }

    private static func readAll(_ data: [UInt8], chunkSize: Int)
        -> (frames: [ADTSFrame], events: [ADTSStreamEvent], statistics: ADTSReader<ArrayByteSource>.Statistics) {
        var reader = ADTSReader(source: ArrayByteSource(data), chunkSize: chunkSize)
        var frames: [ADTSFrame] = []
        var events: [ADTSStreamEvent] = []
        while let frame = try? reader.nextFrame() {
            frames.append(frame)
            events += reader.takeEvents()
        }
        events += reader.takeEvents()
        return (frames, events, reader.statistics)
    }

    private static func asc(_ data: [UInt8]) {
        guard let config = try? AudioSpecificConfig(bytes: data) else { return }
        _ = config.channelCount
        _ = config.outputSampleRate
        _ = config.framesPerPacket
        let written = try? config.serialized()
        precondition(written == data, "AudioSpecificConfig does not write back to its bytes")
    }

    private static func esds(_ data: [UInt8]) {
        _ = try? AudioSpecificConfig(magicCookie: data)
        _ = try? ESDescriptor(esdsBoxPayload: data)
        guard let descriptor = try? ESDescriptor(bytes: data) else { return }
        _ = try? descriptor.audioSpecificConfig()
        guard let written = try? descriptor.serialized() else {
            preconditionFailure("a parsed ES_Descriptor cannot be written")
        }
        let again = try? ESDescriptor(bytes: written)
        precondition(again == descriptor, "ES_Descriptor changes through write and parse")
        precondition((try? again?.serialized()) == written, "ES_Descriptor writing is not stable")
    }
}
