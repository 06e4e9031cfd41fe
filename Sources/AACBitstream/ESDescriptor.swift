public import MediaCore

/// `ES_Descriptor` of ISO/IEC 14496-1, 7.2.6.5: the payload of the `esds` box of an `mp4a`
/// sample entry (ISO/IEC 14496-14, 5.6) and of the AAC magic cookie that an AudioQueue hands
/// out.
///
/// Every field is kept, including the widths of the expandable size fields, so that writing a
/// parsed descriptor gives back its bytes.
public struct ESDescriptor: Sendable, Hashable {
    /// `ES_ID`.
    public var esID: UInt16
    /// `streamPriority` (5 bits).
    public var streamPriority: UInt8
    /// `dependsOn_ES_ID`, present when `streamDependenceFlag` is set.
    public var dependsOnESID: UInt16?
    /// `URLstring`, present when `URL_Flag` is set.
    public var url: [UInt8]?
    /// `OCR_ES_Id`, present when `OCRstreamFlag` is set.
    public var ocrESID: UInt16?
    /// The decoder configuration.
    public var decoderConfig: DecoderConfigDescriptor
    /// The sync layer configuration (absent from some malformed files).
    public var slConfig: SLConfigDescriptor?
    /// Descriptors after the SLConfigDescriptor (IPI, IPMP, language, QoS, …), kept whole.
    public var otherDescriptors: [OpaqueDescriptor]
    /// This descriptor's size field length, as read.
    public var sizeFieldLength: Int
    /// Bytes after an overstated ``DecoderConfigDescriptor`` that do not make a whole
    /// descriptor (the rest of the SLConfigDescriptor whose start the overstated length took);
    /// kept so that writing gives the same bytes. Empty for a well-formed descriptor.
    public var unparsedTrailingBytes: [UInt8]
    /// What parsing stepped over, the DecoderConfigDescriptor's damage first; empty for a
    /// well-formed descriptor.
    public var damage: [DamageEvent]

    /// The ES_Descriptor of an AAC track: ES_ID 0 (14496-14, 3.1.2, "set to 0 when stored";
    /// KeyFrameKit's muxer sets the track id, as FFmpeg does), the ASC in the
    /// DecoderSpecificInfo, `predefined` = 2.
    public init(audioSpecificConfig: AudioSpecificConfig, bufferSizeDB: UInt32 = 0, maxBitrate: UInt32 = 0,
                averageBitrate: UInt32 = 0) throws(AACBitstreamError) {
        self.esID = 0
        self.streamPriority = 0
        self.decoderConfig = DecoderConfigDescriptor(audioSpecificConfig: try audioSpecificConfig.serialized(),
                                                     bufferSizeDB: bufferSizeDB, maxBitrate: maxBitrate, averageBitrate: averageBitrate)
        self.slConfig = SLConfigDescriptor()
        self.otherDescriptors = []
        self.sizeFieldLength = 1
        self.unparsedTrailingBytes = []
        self.damage = []
    }

    /// Parses an ES_Descriptor, tag included, whose first byte is at absolute `baseOffset`.
    public init(bytes: [UInt8], baseOffset: Int64 = 0) throws(AACBitstreamError) {
        var reader = ByteReader(bytes, baseOffset: baseOffset)
        try self.init(from: &reader)
    }

    /// Parses the payload of an `esds` box: version and flags (4 bytes), then the ES_Descriptor.
    public init(esdsBoxPayload bytes: [UInt8], baseOffset: Int64 = 0) throws(AACBitstreamError) {
        var reader = ByteReader(bytes, baseOffset: baseOffset)
        let version = try AACBitstreamError.reading("esds") { () throws(BinaryReadError) in try reader.readUInt32() }
        guard version >> 24 == 0 else {
            throw .invalidField(structure: "esds", field: "version", value: Int64(version >> 24), offset: baseOffset, allowed: "0")
        }
        try self.init(from: &reader)
    }

    /// Parses an ES_Descriptor, tag included, at the reader's position.
    public init(from reader: inout ByteReader) throws(AACBitstreamError) {
        let structure = "ES_Descriptor"
        let start = reader.offset
        let header = try DescriptorHeader(from: &reader, structure: structure)
        guard header.tag == DescriptorHeader.esDescriptorTag else {
            throw .invalidField(structure: structure, field: "tag", value: Int64(header.tag), offset: start, allowed: "0x03")
        }
        sizeFieldLength = header.sizeFieldLength
        var body = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try reader.readReader(header.size) }
        let fixed = try AACBitstreamError.reading(structure) {
            () throws(BinaryReadError) -> (UInt16, UInt8, UInt16?, [UInt8]?, UInt16?) in
            let id = try body.readUInt16()
            let flags = try body.readUInt8()
            let dependsOn: UInt16? = flags & 0x80 != 0 ? try body.readUInt16() : nil
            var url: [UInt8]?
            if flags & 0x40 != 0 {
                let length = Int(try body.readUInt8())
                url = try body.readBytes(length)
            }
            let ocr: UInt16? = flags & 0x20 != 0 ? try body.readUInt16() : nil
            return (id, flags & 0x1F, dependsOn, url, ocr)
        }
        (esID, streamPriority, dependsOnESID, url, ocrESID) = fixed
        let configOffset = body.offset
        guard body.peekUInt8() == DescriptorHeader.decoderConfigTag else {
            throw .invalidField(structure: structure, field: "DecoderConfigDescriptor tag",
                                value: Int64(body.peekUInt8() ?? 0), offset: configOffset, allowed: "0x04")
        }
        decoderConfig = try DecoderConfigDescriptor(from: &body)
        slConfig = nil
        otherDescriptors = []
        unparsedTrailingBytes = []
        damage = decoderConfig.damage
        while !body.isAtEnd {
            let childStart = body
            let child: DescriptorHeader
            do throws(AACBitstreamError) {
                child = try DescriptorHeader(from: &body, structure: "\(structure) child descriptor")
            } catch {
                // Only the tail of what an overstated DecoderConfigDescriptor took is stepped over.
                guard !decoderConfig.unparsedTrailingBytes.isEmpty else { throw error }
                unparsedTrailingBytes = Array(childStart.remainingBytes)
                // Configuration bytes, not media: the descriptor overstates what it holds.
                damage.append(DamageEvent(
                    .overstatedLength(declared: Int64(header.size), used: Int64(header.size - unparsedTrailingBytes.count)), at: childStart.offset,
                    message: "\(structure) at byte \(start): the \(unparsedTrailingBytes.count) byte(s) after its overstated "
                        + "DecoderConfigDescriptor (from byte \(childStart.offset)) are not a whole descriptor and are skipped"))
                break
            }
            let payload = try AACBitstreamError.reading(structure) { () throws(BinaryReadError) in try body.readBytes(child.size) }
            if child.tag == DescriptorHeader.slConfigTag && slConfig == nil && otherDescriptors.isEmpty {
                slConfig = SLConfigDescriptor(payload: payload, sizeFieldLength: child.sizeFieldLength)
            } else {
                otherDescriptors.append(OpaqueDescriptor(tag: child.tag, payload: payload, sizeFieldLength: child.sizeFieldLength))
            }
        }
    }

    /// The descriptor's bytes, tag included.
    public func serialized() throws(AACBitstreamError) -> [UInt8] {
        var writer = ByteWriter()
        try write(to: &writer)
        return writer.bytes
    }

    /// The payload of an `esds` box: version 0, flags 0, then the descriptor.
    public func esdsBoxPayload() throws(AACBitstreamError) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(UInt32(0))
        try write(to: &writer)
        return writer.bytes
    }

    /// Writes the descriptor, tag included.
    public func write(to writer: inout ByteWriter) throws(AACBitstreamError) {
        if let url, url.count > 255 {
            throw .unrepresentable(structure: "ES_Descriptor", field: "URLlength", value: Int64(url.count), allowed: "0...255")
        }
        try writer.writeDescriptor(tag: DescriptorHeader.esDescriptorTag, sizeFieldLength: sizeFieldLength) { (body: inout ByteWriter) throws(AACBitstreamError) in
            body.write(esID)
            let flags = (dependsOnESID != nil ? 0x80 : 0) | (url != nil ? 0x40 : 0) | (ocrESID != nil ? 0x20 : 0)
            body.write(UInt8(flags) | (streamPriority & 0x1F))
            if let dependsOnESID { body.write(dependsOnESID) }
            if let url {
                body.write(UInt8(url.count))
                body.write(contentsOf: url)
            }
            if let ocrESID { body.write(ocrESID) }
            try decoderConfig.write(to: &body)
            if let slConfig { try slConfig.write(to: &body) }
            for descriptor in otherDescriptors { try descriptor.write(to: &body) }
            body.write(contentsOf: unparsedTrailingBytes)
        }
    }

    /// The AudioSpecificConfig the descriptor carries, if it is MPEG-4 audio or MPEG-2 AAC.
    public func audioSpecificConfig() throws(AACBitstreamError) -> AudioSpecificConfig? {
        try decoderConfig.audioSpecificConfig()
    }
}

extension AudioSpecificConfig {
    /// The AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1) inside an AAC magic cookie
    /// (`kAudioQueueProperty_MagicCookie`): the cookie is an ES_Descriptor (ISO/IEC 14496-1,
    /// 7.2.6.5), or a bare DecoderConfigDescriptor (7.2.6.6).
    public init(magicCookie: [UInt8]) throws(AACBitstreamError) {
        var reader = ByteReader(magicCookie)
        let config: AudioSpecificConfig?
        switch magicCookie.first {
        case DescriptorHeader.esDescriptorTag:
            config = try ESDescriptor(from: &reader).audioSpecificConfig()
        case DescriptorHeader.decoderConfigTag:
            config = try DecoderConfigDescriptor(from: &reader).audioSpecificConfig()
        default:
            throw .invalidField(structure: "magic cookie", field: "descriptor tag", value: Int64(magicCookie.first ?? 0),
                                offset: 0, allowed: "0x03 (ES_Descriptor) or 0x04 (DecoderConfigDescriptor)")
        }
        guard let config else {
            throw .invalidField(structure: "magic cookie", field: "DecoderSpecificInfo", value: 0, offset: 0,
                                allowed: "an AudioSpecificConfig of MPEG-4 audio")
        }
        self = config
    }
}
