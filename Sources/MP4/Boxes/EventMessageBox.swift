public import MediaCore

/// `emsg` (ISO/IEC 23009-1 5.10.3.3, DASHEventMessageBox): a message of a moment, carried in a
/// segment before the `moof` of the fragment its time falls in (ISO/IEC 23000-19 7.4.5).
///
/// KeyFrameKit writes version 1, whose `presentation_time` is absolute on the presentation
/// timeline (version 0 gives a delta from the segment's earliest presentation time), as AOM's
/// "Carriage of ID3 Timed Metadata in CMAF" requires for ID3 (``id3Scheme``); it reads both.
public struct EventMessage: Sendable, Hashable {
    /// `scheme_id_uri` of ID3 timed metadata (AOM, Carriage of ID3 Timed Metadata in CMAF):
    /// `message_data` is a whole ID3v2 tag, `value` is empty.
    public static let id3Scheme = "https://aomedia.org/emsg/ID3"
    /// `scheme_id_uri` of a SCTE-35 `splice_info_section` in binary (SCTE 214-1 6.7.4):
    /// `message_data` is the whole section.
    public static let scte35Scheme = "urn:scte:scte35:2013:bin"
    /// `event_duration` when the duration is not known.
    public static let unknownDuration: UInt32 = 0xFFFF_FFFF

    /// `scheme_id_uri`.
    public var scheme: String
    /// `value`.
    public var value: String
    /// `timescale`: units per second of the times.
    public var timescale: UInt32
    /// `presentation_time` (version 1), in ``timescale`` units on the presentation timeline;
    /// for a version 0 box read, `presentation_time_delta`.
    public var presentationTime: UInt64
    /// `event_duration`; ``unknownDuration`` when not known.
    public var duration: UInt32
    /// `id`: the same for a repeated message.
    public var id: UInt32
    /// `message_data`.
    public var data: [UInt8]
    /// The box's version: 1 written; 0 or 1 read.
    public var version: UInt8

    /// A version 1 message.
    public init(scheme: String, value: String = "", timescale: UInt32, presentationTime: UInt64, duration: UInt32 = unknownDuration, id: UInt32,
                data: [UInt8]) {
        self.scheme = scheme
        self.value = value
        self.timescale = timescale
        self.presentationTime = presentationTime
        self.duration = duration
        self.id = id
        self.data = data
        version = 1
    }

    /// The whole box: version 1 (23009-1 5.10.3.3.3).
    public var bytes: [UInt8] {
        var box = BoxWriter()
        box.fullBox("emsg", version: 1) { b in
            b.u32(timescale)
            b.u64(presentationTime)
            b.u32(duration)
            b.u32(id)
            b.raw(Array(scheme.utf8) + [0])
            b.raw(Array(value.utf8) + [0])
            b.raw(data)
        }
        return box.bytes
    }

    /// Reads the payload of an `emsg` (after its box header), version 0 or 1.
    ///
    /// - Throws: ``MP4Error/invalidField(path:field:value:offset:allowed:)`` for another version
    ///   or a string without its terminating NUL; ``MP4Error/truncated(path:_:)`` for fields past
    ///   the payload.
    public init(from payload: ByteReader, path: BoxPath) throws(MP4Error) {
        var reader = payload
        let full = try FullBoxHeader.parse(from: &reader, path: path)
        guard full.version <= 1 else {
            throw .invalidField(path: path, field: "version", value: Int64(full.version), offset: reader.offset - 4, allowed: "0 or 1")
        }
        version = full.version
        func string(_ field: String) throws(MP4Error) -> String {
            var bytes: [UInt8] = []
            let start = reader.offset
            while true {
                let byte = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt8() }
                if byte == 0 { break }
                bytes.append(byte)
                guard reader.remaining > 0 else {
                    throw .invalidField(path: path, field: field, value: Int64(bytes.count), offset: start, allowed: "a string ended by a NUL")
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        if full.version == 0 {
            scheme = try string("scheme_id_uri")
            value = try string("value")
            (timescale, presentationTime, duration, id) = try MP4Error.reading(path) { () throws(BinaryReadError) -> (UInt32, UInt64, UInt32, UInt32) in
                (try reader.readUInt32(), UInt64(try reader.readUInt32()), try reader.readUInt32(), try reader.readUInt32())
            }
        } else {
            (timescale, presentationTime, duration, id) = try MP4Error.reading(path) { () throws(BinaryReadError) -> (UInt32, UInt64, UInt32, UInt32) in
                (try reader.readUInt32(), try reader.readUInt64(), try reader.readUInt32(), try reader.readUInt32())
            }
            scheme = try string("scheme_id_uri")
            value = try string("value")
        }
        data = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readBytes(reader.remaining) }
    }

    /// The presentation time in seconds (version 1).
    public var seconds: Double { Double(presentationTime) / Double(max(timescale, 1)) }
}

extension EventMessage {
    /// The `emsg` boxes at the top level of a segment's bytes (a CMAF segment or chunk), in
    /// order.
    ///
    /// - Throws: ``MP4Error`` for a box whose size runs past the bytes or an `emsg` that does
    ///   not read.
    public static func messages(inSegment bytes: [UInt8]) throws(MP4Error) -> [EventMessage] {
        var boxes = try BoxIterator(ByteReader(bytes), path: .root)
        var messages: [EventMessage] = []
        while let box = try boxes.next() {
            if box.header.type == "emsg" { messages.append(try EventMessage(from: box.payload, path: box.path)) }
        }
        return messages
    }
}
