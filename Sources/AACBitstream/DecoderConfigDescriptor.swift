public import MediaCore

/// `DecoderConfigDescriptor` of ISO/IEC 14496-1, 7.2.6.6: the codec, buffer size and bitrates
/// of an elementary stream, and its DecoderSpecificInfo (for AAC, the AudioSpecificConfig).
public struct DecoderConfigDescriptor: Sendable, Hashable {
    /// `objectTypeIndication` 0x40: ISO/IEC 14496-3 audio.
    public static let mpeg4Audio: UInt8 = 0x40

    /// `objectTypeIndication` (14496-1, Table 5): 0x40 MPEG-4 audio, 0x66–0x68 MPEG-2 AAC, 0x6B MP3, …
    public var objectTypeIndication: UInt8
    /// `streamType` (6 bits): 5 is an audio stream.
    public var streamType: UInt8
    /// `upStream`.
    public var upStream: Bool
    /// The reserved bit after `upStream` (1 in valid files), kept as read.
    public var reservedBit: Bool
    /// `bufferSizeDB` (24 bits): the decoder buffer size in bytes.
    public var bufferSizeDB: UInt32
    /// `maxBitrate` in bits per second.
    public var maxBitrate: UInt32
    /// `avgBitrate` in bits per second; 0 for a variable rate.
    public var averageBitrate: UInt32
    /// The DecoderSpecificInfo payload, when present.
    public var decoderSpecificInfo: [UInt8]?
    /// The DecoderSpecificInfo's size field length, as read.
    public var decoderSpecificInfoSizeFieldLength: Int
    /// Other descriptors (profileLevelIndicationIndexDescriptor), kept whole.
    public var otherDescriptors: [OpaqueDescriptor]
    /// This descriptor's size field length, as read.
    public var sizeFieldLength: Int
    /// Bytes at the end of the descriptor that do not make a whole child descriptor: the
    /// descriptor's `sizeOfInstance` (14496-1, 8.3.3) overstates its contents. Read only after a
    /// whole DecoderSpecificInfo, as browsers read it; kept so that writing gives the same bytes.
    public var unparsedTrailingBytes: [UInt8]
    /// What parsing stepped over: an ``/MediaCore/DamageEvent/Kind/overstatedLength(declared:used:)`` when
    /// ``unparsedTrailingBytes`` is not empty. Empty for a well-formed descriptor.
    public var damage: [DamageEvent]

    /// A DecoderConfigDescriptor for MPEG-4 audio carrying `audioSpecificConfig`.
    public init(audioSpecificConfig: [UInt8], bufferSizeDB: UInt32 = 0, maxBitrate: UInt32 = 0, averageBitrate: UInt32 = 0) {
        self.objectTypeIndication = Self.mpeg4Audio
        self.streamType = 5
        self.upStream = false
        self.reservedBit = true
        self.bufferSizeDB = bufferSizeDB
        self.maxBitrate = maxBitrate
        self.averageBitrate = averageBitrate
        self.decoderSpecificInfo = audioSpecificConfig
        self.decoderSpecificInfoSizeFieldLength = 1
        self.otherDescriptors = []
        self.sizeFieldLength = 1
        self.unparsedTrailingBytes = []
        self.damage = []
    }

    /// Parses the descriptor, tag included, at the reader's position.
    ///
    /// A descriptor whose length overstates its contents — the DecoderSpecificInfo is whole but
    /// the bytes after it do not make a whole descriptor (often because the length swallowed the
    /// start of the SLConfigDescriptor that follows) — is read, as Firefox's MP4 parser reads it;
    /// the extra bytes are kept in ``unparsedTrailingBytes`` and reported in ``damage``.
    public init(from reader: inout ByteReader) throws(AACBitstreamError) {
        let structure = "DecoderConfigDescriptor"
        let start = reader.offset
        let header = try DescriptorHeader(from: &reader, structure: structure)
        guard header.tag == DescriptorHeader.decoderConfigTag else {
            throw .invalidField(structure: structure, field: "tag", value: Int64(header.tag), offset: start, allowed: "0x04")
        }
        sizeFieldLength = header.sizeFieldLength
        var body = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try reader.readReader(header.size) }
        let fields = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) -> (UInt8, UInt8, UInt32, UInt32, UInt32) in
            (try body.readUInt8(), try body.readUInt8(), try body.readUInt24(), try body.readUInt32(), try body.readUInt32())
        }
        objectTypeIndication = fields.0
        streamType = fields.1 >> 2
        upStream = fields.1 & 0x02 != 0
        reservedBit = fields.1 & 0x01 != 0
        bufferSizeDB = fields.2
        maxBitrate = fields.3
        averageBitrate = fields.4
        decoderSpecificInfo = nil
        decoderSpecificInfoSizeFieldLength = 1
        otherDescriptors = []
        unparsedTrailingBytes = []
        damage = []
        while !body.isAtEnd {
            let childStart = body
            let child: DescriptorHeader
            do throws(AACBitstreamError) {
                child = try DescriptorHeader(from: &body, structure: "\(structure) child descriptor")
            } catch {
                // Right after a whole DecoderSpecificInfo, what does not parse is an overstated
                // length. Not after other descriptors: writing puts the DecoderSpecificInfo first,
                // so the bytes would not come back in their order (fuzz finding, Regressions/esds).
                guard decoderSpecificInfo != nil, otherDescriptors.isEmpty else { throw error }
                unparsedTrailingBytes = Array(childStart.remainingBytes)
                let used = header.size - unparsedTrailingBytes.count
                damage.append(DamageEvent(
                    .overstatedLength(declared: Int64(header.size), used: Int64(used)), at: start,
                    message: "\(structure) at byte \(start) declares \(header.size) bytes but its descriptors end after \(used): "
                        + "the last \(unparsedTrailingBytes.count) byte(s), from byte \(childStart.offset), are not a whole descriptor and are skipped"))
                break
            }
            if child.tag == DescriptorHeader.slConfigTag && decoderSpecificInfo != nil && damage.isEmpty {
                // The ES_Descriptor's SLConfigDescriptor (14496-1, 7.2.6.5) taken in whole by the
                // length: kept among the other descriptors, and reported.
                let used = header.size - childStart.remaining
                damage.append(DamageEvent(
                    .overstatedLength(declared: Int64(header.size), used: Int64(used)), at: start,
                    message: "\(structure) at byte \(start) declares \(header.size) bytes but its descriptors end after \(used): "
                        + "the SLConfigDescriptor at byte \(childStart.offset) belongs to the ES_Descriptor"))
            }
            let payload = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try body.readBytes(child.size) }
            if child.tag == DescriptorHeader.decoderSpecificInfoTag && decoderSpecificInfo == nil {
                decoderSpecificInfo = payload
                decoderSpecificInfoSizeFieldLength = child.sizeFieldLength
            } else {
                otherDescriptors.append(OpaqueDescriptor(tag: child.tag, payload: payload, sizeFieldLength: child.sizeFieldLength))
            }
        }
    }

    /// Writes the descriptor, tag included.
    public func write(to writer: inout ByteWriter) throws(AACBitstreamError) {
        guard streamType < 64, bufferSizeDB < 1 << 24 else {
            throw .unrepresentable(structure: "DecoderConfigDescriptor", field: streamType >= 64 ? "streamType" : "bufferSizeDB",
                                   value: Int64(streamType >= 64 ? UInt32(streamType) : bufferSizeDB),
                                   allowed: streamType >= 64 ? "0...63" : "0...16777215")
        }
        try writer.writeDescriptor(tag: DescriptorHeader.decoderConfigTag, sizeFieldLength: sizeFieldLength) { (body: inout ByteWriter) throws(AACBitstreamError) in
            body.write(objectTypeIndication)
            body.write(streamType << 2 | (upStream ? 0x02 : 0) | (reservedBit ? 0x01 : 0))
            body.writeBigEndian(UInt64(bufferSizeDB), byteCount: 3)
            body.write(maxBitrate)
            body.write(averageBitrate)
            if let info = decoderSpecificInfo {
                try OpaqueDescriptor(tag: DescriptorHeader.decoderSpecificInfoTag, payload: info,
                                     sizeFieldLength: decoderSpecificInfoSizeFieldLength).write(to: &body)
            }
            for descriptor in otherDescriptors { try descriptor.write(to: &body) }
            body.write(contentsOf: unparsedTrailingBytes)
        }
    }

    /// What ``objectTypeIndication`` names (ISO/IEC 14496-1, Table 5, and the MP4 registration
    /// authority's object types): `MPEG-4 Audio`, `MPEG-1 Audio (MP3)`, `AC-3`, …, or
    /// `object type indication 0xXX` for a value not listed.
    public var objectTypeName: String {
        switch objectTypeIndication {
        case 0x40: "MPEG-4 Audio"
        case 0x66: "MPEG-2 AAC Main"
        case 0x67: "MPEG-2 AAC LC"
        case 0x68: "MPEG-2 AAC SSR"
        case 0x69: "MPEG-2 Audio (MP3)"
        case 0x6B: "MPEG-1 Audio (MP3)"
        case 0xA5: "AC-3"
        case 0xA6: "E-AC-3"
        case 0xA9: "DTS"
        case 0xAD: "Opus"
        case 0xDD: "Vorbis"
        case 0xE1: "QCELP"
        default: "object type indication 0x\(String(objectTypeIndication, radix: 16, uppercase: true))"
        }
    }

    /// The AudioSpecificConfig in the DecoderSpecificInfo, for MPEG-4 audio (0x40) and
    /// MPEG-2 AAC (0x66–0x68); `nil` when there is none.
    public func audioSpecificConfig() throws(AACBitstreamError) -> AudioSpecificConfig? {
        guard let info = decoderSpecificInfo, [0x40, 0x66, 0x67, 0x68].contains(objectTypeIndication) else { return nil }
        return try AudioSpecificConfig(bytes: info)
    }
}

/// `SLConfigDescriptor` of ISO/IEC 14496-1, 7.3.2.3.1. MP4 files carry `predefined` = 2; the
/// fields of a custom (`predefined` = 0) configuration are kept as bytes.
public struct SLConfigDescriptor: Sendable, Hashable {
    /// The descriptor's payload: `predefined` and, for a custom configuration, its fields.
    public var payload: [UInt8]
    /// The size field length, as read.
    public var sizeFieldLength: Int

    /// The SLConfigDescriptor of MP4 files: `predefined` = 2.
    public init(predefined: UInt8 = 2) {
        self.payload = [predefined]
        self.sizeFieldLength = 1
    }

    /// A descriptor with the payload as read.
    public init(payload: [UInt8], sizeFieldLength: Int) {
        self.payload = payload
        self.sizeFieldLength = sizeFieldLength
    }

    /// `predefined`: 2 means "reserved for use in MP4 files"; `nil` if the payload is empty.
    public var predefined: UInt8? { payload.first }

    /// Writes the descriptor, tag included.
    public func write(to writer: inout ByteWriter) throws(AACBitstreamError) {
        try OpaqueDescriptor(tag: DescriptorHeader.slConfigTag, payload: payload, sizeFieldLength: sizeFieldLength).write(to: &writer)
    }
}
