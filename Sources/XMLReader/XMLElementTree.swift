package import MediaCore

/// The element tree of an XML document, read by a small reader of our own: what `DASHManifest`
/// needs from an MPD, in pure Swift, with every count and depth bounded.
///
/// It implements a subset of Extensible Markup Language (XML) 1.0 (W3C, fifth edition), with the
/// names of Namespaces in XML 1.0 (third edition):
///
/// - 2.1 a document is a prolog, one root element and trailing comments, processing
///   instructions and white space ([1]); text before or after the root is refused.
/// - 2.2 characters ([2]): the text must be UTF-8 (4.3.3); a character outside `Char` (a control
///   character other than tab, line feed and carriage return, U+FFFE, U+FFFF) is refused, written
///   or referenced.
/// - 2.3 names ([4], [4a], [5]) with `NameStartChar` and `NameChar` as the fifth edition defines
///   them; literals in single or double quotes ([10]).
/// - 2.4 character data ([14]): `]]>` in text is refused.
/// - 2.5 comments ([15]): skipped; `--` inside one is refused.
/// - 2.6 processing instructions ([16], [17]): skipped; a target `xml` in any case is refused
///   outside the XML declaration.
/// - 2.7 CDATA sections ([18]–[21]): their text is the element's text, as written.
/// - 2.8 the XML declaration ([23]–[26], [32]) and the document type declaration ([28]): the
///   declaration's version is `1.x`; the DOCTYPE's external subset is never read, and its
///   internal subset is skipped without honouring anything in it (no attribute defaults, no
///   entities): a subset that declares an entity, or refers to a parameter entity, is refused,
///   so no entity is ever expanded (no "billion laughs").
/// - 2.11 line ends: CR LF and a lone CR read as LF.
/// - 3.1 start tags, end tags and empty-element tags ([40]–[44]): "Element Type Match" (the
///   end tag names its start tag), "Unique Att Spec" (an attribute once per tag), "No < in
///   Attribute Values".
/// - 3.3.3 attribute-value normalization for CDATA attributes: each white space character written
///   in a value reads as a space (a character reference to one keeps it).
/// - 4.1 character references ([66]) and the five predefined entity references (4.6: `&lt;`,
///   `&gt;`, `&amp;`, `&apos;`, `&quot;`); any other entity reference is refused ("Entity
///   Declared").
/// - 4.3.3 encodings: UTF-8, with or without its byte order mark; `US-ASCII`, or an ISO 8859 or
///   Windows code page when every byte is ASCII; UTF-16 and UTF-32 are refused with that said.
///
/// Namespaces (Namespaces in XML 1.0, 3–6): prefixes are kept as written in ``Element/name``;
/// each element's and each prefixed attribute's namespace name is resolved from the `xmlns`
/// declarations in scope, an undeclared prefix is refused, as are two attributes with the same
/// namespace name and local name.
///
/// Not read: the DTD (no validation, no defaults), external entities, encodings other than those
/// above, XML 1.1's extra line ends and characters.
///
/// Bounded: at most ``Limits/depth`` nested elements, ``Limits/elements`` elements and
/// ``Limits/attributes`` attributes (each also needs bytes of the input: the smallest element,
/// `<a/>`, takes 4 and the smallest attribute, ` a=""`, 5, so the tree is linear in the input).
/// The reader iterates (nothing recurses on the input), and each byte is looked at a bounded
/// number of times, so reading is linear in the input's size.
package struct XMLElementTree: Sendable, Hashable {
    /// An element: its names, attributes, child elements and text.
    package struct Element: Sendable, Hashable {
        /// The qualified name as written in the tag (`MPD`, `cenc:pssh`).
        package var name: String
        /// The part of ``name`` after its prefix and colon (`pssh`), or the whole name.
        package var localName: String
        /// The namespace name (URI) the element's prefix, or the default namespace, is bound to
        /// where it stands; `nil` when it is in no namespace.
        package var namespaceURI: String?
        /// The attributes as written, in document order, values decoded (references replaced,
        /// white space normalized as 3.3.3 says). Namespace declarations (`xmlns`, `xmlns:p`)
        /// are among them.
        package var attributes: [Attribute]
        /// The child elements, in document order.
        package var children: [Element]
        /// The element's own character data, concatenated: text and CDATA sections directly in
        /// it, references decoded, line ends normalized; not its children's text.
        package var text: String
        /// The line (from 1) on which the start tag ends: where a SAX parser reports the element.
        package var line: Int
        /// The byte offset of the start tag's `<` in the input.
        package var offset: Int

        /// The prefix of ``name`` (`cenc` of `cenc:pssh`), `nil` when it has none.
        package var prefix: String? {
            guard let colon = name.utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            return String(name[..<colon])
        }

        /// The value of the attribute whose qualified name, as written, is `name`.
        package subscript(attribute name: String) -> String? {
            attributes.first { $0.name == name }?.value
        }
    }

    /// One attribute of a start tag.
    package struct Attribute: Sendable, Hashable {
        /// The qualified name as written (`id`, `xlink:href`, `xmlns:cenc`).
        package var name: String
        /// The value, references replaced and white space normalized.
        package var value: String
        /// The namespace name a prefixed attribute's prefix is bound to; `nil` for an
        /// unprefixed attribute (which is in no namespace) and for namespace declarations.
        package var namespaceURI: String?

        /// The part of ``name`` after its prefix and colon, or the whole name.
        package var localName: String {
            guard let colon = name.utf8.firstIndex(of: UInt8(ascii: ":")) else { return name }
            return String(name[name.utf8.index(after: colon)...])
        }
    }

    /// The most the reader accepts; beyond them a document is refused, not read.
    package struct Limits: Sendable, Hashable {
        /// The deepest nesting of elements (the root is at depth 1).
        package var depth: Int
        /// The most elements in the document.
        package var elements: Int
        /// The most attributes in the document, namespace declarations included.
        package var attributes: Int

        /// Limits of `depth`, `elements` and `attributes`.
        package init(depth: Int = 256, elements: Int = 1_000_000, attributes: Int = 4_000_000) {
            self.depth = depth
            self.elements = elements
            self.attributes = attributes
        }
    }

    /// What the reader stopped at, and where.
    package struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible, PipelineErrorConvertible {
        /// The kind of refusal.
        package enum Kind: Sendable, Hashable {
            /// The text is not well-formed XML (or not namespace-well-formed).
            case malformed
            /// The text has no element at all.
            case noRootElement
            /// The DOCTYPE declares an entity (`<!ENTITY`), which this reader never expands.
            case entityDeclaration
            /// The text is not in an encoding the reader reads (UTF-16, UTF-32, a code page with
            /// bytes beyond ASCII).
            case encoding
            /// The document goes beyond a `Limits` value.
            case limit
        }

        /// The kind of refusal.
        package var kind: Kind
        /// What is wrong, in words.
        package var reason: String
        /// The line (from 1) where it is.
        package var line: Int
        /// The column (from 1, in characters) where it is.
        package var column: Int
        /// The byte offset where it is.
        package var offset: Int

        /// `XML line 3, column 5: what is wrong`.
        package var description: String { "XML line \(line), column \(column): \(reason)" }
        /// ``PipelineError/Code/container``.
        package static var pipelineErrorCode: PipelineError.Code { .container }
        /// The byte offset.
        package var byteOffset: Int64? { Int64(offset) }
    }

    /// The root element.
    package var root: Element

    /// The namespace name the prefix `xml` is bound to (Namespaces in XML 1.0, 3).
    package static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    /// Reads the document in `bytes`.
    ///
    /// - Throws: ``/MediaCore/PipelineError`` (code ``PipelineError/Code/container``) with a
    ///   `SyntaxError` underneath, naming the line and column and what is wrong.
    package init(bytes: [UInt8], limits: Limits = Limits()) throws(PipelineError) {
        var reader = Reader(bytes: bytes, limits: limits)
        do {
            root = try reader.document()
        } catch {
            throw PipelineError(.container, underlying: error)
        }
    }

    /// The document as XML text that reads back to the same tree (but for lines and offsets):
    /// each element's text before its children, markup characters and white space that
    /// attribute normalization would change written as references.
    package var xmlText: String {
        var out: [UInt8] = []
        // Iterative: a stack of (element, next child) pairs.
        var stack: [(element: Element, next: Int)] = [(root, -1)]
        while !stack.isEmpty {
            let (element, next) = stack[stack.count - 1]
            if next == -1 {
                out.append(UInt8(ascii: "<"))
                out += element.name.utf8
                for attribute in element.attributes {
                    out.append(UInt8(ascii: " "))
                    out += attribute.name.utf8
                    out += "=\"".utf8
                    Self.escape(attribute.value, into: &out, attribute: true)
                    out.append(UInt8(ascii: "\""))
                }
                if element.children.isEmpty, element.text.isEmpty {
                    out += "/>".utf8
                    stack.removeLast()
                    continue
                }
                out.append(UInt8(ascii: ">"))
                Self.escape(element.text, into: &out, attribute: false)
                stack[stack.count - 1].next = 0
            } else if next < element.children.count {
                stack[stack.count - 1].next = next + 1
                stack.append((element.children[next], -1))
            } else {
                out += "</".utf8
                out += element.name.utf8
                out.append(UInt8(ascii: ">"))
                stack.removeLast()
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` as element content: `&`, `<`, `>` and a carriage return written as references.
    package static func escapedText(_ text: String) -> String {
        var out: [UInt8] = []
        escape(text, into: &out, attribute: false)
        return String(decoding: out, as: UTF8.self)
    }

    /// The first element named `localName` in document order, the root included.
    package func firstElement(named localName: String) -> Element? {
        var stack = [root]
        while let element = stack.popLast() {
            if element.localName == localName { return element }
            stack += element.children.reversed()
        }
        return nil
    }

    private static func escape(_ text: String, into out: inout [UInt8], attribute: Bool) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): out += "&amp;".utf8
            case UInt8(ascii: "<"): out += "&lt;".utf8
            case UInt8(ascii: ">"): out += "&gt;".utf8
            case UInt8(ascii: "\"") where attribute: out += "&quot;".utf8
            case 0x0D: out += "&#13;".utf8
            case 0x09 where attribute: out += "&#9;".utf8
            case 0x0A where attribute: out += "&#10;".utf8
            default: out.append(byte)
            }
        }
    }
}

// MARK: - The reader

/// ASCII bytes by name.
private enum ASCII {
    static let lt = UInt8(ascii: "<"), gt = UInt8(ascii: ">"), amp = UInt8(ascii: "&"), slash = UInt8(ascii: "/")
    static let question = UInt8(ascii: "?"), bang = UInt8(ascii: "!"), equals = UInt8(ascii: "="), colon = UInt8(ascii: ":")
    static let quote = UInt8(ascii: "\""), apostrophe = UInt8(ascii: "'"), semicolon = UInt8(ascii: ";"), hash = UInt8(ascii: "#")
    static let dash = UInt8(ascii: "-"), rightBracket = UInt8(ascii: "]"), leftBracket = UInt8(ascii: "["), percent = UInt8(ascii: "%")
    static let space: UInt8 = 0x20, tab: UInt8 = 0x09, lf: UInt8 = 0x0A, cr: UInt8 = 0x0D
}

/// One pass over the bytes, building the tree with an explicit stack of open elements.
private struct Reader {
    typealias Element = XMLElementTree.Element
    typealias SyntaxError = XMLElementTree.SyntaxError

    /// An element whose end tag is still to come.
    struct Open {
        var element: Element
        /// Its character data so far, as UTF-8.
        var text: [UInt8] = []
        /// The prefixes its namespace declarations bound (`""` for the default namespace), to
        /// unbind at its end.
        var declared: [String] = []
    }

    let bytes: [UInt8]
    let limits: XMLElementTree.Limits
    var position = 0
    var stack: [Open] = []
    var elementCount = 0
    var attributeCount = 0
    /// Each prefix's bindings, innermost last (`""`: the default namespace; an empty URI unbinds it).
    var namespaces: [String: [String]] = ["xml": [XMLElementTree.xmlNamespace]]
    /// Each namespace name declared, by a number: the duplicate-attribute check compares
    /// numbers, not the names, which a hostile document makes long (hashed once, where declared).
    var namespaceNumbers: [String: Int] = [XMLElementTree.xmlNamespace: 0]
    /// The number of the namespace name each prefix is bound to, in step with `namespaces`.
    var prefixNumbers: [String: [Int]] = ["xml": [0]]
    var sawDoctype = false
    /// The line count up to `lineCountedTo` (lines are asked for in increasing positions).
    var lineCountedTo = 0
    var linesBefore = 1

    init(bytes: [UInt8], limits: XMLElementTree.Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    // MARK: Positions and errors

    /// The line of `offset`: counted on from the last position asked for, or from the start for
    /// an earlier one (which only an error asks for).
    mutating func line(at offset: Int) -> Int {
        let offset = min(offset, bytes.count)
        if offset < lineCountedTo {
            lineCountedTo = 0
            linesBefore = 1
        }
        var index = lineCountedTo
        var lines = linesBefore
        while index < offset {
            let byte = bytes[index]
            // 2.11: LF, CR LF (counted at its LF) and a lone CR each end a line.
            if byte == ASCII.lf || (byte == ASCII.cr && (index + 1 >= bytes.count || bytes[index + 1] != ASCII.lf)) { lines += 1 }
            index += 1
        }
        lineCountedTo = offset
        linesBefore = lines
        return lines
    }

    /// A refusal at `offset` (the current position when `nil`).
    mutating func error(_ reason: String, at offset: Int? = nil, kind: SyntaxError.Kind = .malformed) -> SyntaxError {
        let offset = min(offset ?? position, bytes.count)
        let line = line(at: offset)
        var lineStart = offset
        while lineStart > 0, bytes[lineStart - 1] != ASCII.lf, bytes[lineStart - 1] != ASCII.cr { lineStart -= 1 }
        // Characters, not bytes: UTF-8 continuation bytes do not count.
        let column = 1 + bytes[lineStart..<offset].count(where: { $0 & 0xC0 != 0x80 })
        return SyntaxError(kind: kind, reason: reason, line: line, column: column, offset: offset)
    }

    /// `bytes[range]` as text for a message, at most 64 characters.
    func quoted(_ range: Range<Int>) -> String {
        let text = String(decoding: bytes[range], as: UTF8.self)
        return text.count > 64 ? String(text.prefix(64)) + "…" : text
    }

    /// What stands at `offset`, for a message: the character, or "the end of the text".
    func found(at offset: Int) -> String {
        guard offset < bytes.count else { return "the end of the text" }
        let byte = bytes[offset]
        if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(decodeScalar(at: offset)?.scalar.value ?? UInt32(byte), radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    // MARK: Bytes

    var atEnd: Bool { position >= bytes.count }

    func starts(with literal: StaticString, at offset: Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        return literal.withUTF8Buffer { literal in
            for index in 0..<count where bytes[offset + index] != literal[index] { return false }
            return true
        }
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == ASCII.space || byte == ASCII.tab || byte == ASCII.lf || byte == ASCII.cr }

    /// Skips `S` ([3]); whether there was any.
    @discardableResult
    mutating func skipSpace() -> Bool {
        let start = position
        while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
        return position > start
    }

    /// The scalar whose UTF-8 starts at `offset` and its length; the bytes were checked once.
    func decodeScalar(at offset: Int) -> (scalar: Unicode.Scalar, length: Int)? {
        guard offset < bytes.count else { return nil }
        let lead = bytes[offset]
        let length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        guard offset + length <= bytes.count else { return nil }
        var value = length == 1 ? UInt32(lead) : UInt32(lead) & (0xFF >> (length + 1))
        for index in 1..<max(length, 1) { value = value << 6 | UInt32(bytes[offset + index] & 0x3F) }
        return Unicode.Scalar(value).map { ($0, length) }
    }

    // MARK: Encoding (2.2, 4.3.3)

    /// Refuses UTF-16 and UTF-32 and skips a UTF-8 byte order mark (4.3.3, F.1).
    mutating func checkByteOrder() throws(SyntaxError) {
        let head = Array(bytes.prefix(4))
        if head.starts(with: [0x00, 0x00, 0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE, 0x00, 0x00])
            || head.starts(with: [0x00, 0x00, 0x00, 0x3C]) || head.starts(with: [0x3C, 0x00, 0x00, 0x00]) {
            throw error("the text is UTF-32; only UTF-8 is read", at: 0, kind: .encoding)
        }
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE]) {
            throw error("the text is UTF-16 (it starts with a UTF-16 byte order mark); only UTF-8 is read", at: 0, kind: .encoding)
        }
        if head.starts(with: [0x00, 0x3C]) || head.starts(with: [0x3C, 0x00]) {
            throw error("the text is UTF-16 (its '<' is two bytes); only UTF-8 is read", at: 0, kind: .encoding)
        }
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// Checks that every byte from `start` on is UTF-8 and every character a `Char` ([2]).
    mutating func checkUTF8(from start: Int) throws(SyntaxError) {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                guard byte >= 0x20 || byte == ASCII.tab || byte == ASCII.lf || byte == ASCII.cr else {
                    throw error("the character \(found(at: index)), which XML does not allow (2.2)", at: index)
                }
                index += 1
                continue
            }
            // Well-formed UTF-8 (Unicode 3.9, table 3-7): no overlong forms, no surrogates,
            // nothing past U+10FFFF.
            let length: Int
            var range: ClosedRange<UInt8> = 0x80...0xBF
            switch byte {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; range = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; range = 0x80...0x9F
            case 0xF0: length = 4; range = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; range = 0x80...0x8F
            default: throw error("a byte (0x\(String(byte, radix: 16, uppercase: true))) that is not UTF-8; only UTF-8 is read", at: index, kind: .encoding)
            }
            guard index + length <= bytes.count, range.contains(bytes[index + 1]),
                  (index + 2..<index + length).allSatisfy({ bytes[$0] & 0xC0 == 0x80 }) else {
                throw error("bytes that are not UTF-8; only UTF-8 is read", at: index, kind: .encoding)
            }
            // U+FFFE and U+FFFF are not Chars: EF BF BE, EF BF BF.
            if byte == 0xEF, bytes[index + 1] == 0xBF, bytes[index + 2] >= 0xBE {
                throw error("the character \(found(at: index)), which XML does not allow (2.2)", at: index)
            }
            index += length
        }
    }

    // MARK: Document (2.1, 2.8)

    mutating func document() throws(SyntaxError) -> Element {
        try checkByteOrder()
        let textStart = position
        // The declaration first, so that a declared encoding is named when the bytes are not UTF-8.
        if starts(with: "<?xml", at: position), position + 5 < bytes.count, Self.isSpace(bytes[position + 5]) {
            try xmlDeclaration()
        }
        try checkUTF8(from: textStart)
        // Misc* (doctypedecl Misc*)? before the root.
        while true {
            skipSpace()
            guard !atEnd else { throw error("no root element: the text has no element", kind: .noRootElement) }
            if starts(with: "<!--", at: position) {
                try comment()
            } else if starts(with: "<?", at: position) {
                try processingInstruction()
            } else if starts(with: "<!DOCTYPE", at: position) {
                guard !sawDoctype else { throw error("a second DOCTYPE") }
                sawDoctype = true
                try doctype()
            } else if bytes[position] == ASCII.lt, position + 1 < bytes.count, bytes[position + 1] != ASCII.bang, bytes[position + 1] != ASCII.slash {
                break
            } else if bytes[position] == ASCII.lt {
                throw error("\(quoted(position..<min(bytes.count, position + 9))) before the root element, where an element or a comment is expected")
            } else {
                throw error("text before the root element (\(found(at: position))): the text does not start with an element")
            }
        }
        var root: Element?
        if let element = try startTag() {
            root = element
        }
        while !stack.isEmpty {
            if let finished = try content() {
                root = finished
            }
        }
        // Misc* after the root.
        while true {
            skipSpace()
            if atEnd { break }
            if starts(with: "<!--", at: position) {
                try comment()
            } else if starts(with: "<?", at: position) {
                try processingInstruction()
            } else if bytes[position] == ASCII.lt, position + 1 < bytes.count, bytes[position + 1] != ASCII.bang, bytes[position + 1] != ASCII.slash,
                      bytes[position + 1] != ASCII.question {
                let nameEnd = nameLength(at: position + 1).map { position + 1 + $0 } ?? position + 1
                throw error("a second root element <\(quoted(position + 1..<nameEnd))> after the root element ends; a document has one")
            } else if starts(with: "<!DOCTYPE", at: position) {
                throw error("a DOCTYPE after the root element; it may only come before it")
            } else {
                throw error("text after the root element (\(found(at: position))); only comments, processing instructions and white space may follow it")
            }
        }
        guard let root else { throw error("no root element", kind: .noRootElement) }
        return root
    }

    /// The XML declaration ([23]): `version`, then optionally `encoding` and `standalone`.
    mutating func xmlDeclaration() throws(SyntaxError) {
        let start = position
        position += 5
        var names: [String] = []
        while true {
            let spaced = skipSpace()
            guard !atEnd else { throw error("the XML declaration is not closed (no '?>')", at: start) }
            if starts(with: "?>", at: position) {
                position += 2
                break
            }
            guard spaced else { throw error("\(found(at: position)) in the XML declaration, where '?>' is expected: it is not closed") }
            let nameStart = position
            guard let length = nameLength(at: position) else { throw error("\(found(at: position)) in the XML declaration, where a name is expected") }
            position += length
            let name = String(decoding: bytes[nameStart..<position], as: UTF8.self)
            let expected = ["version", "encoding", "standalone"]
            guard let order = expected.firstIndex(of: name), names.allSatisfy({ expected.firstIndex(of: $0)! < order }),
                  name == "version" || names.first == "version" else {
                throw error("the XML declaration has \(quoted(nameStart..<position)) there; it has version, then encoding and standalone, in that order", at: nameStart)
            }
            names.append(name)
            try equals(after: name)
            let (valueStart, valueEnd) = try literal(what: "the XML declaration's \(name)")
            let value = String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self)
            switch name {
            case "version":
                // [26] VersionNum ::= '1.' [0-9]+
                guard value.hasPrefix("1."), value.count > 2, value.utf8.dropFirst(2).allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw error("the XML declaration's version is \"\(quoted(valueStart..<valueEnd))\", not 1.x", at: valueStart)
                }
            case "encoding":
                try checkDeclaredEncoding(value, at: valueStart)
            default:
                guard value == "yes" || value == "no" else {
                    throw error("the XML declaration's standalone is \"\(quoted(valueStart..<valueEnd))\", not yes or no", at: valueStart)
                }
            }
        }
        guard names.first == "version" else { throw error("the XML declaration has no version", at: start) }
    }

    /// An `encoding` the reader reads the bytes in: UTF-8 and US-ASCII, or a code page that is
    /// ASCII below 0x80 when no byte is above it.
    mutating func checkDeclaredEncoding(_ name: String, at offset: Int) throws(SyntaxError) {
        let upper = name.uppercased()
        if ["UTF-8", "UTF8", "US-ASCII", "ASCII"].contains(upper) { return }
        if upper.hasPrefix("UTF-16") || upper.hasPrefix("UTF-32") || upper == "UCS-2" || upper == "UCS-4" {
            throw error("the XML declaration names the encoding \(name) but the bytes are not; only UTF-8 is read", at: offset, kind: .encoding)
        }
        let asciiCompatible = upper.hasPrefix("ISO-8859-") || upper.hasPrefix("WINDOWS-125") || upper == "LATIN1" || upper == "ISO-LATIN-1"
        if asciiCompatible, bytes.allSatisfy({ $0 < 0x80 }) { return }
        throw error("the XML declaration names the encoding \(name.prefix(64)); only UTF-8 (or ASCII text under another name) is read",
                    at: offset, kind: .encoding)
    }

    /// `S? '=' S?` ([25]).
    mutating func equals(after name: @autoclosure () -> String) throws(SyntaxError) {
        skipSpace()
        guard !atEnd, bytes[position] == ASCII.equals else { throw error("\(found(at: position)) after \(name().prefix(64)), where '=' is expected") }
        position += 1
        skipSpace()
    }

    /// A quoted literal without references (the XML declaration's values, the DOCTYPE's ids): the
    /// range of its text.
    mutating func literal(what: String) throws(SyntaxError) -> (Int, Int) {
        guard !atEnd, bytes[position] == ASCII.quote || bytes[position] == ASCII.apostrophe else {
            throw error("\(found(at: position)) where \(what) in quotes is expected")
        }
        let quote = bytes[position]
        let start = position
        position += 1
        guard let end = bytes[position...].firstIndex(of: quote) else { throw error("\(what) is not closed (no closing quote)", at: start) }
        position = end + 1
        return (start + 1, end)
    }

    /// A comment ([15]), skipped; at `<!--`.
    mutating func comment() throws(SyntaxError) {
        let start = position
        position += 4
        while true {
            guard let dash = bytes[position...].firstIndex(of: ASCII.dash) else {
                throw error("the comment that starts here is not closed (no '-->')", at: start)
            }
            position = dash + 1
            guard position < bytes.count, bytes[position] == ASCII.dash else { continue }
            guard position + 1 < bytes.count else { throw error("the comment that starts here is not closed (no '-->')", at: start) }
            guard bytes[position + 1] == ASCII.gt else { throw error("'--' inside a comment (2.5 allows it only in the closing '-->')", at: dash) }
            position += 2
            return
        }
    }

    /// A processing instruction ([16]), skipped; at `<?`.
    mutating func processingInstruction() throws(SyntaxError) {
        let start = position
        position += 2
        guard let length = nameLength(at: position) else { throw error("\(found(at: position)) after '<?', where a processing instruction's target is expected") }
        let target = String(decoding: bytes[position..<position + length], as: UTF8.self)
        if target.lowercased() == "xml" {
            throw error(start == 0 || (start == 3 && bytes.starts(with: [0xEF, 0xBB, 0xBF]))
                ? "the XML declaration needs a space and its version after '<?xml'"
                : "an XML declaration ('<?xml') after the start of the text; it may only come first", at: start)
        }
        position += length
        if starts(with: "?>", at: position) {
            position += 2
            return
        }
        guard !atEnd, Self.isSpace(bytes[position]) else { throw error("\(found(at: position)) after the processing instruction's target \(target.prefix(64))") }
        while true {
            guard let mark = bytes[position...].firstIndex(of: ASCII.question) else {
                throw error("the processing instruction that starts here is not closed (no '?>')", at: start)
            }
            position = mark + 1
            if position < bytes.count, bytes[position] == ASCII.gt {
                position += 1
                return
            }
        }
    }

    /// The document type declaration ([28]), skipped; at `<!DOCTYPE`. Its internal subset is
    /// read only far enough to skip it, and refused when it declares an entity or refers to a
    /// parameter entity.
    mutating func doctype() throws(SyntaxError) {
        let start = position
        position += 9
        guard skipSpace(), let length = nameLength(at: position) else {
            throw error("\(found(at: position)) in the DOCTYPE, where a space and the root element's name are expected")
        }
        position += length
        // The external id: keywords and quoted literals, up to '[' or '>'.
        while true {
            skipSpace()
            guard !atEnd else { throw error("the DOCTYPE that starts here is not closed (no '>')", at: start) }
            switch bytes[position] {
            case ASCII.gt:
                position += 1
                return
            case ASCII.leftBracket:
                position += 1
                try internalSubset(doctype: start)
                skipSpace()
                guard !atEnd, bytes[position] == ASCII.gt else { throw error("\(found(at: position)) after the DOCTYPE's internal subset, where '>' is expected") }
                position += 1
                return
            case ASCII.quote, ASCII.apostrophe:
                _ = try literal(what: "the DOCTYPE's identifier")
            default:
                guard let length = nameLength(at: position) else { throw error("\(found(at: position)) in the DOCTYPE") }
                let keyword = String(decoding: bytes[position..<position + length], as: UTF8.self)
                guard keyword == "SYSTEM" || keyword == "PUBLIC" else { throw error("\(keyword.prefix(64)) in the DOCTYPE, where SYSTEM or PUBLIC is expected") }
                position += length
            }
        }
    }

    /// The internal subset ([28b]) after its `[`, up to and past its `]`.
    mutating func internalSubset(doctype start: Int) throws(SyntaxError) {
        while true {
            skipSpace()
            guard !atEnd else { throw error("the DOCTYPE's internal subset that starts here is not closed (no ']')", at: start) }
            if bytes[position] == ASCII.rightBracket {
                position += 1
                return
            } else if starts(with: "<!--", at: position) {
                try comment()
            } else if starts(with: "<?", at: position) {
                try processingInstruction()
            } else if starts(with: "<!ENTITY", at: position) {
                throw error("an entity declaration (<!ENTITY) in the DOCTYPE; entities are not read, so that none is ever expanded", kind: .entityDeclaration)
            } else if starts(with: "<!ELEMENT", at: position) || starts(with: "<!ATTLIST", at: position) || starts(with: "<!NOTATION", at: position) {
                // Skipped: up to the '>' that is not in a quoted literal.
                let declaration = position
                position += 2
                var quote: UInt8?
                while true {
                    guard !atEnd else { throw error("the declaration that starts here is not closed (no '>')", at: declaration) }
                    let byte = bytes[position]
                    position += 1
                    if let open = quote {
                        if byte == open { quote = nil }
                    } else if byte == ASCII.quote || byte == ASCII.apostrophe {
                        quote = byte
                    } else if byte == ASCII.percent {
                        throw error("a parameter-entity reference in the DOCTYPE; entities are not read", at: position - 1)
                    } else if byte == ASCII.gt {
                        break
                    }
                }
            } else if bytes[position] == ASCII.percent {
                throw error("a parameter-entity reference in the DOCTYPE; entities are not read")
            } else {
                throw error("\(found(at: position)) in the DOCTYPE's internal subset, where a declaration is expected")
            }
        }
    }

    // MARK: Names (2.3; Namespaces in XML 1.0, 4)

    /// The length in bytes of the `Name` ([5]) at `offset`, or `nil` when none starts there.
    func nameLength(at offset: Int) -> Int? {
        var index = offset
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                let isStart = (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F || byte == ASCII.colon
                let isName = isStart || (byte >= 0x30 && byte <= 0x39) || byte == ASCII.dash || byte == 0x2E
                guard index == offset ? isStart : isName else { break }
                index += 1
            } else {
                guard let (scalar, length) = decodeScalar(at: index) else { break }
                guard Self.isNameCharacter(scalar.value, start: index == offset) else { break }
                index += length
            }
        }
        return index > offset ? index - offset : nil
    }

    /// [4] `NameStartChar` and [4a] `NameChar` beyond ASCII.
    static func isNameCharacter(_ value: UInt32, start: Bool) -> Bool {
        switch value {
        case 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x2FF, 0x370...0x37D, 0x37F...0x1FFF, 0x200C...0x200D, 0x2070...0x218F,
             0x2C00...0x2FEF, 0x3001...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFFD, 0x10000...0xEFFFF:
            return true
        case 0xB7, 0x300...0x36F, 0x203F...0x2040:
            return !start
        default:
            return false
        }
    }

    /// The name at the position, moved past: a `QName` (Namespaces in XML 1.0, [7]): one colon
    /// at most, with a prefix and a local part on either side of it.
    mutating func qualifiedName(what: @autoclosure () -> String) throws(SyntaxError) -> (name: String, localName: String) {
        let start = position
        guard let length = nameLength(at: position) else { throw error("\(found(at: position)) where \(what()) is expected") }
        position += length
        if let colon = bytes[start..<position].firstIndex(of: ASCII.colon) {
            guard colon > start, colon + 1 < position, !bytes[colon + 1..<position].contains(ASCII.colon) else {
                throw error("\(quoted(start..<position)) is not a qualified name (one colon at most, between a prefix and a local name)", at: start)
            }
            return (String(decoding: bytes[start..<position], as: UTF8.self), String(decoding: bytes[colon + 1..<position], as: UTF8.self))
        }
        let name = String(decoding: bytes[start..<position], as: UTF8.self)
        return (name, name)
    }

    // MARK: Content (3.1, 4.1, 2.4, 2.7)

    /// A start tag or an empty-element tag at `<` ([40], [44]); `nil` for a start tag (pushed on
    /// the stack), the finished element for an empty-element tag.
    mutating func startTag() throws(SyntaxError) -> Element? {
        let start = position
        position += 1
        let (name, localName) = try qualifiedName(what: "an element's name after '<'")
        guard stack.count < limits.depth else {
            throw error("<\(name.prefix(64))> is nested more than \(limits.depth) elements deep; refused", at: start, kind: .limit)
        }
        elementCount += 1
        guard elementCount <= limits.elements else { throw error("more than \(limits.elements) elements; refused", at: start, kind: .limit) }
        var attributes: [XMLElementTree.Attribute] = []
        var seen: Set<String> = []
        var empty = false
        while true {
            let spaced = skipSpace()
            guard !atEnd else { throw error("the start tag <\(name.prefix(64))> that starts here is not closed (no '>')", at: start) }
            if bytes[position] == ASCII.gt {
                position += 1
                break
            }
            if starts(with: "/>", at: position) {
                position += 2
                empty = true
                break
            }
            guard spaced else { throw error("\(found(at: position)) in the start tag <\(name.prefix(64))>, where a space, '>' or '/>' is expected") }
            let attributeStart = position
            let (attributeName, _) = try qualifiedName(what: "an attribute's name, '>' or '/>' in the start tag <\(name.prefix(64))>")
            try equals(after: "the attribute \(attributeName)")
            let value = try attributeValue(name: attributeName, tag: name)
            attributeCount += 1
            guard attributeCount <= limits.attributes else { throw error("more than \(limits.attributes) attributes; refused", at: attributeStart, kind: .limit) }
            // 3.1 "Unique Att Spec": a set once a tag has more than a few (no quadratic scan).
            let duplicate: Bool
            if attributes.count < 8 {
                duplicate = attributes.contains { $0.name == attributeName }
            } else {
                if seen.isEmpty { seen = Set(attributes.map(\.name)) }
                duplicate = !seen.insert(attributeName).inserted
            }
            guard !duplicate else {
                throw error("the attribute \(attributeName.prefix(64)) appears twice in the start tag <\(name.prefix(64))> (3.1, Unique Att Spec)", at: attributeStart)
            }
            attributes.append(XMLElementTree.Attribute(name: attributeName, value: value, namespaceURI: nil))
        }
        var open = Open(element: Element(name: name, localName: localName, namespaceURI: nil, attributes: attributes, children: [], text: "",
                                         line: line(at: position - 1), offset: start))
        try resolveNamespaces(&open, at: start)
        guard empty else {
            stack.append(open)
            return nil
        }
        return close(open)
    }

    /// Binds the element's namespace declarations, then resolves its name's and its prefixed
    /// attributes' namespaces (Namespaces in XML 1.0, 3, 4, 6.1–6.3).
    mutating func resolveNamespaces(_ open: inout Open, at start: Int) throws(SyntaxError) {
        let name = open.element.name
        for attribute in open.element.attributes where attribute.name == "xmlns" || attribute.name.hasPrefix("xmlns:") {
            let prefix = attribute.name == "xmlns" ? "" : attribute.localName
            if prefix == "xmlns" || (prefix == "xml") != (attribute.value == XMLElementTree.xmlNamespace) || attribute.value == "http://www.w3.org/2000/xmlns/" {
                throw error("<\(name.prefix(64))> declares \(attribute.name)=\"\(attribute.value.prefix(64))\", which Namespaces in XML 1.0 (3) reserves", at: start)
            }
            if !prefix.isEmpty, attribute.value.isEmpty {
                throw error("<\(name.prefix(64))> declares the prefix \(prefix.prefix(64)) with an empty namespace name (Namespaces in XML 1.0, 3, No Prefix Undeclaring)", at: start)
            }
            namespaces[prefix, default: []].append(attribute.value)
            if namespaceNumbers[attribute.value] == nil { namespaceNumbers[attribute.value] = namespaceNumbers.count }
            prefixNumbers[prefix, default: []].append(namespaceNumbers[attribute.value] ?? -1)
            open.declared.append(prefix)
        }
        func uri(of prefix: String) -> String? { namespaces[prefix]?.last.flatMap { $0.isEmpty ? nil : $0 } }
        if let prefix = open.element.prefix {
            guard let bound = uri(of: prefix) else {
                throw error("the prefix \(prefix.prefix(64)) of <\(name.prefix(64))> is not declared (Namespaces in XML 1.0, 4, Prefix Declared)", at: start)
            }
            open.element.namespaceURI = bound
        } else {
            open.element.namespaceURI = uri(of: "")
        }
        // Two prefixed attributes at least, or no two can share an expanded name.
        let prefixed = open.element.attributes.lazy.filter { $0.name.utf8.contains(ASCII.colon) && !$0.name.hasPrefix("xmlns:") }.count
        var expanded: Set<String> = []
        for index in open.element.attributes.indices {
            let attribute = open.element.attributes[index]
            guard let colon = attribute.name.utf8.firstIndex(of: ASCII.colon), !attribute.name.hasPrefix("xmlns:") else { continue }
            let prefix = String(attribute.name[..<colon])
            guard let bound = uri(of: prefix) else {
                throw error("the prefix \(prefix.prefix(64)) of the attribute \(attribute.name.prefix(64)) of <\(name.prefix(64))> is not declared (Namespaces in XML 1.0, 4, Prefix Declared)", at: start)
            }
            open.element.attributes[index].namespaceURI = bound
            guard prefixed > 1 else { continue }
            guard expanded.insert("\(prefixNumbers[prefix]?.last ?? -1) \(attribute.localName)").inserted else {
                throw error("<\(name.prefix(64))> has two attributes named \(attribute.localName.prefix(64)) in the namespace \(bound.prefix(64)) (Namespaces in XML 1.0, 6.3)", at: start)
            }
        }
    }

    /// The element finished: its text set, its namespace declarations unbound.
    mutating func close(_ open: Open) -> Element {
        for prefix in open.declared {
            namespaces[prefix]?.removeLast()
            prefixNumbers[prefix]?.removeLast()
        }
        var element = open.element
        element.text = String(decoding: open.text, as: UTF8.self)
        return element
    }

    /// An attribute value ([10]) after `=`: quoted, references replaced, white space normalized
    /// (3.3.3); no `<`.
    mutating func attributeValue(name: String, tag: String) throws(SyntaxError) -> String {
        guard !atEnd, bytes[position] == ASCII.quote || bytes[position] == ASCII.apostrophe else {
            throw error("\(found(at: position)) after \(name.prefix(64))=, where the value in quotes is expected")
        }
        let quote = bytes[position]
        let start = position
        position += 1
        var value: [UInt8] = []
        while true {
            guard !atEnd else { throw error("the value of the attribute \(name.prefix(64)) of <\(tag.prefix(64))> is not closed (no closing quote)", at: start) }
            let byte = bytes[position]
            switch byte {
            case quote:
                position += 1
                return String(decoding: value, as: UTF8.self)
            case ASCII.lt:
                throw error("a '<' in the value of the attribute \(name.prefix(64)) of <\(tag.prefix(64))> (3.1: write &lt;)")
            case ASCII.amp:
                Self.append(try reference(), to: &value)
            case ASCII.cr:
                // CR LF and CR are one line end (2.11), which reads as one space (3.3.3).
                value.append(ASCII.space)
                position += position + 1 < bytes.count && bytes[position + 1] == ASCII.lf ? 2 : 1
            case ASCII.tab, ASCII.lf:
                value.append(ASCII.space)
                position += 1
            default:
                value.append(byte)
                position += 1
            }
        }
    }

    /// `scalar` in UTF-8 at the end of `out`.
    static func append(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        UTF8.encode(scalar) { out.append($0) }
    }

    /// The character of the reference ([67]) at `&`: a character reference ([66]) to a `Char`,
    /// or one of the five predefined entities (4.6).
    mutating func reference() throws(SyntaxError) -> Unicode.Scalar {
        let start = position
        position += 1
        if position < bytes.count, bytes[position] == ASCII.hash {
            position += 1
            let hex = position < bytes.count && bytes[position] == UInt8(ascii: "x")
            if hex { position += 1 }
            var value: UInt32 = 0
            var digits = 0
            while position < bytes.count {
                let byte = bytes[position]
                let digit: UInt32
                switch byte {
                case 0x30...0x39: digit = UInt32(byte - 0x30)
                case 0x61...0x66 where hex: digit = UInt32(byte - 0x61 + 10)
                case 0x41...0x46 where hex: digit = UInt32(byte - 0x41 + 10)
                default: digit = 99
                }
                guard digit != 99 else { break }
                // Past U+10FFFF it is refused below; stop growing.
                value = min(value * (hex ? 16 : 10) + digit, 0x11_0000)
                digits += 1
                position += 1
            }
            guard digits > 0, position < bytes.count, bytes[position] == ASCII.semicolon else {
                throw error("the character reference \(quoted(start..<min(position + 1, bytes.count))) is malformed (4.1: &#digits; or &#xhex;)", at: start)
            }
            position += 1
            // [2] Char: tab, LF, CR, U+0020–U+D7FF, U+E000–U+FFFD, U+10000–U+10FFFF.
            guard value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value) || (0xE000...0xFFFD).contains(value)
                    || (0x1_0000...0x10_FFFF).contains(value), let scalar = Unicode.Scalar(value) else {
                throw error("the character reference \(quoted(start..<position)) is to a character XML does not allow (4.1, Legal Character)", at: start)
            }
            return scalar
        }
        guard let length = nameLength(at: position), position + length < bytes.count, bytes[position + length] == ASCII.semicolon else {
            throw error("a '&' that does not start a reference (4.1: write &amp;)", at: start)
        }
        let name = String(decoding: bytes[position..<position + length], as: UTF8.self)
        position += length + 1
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "apos": return "'"
        case "quot": return "\""
        default: throw error("the entity &\(name.prefix(64)); is not declared; only the five predefined entities are read (4.1, Entity Declared)", at: start)
        }
    }

    /// The content ([43]) of the innermost open element, up to its next markup; the root when
    /// this closed it.
    mutating func content() throws(SyntaxError) -> Element? {
        // Character data up to '<' or '&'.
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == ASCII.lt || byte == ASCII.amp { break }
            if byte == ASCII.rightBracket, starts(with: "]]>", at: position) {
                throw error("']]>' in text (2.4: write ]]&gt;)")
            }
            position += 1
        }
        if position > start { appendText(start..<position) }
        guard !atEnd else {
            let open = stack[stack.count - 1].element
            throw error("the text ends inside <\(open.name.prefix(64))> of line \(open.line), which is not closed")
        }
        if bytes[position] == ASCII.amp {
            let scalar = try reference()
            Self.append(scalar, to: &stack[stack.count - 1].text)
            return nil
        }
        if starts(with: "</", at: position) {
            let tagStart = position
            position += 2
            let (name, _) = try qualifiedName(what: "an element's name after '</'")
            skipSpace()
            guard !atEnd, bytes[position] == ASCII.gt else { throw error("\(found(at: position)) in the end tag </\(name.prefix(64))>, where '>' is expected") }
            position += 1
            let open = stack.removeLast()
            guard name == open.element.name else {
                throw error("the end tag </\(name.prefix(64))> does not match the start tag <\(open.element.name.prefix(64))> of line \(open.element.line) (3, Element Type Match)",
                            at: tagStart)
            }
            let element = close(open)
            if stack.isEmpty { return element }
            stack[stack.count - 1].element.children.append(element)
            return nil
        }
        if starts(with: "<!--", at: position) {
            try comment()
        } else if starts(with: "<![CDATA[", at: position) {
            let sectionStart = position
            position += 9
            var end = position
            while true {
                guard let bracket = bytes[end...].firstIndex(of: ASCII.rightBracket) else {
                    throw error("the CDATA section that starts here is not closed (no ']]>')", at: sectionStart)
                }
                if starts(with: "]]>", at: bracket) {
                    end = bracket
                    break
                }
                end = bracket + 1
            }
            appendText(position..<end)
            position = end + 3
        } else if starts(with: "<?", at: position) {
            try processingInstruction()
        } else if starts(with: "<!", at: position) {
            throw error("\(quoted(position..<min(bytes.count, position + 9))) inside an element, where only a comment or CDATA section may start with '<!'")
        } else if let element = try startTag() {
            stack[stack.count - 1].element.children.append(element)
        }
        return nil
    }

    /// Text of the innermost open element, line ends normalized (2.11).
    mutating func appendText(_ range: Range<Int>) {
        var from = range.lowerBound
        var index = from
        while index < range.upperBound {
            if bytes[index] == ASCII.cr {
                stack[stack.count - 1].text += bytes[from..<index]
                stack[stack.count - 1].text.append(ASCII.lf)
                from = index + 1
                // CR LF: the LF is the line end already written.
                if from < range.upperBound, bytes[from] == ASCII.lf { from += 1 }
                index = from
            } else {
                index += 1
            }
        }
        stack[stack.count - 1].text += bytes[from..<range.upperBound]
    }
}
