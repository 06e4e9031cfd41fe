extension Sequence<UInt8> {
    /// The bytes as hexadecimal digits, two per byte, lower case unless `uppercase`: a digest
    /// (SHA-256, MD5), a signature, an SCTE-35 section in a playlist.
    package func hexDigits(uppercase: Bool = false) -> String {
        let digits = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
        return String(decoding: text, as: UTF8.self)
    }
}
