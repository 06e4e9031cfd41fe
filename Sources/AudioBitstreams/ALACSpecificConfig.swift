internal import MediaCore

/// Apple Lossless's decoder configuration (`ALACSpecificConfig`, Apple's ALAC reference
/// `ALACAudioTypes.h`): 24 bytes, big-endian. In ISO BMFF it is the body of the `alac` full box
/// inside the `alac` sample entry; libavcodec takes that whole box (size, `alac`, version and
/// flags, the config: 36 bytes) as its extradata, the "magic cookie" — ``cookie`` and
/// ``init(cookie:)``.
public struct ALACSpecificConfig: Sendable, Hashable {
    /// The bytes of the config.
    public static let byteCount = 24

    /// Samples per frame (4096 by default).
    public var frameLength: Int
    /// Bits per sample: 16, 20, 24 or 32.
    public var bitDepth: Int
    /// Channels (1–8).
    public var channelCount: Int
    /// The largest frame in bytes; 0 when unknown.
    public var maximumFrameBytes: Int
    /// The average bitrate; 0 when unknown.
    public var averageBitrate: Int
    /// Samples per second.
    public var sampleRate: Int
    /// The rest, kept as read: compatible version, the Rice parameters pb, mb and kb, maxRun.
    public var tuning: [UInt8]

    /// Parses the 24-byte config.
    ///
    /// - Throws: ``AudioBitstreamError`` for fewer bytes, or no channels or depth.
    public init(bytes: some Collection<UInt8>) throws(AudioBitstreamError) {
        var reader = ByteReader(Array(bytes))
        let fields = try reading("ALACSpecificConfig") { () throws(BinaryReadError) in
            (try reader.readUInt32(), try reader.readUInt8(), try reader.readUInt8(), try reader.readBytes(3), try reader.readUInt8(),
             try reader.readUInt16(), try reader.readUInt32(), try reader.readUInt32(), try reader.readUInt32())
        }
        frameLength = Int(fields.0)
        bitDepth = Int(fields.2)
        channelCount = Int(fields.4)
        maximumFrameBytes = Int(fields.6)
        averageBitrate = Int(fields.7)
        sampleRate = Int(fields.8)
        tuning = [fields.1] + fields.3 + [UInt8(fields.5 >> 8), UInt8(fields.5 & 0xFF)]
        guard channelCount > 0, bitDepth > 0, frameLength > 0 else {
            throw AudioBitstreamError("ALACSpecificConfig", "\(channelCount) channels of \(bitDepth) bits, \(frameLength)-sample frames")
        }
    }

    /// The 24 bytes.
    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: Self.byteCount)
        let tuning = tuning.count == 6 ? tuning : [0, 40, 10, 14, 0, 255]
        writer.write(UInt32(clamping: frameLength))
        writer.write(tuning[0])
        writer.write(UInt8(clamping: bitDepth))
        writer.write(contentsOf: tuning[1...3])
        writer.write(UInt8(clamping: channelCount))
        writer.write(contentsOf: tuning[4...5])
        writer.write(UInt32(clamping: maximumFrameBytes))
        writer.write(UInt32(clamping: averageBitrate))
        writer.write(UInt32(clamping: sampleRate))
        return writer.bytes
    }

    /// The config of a magic cookie: the 36-byte `alac` box libavcodec takes, or the 24-byte
    /// config alone (QuickTime's `frma`/`alac` wrapping, and other forms, are found by the
    /// `alac` tag).
    public init(cookie: [UInt8]) throws(AudioBitstreamError) {
        if cookie.count == Self.byteCount {
            try self.init(bytes: cookie)
            return
        }
        // The `alac` box itself: a size of 36 (the config's box; QuickTime's `frma` box also
        // holds the word `alac`, with a size of 12), then version and flags, then the config.
        let tag = Array("alac".utf8)
        guard cookie.count >= 36, let at = (4...(cookie.count - 32)).first(where: { at in
            Array(cookie[at..<(at + 4)]) == tag && cookie[(at - 4)..<at].elementsEqual([0, 0, 0, 36])
        }) else {
            throw AudioBitstreamError("ALAC magic cookie", "no 36-byte alac box in \(cookie.count) bytes")
        }
        try self.init(bytes: cookie[(at + 8)...])
    }

    /// The magic cookie libavcodec takes: a 36-byte `alac` full box of version 0 holding the
    /// config.
    public var cookie: [UInt8] { [0, 0, 0, 36] + Array("alac".utf8) + alacBoxPayload }

    /// The payload of the `alac` box in an `alac` sample entry: version 0, flags 0, the config.
    public var alacBoxPayload: [UInt8] { [0, 0, 0, 0] + bytes }
}
