extension StringProtocol where UTF8View: BidirectionalCollection {
    /// The text without spaces and tabs at either end (and without a carriage return at its end,
    /// for a text with CRLF line ends): how a playlist's, a chapter file's or an INI file's line is
    /// read.
    package var trimmingSpaces: String {
        let bytes = utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") {
            start = bytes.index(after: start)
        }
        while start < end {
            let last = bytes[bytes.index(before: end)]
            guard last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") || last == UInt8(ascii: "\r") else { break }
            end = bytes.index(before: end)
        }
        // Nothing to trim from a String: itself, not a copy (a playlist's lines mostly).
        if start == bytes.startIndex, end == bytes.endIndex, let whole = self as? String { return whole }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}
