public import MediaCore

/// An Opus stream's identification header (RFC 7845 5.1, `OpusHead`): what a decoder needs
/// before the first packet — the channels, the pre-skip (samples at 48 kHz to drop at the start),
/// the input's rate (for information), the output gain and the channel mapping.
///
/// libavcodec's Opus encoder and decoder take it as their extradata; an Ogg stream carries it as
/// its first packet; ISO BMFF carries the same fields big-endian in a `dOps` box (opus-codec.org,
/// "Encapsulation of Opus in ISO Base Media File Format" 4.3.2): ``init(dOpsPayload:)`` and
/// ``dOpsPayload`` convert.
public struct OpusHeader: Sendable, Hashable {
    /// Output channels (1–255).
    public var channelCount: Int
    /// Samples at 48 kHz to drop from the start of the decoded output (the encoder's delay).
    public var preSkip: Int
    /// The rate of the input the encoder was given, in hertz (0 when unknown): information only,
    /// an Opus decoder outputs 48 kHz.
    public var inputSampleRate: Int
    /// Gain to apply to the output, in Q7.8 dB.
    public var outputGain: Int16
    /// The channel mapping family (0: mono or stereo, 1: Vorbis order up to 8, 255: none).
    public var mappingFamily: UInt8
    /// For a family other than 0: the streams, the coupled (stereo) streams among them, and the
    /// stream channel each output channel is taken from.
    public var streamCount: Int
    /// The coupled streams (family other than 0).
    public var coupledCount: Int
    /// The mapping table (family other than 0).
    public var mapping: [UInt8]

    /// The magic signature, `OpusHead`.
    public static let magic = Array("OpusHead".utf8)

    /// A header of these fields.
    public init(channelCount: Int, preSkip: Int, inputSampleRate: Int, outputGain: Int16 = 0, mappingFamily: UInt8 = 0,
                streamCount: Int = 1, coupledCount: Int = 0, mapping: [UInt8] = []) {
        self.channelCount = channelCount
        self.preSkip = preSkip
        self.inputSampleRate = inputSampleRate
        self.outputGain = outputGain
        self.mappingFamily = mappingFamily
        self.streamCount = streamCount
        self.coupledCount = coupledCount
        self.mapping = mapping
    }

    /// Parses an `OpusHead` packet (RFC 7845 5.1): the magic, version 1 (any 0–15, the major
    /// version 0), and the fields.
    ///
    /// - Throws: ``AudioBitstreamError`` for a packet too short, without the magic, of a major
    ///   version other than 0, or with no channels.
    public init(bytes: [UInt8]) throws(AudioBitstreamError) {
        var reader = ByteReader(bytes)
        let fields = try reading("OpusHead") { () throws(BinaryReadError) in
            (try reader.readBytes(8), try reader.readUInt8(), try reader.readUInt8(), try reader.readLittleEndian(byteCount: 2),
             try reader.readLittleEndian(byteCount: 4), try reader.readLittleEndian(byteCount: 2), try reader.readUInt8())
        }
        guard fields.0 == Self.magic else { throw AudioBitstreamError("OpusHead", "no OpusHead signature") }
        guard fields.1 >> 4 == 0 else { throw AudioBitstreamError("OpusHead", "version \(fields.1) (only 0–15 are this format)") }
        channelCount = Int(fields.2)
        preSkip = Int(fields.3)
        inputSampleRate = Int(fields.4)
        outputGain = Int16(bitPattern: UInt16(fields.5))
        mappingFamily = fields.6
        (streamCount, coupledCount, mapping) = try Self.readMapping(&reader, family: mappingFamily, channels: channelCount, structure: "OpusHead")
    }

    /// Parses the payload of a `dOps` box: version 0, then the same fields, big-endian.
    ///
    /// - Throws: ``AudioBitstreamError`` for a payload too short or of another version.
    public init(dOpsPayload bytes: [UInt8]) throws(AudioBitstreamError) {
        var reader = ByteReader(bytes)
        let fields = try reading("dOps") { () throws(BinaryReadError) in
            (try reader.readUInt8(), try reader.readUInt8(), try reader.readUInt16(), try reader.readUInt32(), try reader.readUInt16(),
             try reader.readUInt8())
        }
        guard fields.0 == 0 else { throw AudioBitstreamError("dOps", "version \(fields.0) (only 0 is defined)") }
        channelCount = Int(fields.1)
        preSkip = Int(fields.2)
        inputSampleRate = Int(fields.3)
        outputGain = Int16(bitPattern: fields.4)
        mappingFamily = fields.5
        (streamCount, coupledCount, mapping) = try Self.readMapping(&reader, family: mappingFamily, channels: channelCount, structure: "dOps")
    }

    private static func readMapping(_ reader: inout ByteReader, family: UInt8, channels: Int,
                                    structure: String) throws(AudioBitstreamError) -> (Int, Int, [UInt8]) {
        guard channels > 0 else { throw AudioBitstreamError(structure, "0 channels") }
        guard family != 0 else {
            guard channels <= 2 else { throw AudioBitstreamError(structure, "\(channels) channels in mapping family 0 (at most 2)") }
            return (1, channels - 1, [])
        }
        let (streams, coupled, table) = try reading(structure) { () throws(BinaryReadError) in
            (Int(try reader.readUInt8()), Int(try reader.readUInt8()), try reader.readBytes(channels))
        }
        guard streams > 0, coupled <= streams else { throw AudioBitstreamError(structure, "\(coupled) coupled of \(streams) streams") }
        return (streams, coupled, table)
    }

    /// The `OpusHead` packet: version 1.
    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: 21 + mapping.count)
        writer.write(contentsOf: Self.magic)
        writer.write(UInt8(1))
        writer.write(UInt8(clamping: channelCount))
        writer.writeLittleEndian(UInt64(UInt16(clamping: preSkip)), byteCount: 2)
        writer.writeLittleEndian(UInt64(UInt32(clamping: inputSampleRate)), byteCount: 4)
        writer.writeLittleEndian(UInt64(UInt16(bitPattern: outputGain)), byteCount: 2)
        writer.write(mappingFamily)
        writeMapping(&writer)
        return writer.bytes
    }

    /// The payload of a `dOps` box: version 0, the fields big-endian.
    public var dOpsPayload: [UInt8] {
        var writer = ByteWriter(capacity: 13 + mapping.count)
        writer.write(UInt8(0))
        writer.write(UInt8(clamping: channelCount))
        writer.write(UInt16(clamping: preSkip))
        writer.write(UInt32(clamping: inputSampleRate))
        writer.write(UInt16(bitPattern: outputGain))
        writer.write(mappingFamily)
        writeMapping(&writer)
        return writer.bytes
    }

    private func writeMapping(_ writer: inout ByteWriter) {
        guard mappingFamily != 0 else { return }
        writer.write(UInt8(clamping: streamCount))
        writer.write(UInt8(clamping: coupledCount))
        writer.write(contentsOf: mapping)
    }
}

extension VorbisComment {
    /// The magic signature that starts an Ogg Opus stream's comment header (RFC 7845 5.2).
    public static let opusTagsMagic = Array("OpusTags".utf8)

    /// The comment header packet of an Ogg Opus stream (RFC 7845 5.2): `OpusTags`, then the
    /// block.
    public var opusTagsPacket: [UInt8] { Self.opusTagsMagic + bytes }

    /// Reads an `OpusTags` packet. What follows the last field is kept (``VorbisComment/trailingBytes``)
    /// when its first byte's low bit is set, as RFC 7845 5.2 asks editors to; else it is padding,
    /// dropped.
    ///
    /// - Throws: ``AudioBitstreamError`` when the packet does not start with `OpusTags`, or
    ///   the block does not read.
    public init(opusTagsPacket packet: [UInt8]) throws(AudioBitstreamError) {
        guard packet.starts(with: Self.opusTagsMagic) else { throw AudioBitstreamError("OpusTags", "no OpusTags signature") }
        try self.init(bytes: packet.dropFirst(Self.opusTagsMagic.count))
        if let first = trailingBytes.first, first & 1 == 0 { trailingBytes = [] }
    }
}

/// What an Opus packet's table-of-contents byte says (RFC 6716 3.1): its frames' duration and
/// count, so a container's granule positions can be checked without decoding.
public enum OpusPacket {
    /// Samples at 48 kHz an edit decodes before the first sample it presents. RFC 7845 4.6 asks
    /// for at least 80 ms (3,840); a decoder's state (CELT's band energies and pitch pre-filter,
    /// SILK's prediction) is within 60 dB of the uninterrupted decode's only after about 200 ms
    /// (measured on libopus's output), which edits keep: 9,600, well inside `OpusHead`'s 16-bit
    /// pre-skip.
    public static let editPreRoll: Int64 = 9600

    /// The samples at 48 kHz that `packet` decodes to; `nil` when it is empty, a code-3 packet
    /// lacks its frame count byte, or the duration passes the 120 ms a packet may hold.
    public static func sampleCount(_ packet: some Collection<UInt8>) -> Int? {
        guard let toc = packet.first else { return nil }
        let config = Int(toc >> 3)
        // SILK-only (0–11): 10, 20, 40, 60 ms; hybrid (12–15): 10, 20 ms; CELT-only (16–31):
        // 2.5, 5, 10, 20 ms.
        let frame: Int = switch config {
        case 0...11: [480, 960, 1920, 2880][config % 4]
        case 12...15: [480, 960][config % 2]
        default: [120, 240, 480, 960][config % 4]
        }
        let frames: Int
        switch toc & 0x03 {
        case 0: frames = 1
        case 1, 2: frames = 2
        default:
            guard packet.count >= 2 else { return nil }
            frames = Int(packet[packet.index(after: packet.startIndex)] & 0x3F)
        }
        let total = frames * frame
        return frames > 0 && total <= 5760 ? total : nil
    }
}

extension EncodedAudioFormat {
    /// This format with its `OpusHead`'s pre-skip (RFC 7845 5.1) set to `priming` samples of
    /// `timescale` (counted at 48 kHz), so that the head tells what an edit list or a ladder's
    /// added silence skips; itself when it is not Opus, its head does not parse, or the value
    /// does not fit the field's 16 bits.
    public func settingOpusPreSkip(priming: Int64, timescale: Int) -> EncodedAudioFormat {
        let preSkip = priming * 48000 / Int64(max(timescale, 1))
        guard codec == .opus, var head = try? OpusHeader(bytes: decoderConfiguration), (0...Int64(UInt16.max)).contains(preSkip) else {
            return self
        }
        head.preSkip = Int(preSkip)
        var edited = self
        edited.decoderConfiguration = head.bytes
        return edited
    }
}
