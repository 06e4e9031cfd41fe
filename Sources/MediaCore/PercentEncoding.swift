/// Percent-encoding (RFC 3986 2.1): `%` and two hexadecimal digits stand for one byte.
public enum PercentEncoding {
    /// What a `%` not followed by two hexadecimal digits is.
    public enum InvalidEscape: Sendable {
        /// Kept as it is, as browsers and most URL parsers keep it.
        case kept
        /// An error: the text is refused.
        case refused
    }

    /// The bytes `text` stands for, each `%XX` decoded; `nil` for an invalid escape when
    /// `invalid` is ``InvalidEscape/refused``.
    public static func decodedBytes(_ text: Substring, invalid: InvalidEscape = .kept) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var utf8 = text.utf8[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            var digits = utf8.prefix(2).makeIterator()
            if let high = digits.next().flatMap(hexValue), let low = digits.next().flatMap(hexValue) {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else if invalid == .kept {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        return bytes
    }

    /// `text` with each `%XX` decoded, invalid escapes kept and bytes that are not UTF-8
    /// replaced (U+FFFD).
    public static func decoded(_ text: Substring) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        return String(decoding: decodedBytes(text) ?? [], as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `text` with every byte but RFC 3986's unreserved characters (`A–Z a–z 0–9 - . _ ~`, 2.3)
    /// written `%XX` in upper-case hex (2.1), and with `keepingSlashes` the `/` kept: a path, a
    /// query value, an S3 canonical URI.
    public static func encoded(_ text: String, keepingSlashes: Bool = false) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(byte)
            case UInt8(ascii: "/") where keepingSlashes:
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }
}
