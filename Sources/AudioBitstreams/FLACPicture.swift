internal import MediaCore

/// A picture as FLAC's PICTURE metadata block holds it (RFC 9639 8.8), and as a Vorbis comment's
/// `METADATA_BLOCK_PICTURE` field carries it in base64 (Ogg Opus, Ogg Vorbis): the picture type
/// (ID3v2's APIC types: 3 is the front cover), the MIME type, a description, the size, and the
/// image file's bytes.
public struct FLACPicture: Sendable, Hashable {
    /// The picture type: 3 is the front cover.
    public var pictureType: UInt32
    /// The MIME type (`image/jpeg`, `image/png`).
    public var mimeType: String
    /// A description (UTF-8).
    public var description: String
    /// The width in pixels, 0 when not known.
    public var width: UInt32
    /// The height in pixels, 0 when not known.
    public var height: UInt32
    /// Bits per pixel, 0 when not known.
    public var colorDepth: UInt32
    /// Colours of an indexed picture, else 0.
    public var indexedColors: UInt32
    /// The image file's bytes.
    public var data: [UInt8]

    /// A picture of `data`, a JPEG or PNG file, its MIME type, width, height and depth read
    /// from the file's header (a PNG's IHDR, a JPEG's SOF segment); 0 where it does not say.
    public init(image data: [UInt8], pictureType: UInt32 = 3, description: String = "") {
        self.pictureType = pictureType
        self.description = description
        self.data = data
        indexedColors = 0
        (width, height, colorDepth) = (0, 0, 0)
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            mimeType = "image/png"
            // The signature, then IHDR: length, type, width, height, bit depth, colour type.
            if data.count >= 26 {
                var reader = ByteReader(data, range: 16..<26)
                width = (try? reader.readUInt32()) ?? 0
                height = (try? reader.readUInt32()) ?? 0
                let depth = UInt32((try? reader.readUInt8()) ?? 0)
                let samples: UInt32 = switch (try? reader.readUInt8()) ?? 0 { case 2: 3; case 4: 2; case 6: 4; default: 1 }
                colorDepth = depth * samples
            }
        } else {
            mimeType = data.starts(with: [0xFF, 0xD8]) ? "image/jpeg" : "image/"
            if let frame = Self.jpegFrameHeader(data) { (width, height, colorDepth) = frame }
        }
    }

    /// The width, height and bits per pixel of a JPEG's first SOF segment (ITU-T T.81 B.2.2).
    static func jpegFrameHeader(_ data: [UInt8]) -> (UInt32, UInt32, UInt32)? {
        var index = 2
        while index + 9 < data.count, data[index] == 0xFF {
            let marker = data[index + 1]
            let length = Int(data[index + 2]) << 8 | Int(data[index + 3])
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                let precision = UInt32(data[index + 4])
                let height = UInt32(data[index + 5]) << 8 | UInt32(data[index + 6])
                let width = UInt32(data[index + 7]) << 8 | UInt32(data[index + 8])
                return (width, height, precision * UInt32(data[index + 9]))
            }
            guard length >= 2 else { return nil }
            index += 2 + length
        }
        return nil
    }

    /// Reads a PICTURE block's body.
    ///
    /// - Throws: ``AudioBitstreamError`` when a length runs past the bytes.
    public init(bytes: [UInt8]) throws(AudioBitstreamError) {
        var reader = ByteReader(bytes)
        (pictureType, mimeType, description, width, height, colorDepth, indexedColors, data) = try reading("PICTURE") { () throws(BinaryReadError) in
            let type = try reader.readUInt32()
            let mime = String(decoding: try reader.readBytes(Int(try reader.readUInt32())), as: UTF8.self)
            let description = String(decoding: try reader.readBytes(Int(try reader.readUInt32())), as: UTF8.self)
            let (width, height, depth, colors) = (try reader.readUInt32(), try reader.readUInt32(), try reader.readUInt32(), try reader.readUInt32())
            return (type, mime, description, width, height, depth, colors, try reader.readBytes(Int(try reader.readUInt32())))
        }
    }

    /// The PICTURE block's body.
    public var bytes: [UInt8] {
        var writer = ByteWriter()
        writer.write(pictureType)
        let mime = Array(mimeType.utf8), text = Array(description.utf8)
        writer.write(UInt32(mime.count))
        writer.write(contentsOf: mime)
        writer.write(UInt32(text.count))
        writer.write(contentsOf: text)
        for value in [width, height, colorDepth, indexedColors, UInt32(data.count)] { writer.write(value) }
        writer.write(contentsOf: data)
        return writer.bytes
    }
}
