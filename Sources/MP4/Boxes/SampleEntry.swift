public import MediaCore
public import AACBitstream

/// One entry of `stsd` (ISO/IEC 14496-12, 8.5.2 SampleDescriptionBox): the format of the samples
/// that point at it. Audio entries follow 12.2.3 `AudioSampleEntry` (and QuickTime's sound
/// description versions 1 and 2); video entries 12.1.3 `VisualSampleEntry`. The codec
/// configuration boxes inside are kept: `esds` (14496-14, 5.6) parsed, `avcC`, `hvcC`, `dOps`,
/// `dac3`, `alac` and others as bytes.
public struct SampleEntry: Sendable, Hashable {
    /// Audio fields of an `AudioSampleEntry` (ISO/IEC 14496-12, 12.2.3).
    public struct AudioFields: Sendable, Hashable {
        /// `channelcount`.
        public var channelCount: Int
        /// `samplesize` in bits.
        public var sampleSize: Int
        /// `samplerate` (the integer part of the 16.16 field, or QuickTime v2's 64-bit float).
        public var sampleRate: Int
        /// The QuickTime sound description version (0, 1 or 2).
        public var quickTimeVersion: Int
    }

    /// Visual fields of a `VisualSampleEntry` (ISO/IEC 14496-12, 12.1.3).
    public struct VideoFields: Sendable, Hashable {
        /// `width` in pixels.
        public var width: Int
        /// `height` in pixels.
        public var height: Int
        /// `compressorname`.
        public var compressorName: String
    }

    /// The entry's type: `mp4a`, `avc1`, `hvc1`, `Opus`, `ac-3`, `alac`, …
    public var type: FourCharacterCode
    /// `data_reference_index`.
    public var dataReferenceIndex: UInt16
    /// Present for audio entries.
    public var audio: AudioFields?
    /// Present for video entries.
    public var video: VideoFields?
    /// The parsed `esds`, for MPEG-4 audio (also found inside a QuickTime `wave` box).
    public var esDescriptor: ESDescriptor?
    /// Child boxes of the entry, by type, with their payloads (codec configuration records).
    public var configurationBoxes: [FourCharacterCode: [UInt8]]
    /// What reading the configuration stepped over (an `esds` whose DecoderConfigDescriptor
    /// overstates its length), each message starting with the box path. Empty for a
    /// well-formed entry.
    public var damage: [DamageEvent] = []

    static let audioTypes: Set<FourCharacterCode> = ["mp4a", "Opus", "ac-3", "ec-3", "alac", "fLaC", "mp3 ", ".mp3", "lpcm", "sowt", "twos", "ipcm", "fpcm"]
    static let videoTypes: Set<FourCharacterCode> = ["avc1", "avc3", "hvc1", "hev1", "mp4v", "vp09", "av01", "encv", "dvh1", "dvhe"]

    /// Parses an entry whose header is `header`, from its payload.
    init(header: BoxHeader, payload: ByteReader, path: BoxPath, handler: FourCharacterCode?) throws(MP4Error) {
        var reader = payload
        type = header.type
        dataReferenceIndex = try MP4Error.reading(path) { () throws(BinaryReadError) -> UInt16 in
            try reader.skip(6)
            return try reader.readUInt16()
        }
        configurationBoxes = [:]
        let isAudio = handler == "soun" || (handler == nil && Self.audioTypes.contains(header.type))
        let isVideo = handler == "vide" || (handler == nil && Self.videoTypes.contains(header.type))
        if isAudio {
            audio = try Self.audioFields(&reader, path: path)
        } else if isVideo {
            video = try Self.videoFields(&reader, path: path)
        } else {
            return   // text, hint, metadata: no fields we read
        }
        // Child boxes. Some writers pad sample entries with a 4-byte zero terminator; fewer than 8
        // bytes left are ignored by the iterator.
        var children = try BoxIterator(reader, path: path)
        while let child = try children.next() {
            let bytes = Array(child.payload.remainingBytes)
            configurationBoxes[child.header.type] = bytes
            if child.header.type == "esds" {
                readESDS(path: child.path, descriptor: try Self.parseESDS(child.payload, path: child.path))
            } else if child.header.type == "wave" {
                // QuickTime: `wave` holds `frma`, `mp4a`, `esds`, terminator.
                var inner = try BoxIterator(child.payload, path: child.path)
                while let box = try inner.next() {
                    if box.header.type == "esds" { readESDS(path: box.path, descriptor: try Self.parseESDS(box.payload, path: box.path)) }
                }
            }
        }
    }

    private mutating func readESDS(path: BoxPath, descriptor: ESDescriptor) {
        esDescriptor = descriptor
        damage += descriptor.damage.map { event in
            var event = event
            event.message = "\(path): \(event.message)"
            return event
        }
    }

    private static func parseESDS(_ payload: ByteReader, path: BoxPath) throws(MP4Error) -> ESDescriptor {
        do {
            return try ESDescriptor(esdsBoxPayload: Array(payload.remainingBytes), baseOffset: payload.offset)
        } catch {
            throw .bitstream(path: path, error)
        }
    }

    private static func audioFields(_ reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> AudioFields {
        try MP4Error.reading(path) { () throws(BinaryReadError) -> AudioFields in
            let version = Int(try reader.readUInt16())
            try reader.skip(6)   // revision, vendor
            var channels = Int(try reader.readUInt16())
            let sampleSize = Int(try reader.readUInt16())
            try reader.skip(4)   // compression id, packet size
            var rate = Int(try reader.readUInt32() >> 16)
            if version == 1 {
                try reader.skip(16)   // samples per packet, bytes per packet, bytes per frame, bytes per sample
            } else if version == 2 {
                try reader.skip(4)   // sizeOfStructOnly
                let bits = try reader.readUInt64()
                let value = Double(bitPattern: bits)
                rate = value.isFinite && value > 0 && value < 10_000_000 ? Int(value) : 0
                channels = Int(try reader.readUInt32())
                try reader.skip(20)   // always7F000000, constBitsPerChannel, flags, bytes per packet, frames per packet
            }
            return AudioFields(channelCount: channels, sampleSize: sampleSize, sampleRate: rate, quickTimeVersion: version)
        }
    }

    private static func videoFields(_ reader: inout ByteReader, path: BoxPath) throws(MP4Error) -> VideoFields {
        try MP4Error.reading(path) { () throws(BinaryReadError) -> VideoFields in
            try reader.skip(16)   // pre_defined, reserved
            let width = Int(try reader.readUInt16())
            let height = Int(try reader.readUInt16())
            try reader.skip(14)   // resolutions, reserved, frame_count
            let nameBytes = try reader.readBytes(32)
            try reader.skip(4)    // depth, pre_defined
            let length = min(Int(nameBytes[0]), 31)
            let name = String(decoding: nameBytes[1..<(1 + length)], as: UTF8.self)
            return VideoFields(width: width, height: height, compressorName: name)
        }
    }

    /// The audio codec the entry maps to, for an audio entry: `mp4a` by its object type
    /// indication (ISO/IEC 14496-1 7.2.6.6.2: 0x40 MPEG-4 audio and 0x66–0x68 MPEG-2 AAC are AAC,
    /// 0x69 and 0x6B MPEG audio), `Opus`, `ac-3`, `ec-3`, `alac`, `fLaC`; `nil` for a video or
    /// unknown entry.
    public var audioCodec: AudioCodecID? {
        switch type {
        case "mp4a":
            switch esDescriptor?.decoderConfig.objectTypeIndication {
            case 0x40, 0x66, 0x67, 0x68: .aac
            case 0x69, 0x6B: .mp3
            default: .other(type)
            }
        case "Opus": .opus
        case "ac-3": .ac3
        case "ec-3": .eac3
        case "alac": .alac
        case "fLaC": .flac
        default: audio != nil ? .other(type) : nil
        }
    }

    /// The video codec the entry maps to (`avc1`/`avc3` H.264, `hvc1`/`hev1` HEVC), `nil` for
    /// an audio or unknown entry.
    public var videoCodec: VideoCodec? {
        switch type {
        case "avc1", "avc3": .h264
        case "hvc1", "hev1": .hevc
        default: video != nil ? .other(type) : nil
        }
    }

    /// The codec's short name, for people and `probe`: `aac`, `h264`, `hevc`, `opus`, `ac3`, …
    /// (from ``audioCodec`` and ``videoCodec`` where they know it).
    public var codecName: String {
        switch (type, audioCodec, videoCodec) {
        case ("mp4a", let audio?, _) where audio == .other(type):
            esDescriptor.map { "mp4a-\(String($0.decoderConfig.objectTypeIndication, radix: 16))" } ?? "mp4a"
        case (_, let audio?, _) where audio != .other(type): audio.description
        case (_, _, let video?) where video != .other(type): video.description
        case ("mp4v", _, _): "mpeg4"
        case ("vp09", _, _): "vp9"
        case ("av01", _, _): "av1"
        default: type.description.trimmingTrailingSpaces
        }
    }

    /// The AudioSpecificConfig, for AAC entries.
    public func audioSpecificConfig() throws(MP4Error) -> AudioSpecificConfig? {
        guard audioCodec == .aac, let descriptor = esDescriptor else { return nil }
        do { return try descriptor.audioSpecificConfig() } catch {
            throw .bitstream(path: BoxPath(components: ["stsd", type.description]), error)
        }
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}

/// Parses `stsd`: its entries, in order.
enum SampleDescriptionBox {
    static func entries(_ reader: inout ByteReader, path: BoxPath, handler: FourCharacterCode?) throws(MP4Error) -> [SampleEntry] {
        _ = try FullBoxHeader.parse(from: &reader, path: path)
        let count = try MP4Error.reading(path) { () throws(BinaryReadError) in try reader.readUInt32() }
        try reader.checkTable(count: count, entrySize: 8, path: path, field: "entry_count")
        var iterator = try BoxIterator(reader, path: path)
        var entries: [SampleEntry] = []
        for _ in 0..<count {
            guard let child = try iterator.next() else { break }
            entries.append(try SampleEntry(header: child.header, payload: child.payload, path: child.path, handler: handler))
        }
        return entries
    }
}
