internal import MediaCore

/// The items of an iTunes `ilst` (Apple, QuickTime File Format, "Metadata") as they are in the
/// file, each kept whole, so that editing some never changes the others (unknown atoms, several
/// covers, freeform items other tools wrote).
public struct ITunesItemList: Sendable, Hashable {
    /// One item: its key and its whole box.
    public struct Item: Sendable, Hashable {
        /// The box type as text (`©nam`, `trkn`, `covr`), or `----:MEAN:NAME` for a freeform item.
        public var key: String
        /// The whole item box, header included.
        public var box: [UInt8]
    }

    /// The items, in file order.
    public var items: [Item]

    /// No items.
    public init() { items = [] }

    /// The items of an `ilst` box's payload.
    ///
    /// - Throws: ``MP4Error`` naming the item whose box is malformed.
    public init(payload: [UInt8], path: BoxPath = BoxPath(components: ["moov", "udta", "meta", "ilst"])) throws(MP4Error) {
        items = []
        var boxes = try BoxIterator(ByteReader(payload), path: path)
        while let item = try boxes.next() {
            let start = Int(item.header.offset), end = start + Int(item.header.size)
            guard start >= 0, end <= payload.count else {
                throw .invalidBoxSize(path: item.path, offset: item.header.offset, size: item.header.size, reason: "it runs past the item list")
            }
            var key = MetadataTags.latin1(item.header.type)
            if item.header.type == "----" {
                var mean = "", name = ""
                var children = try BoxIterator(item.payload, path: item.path)
                while let child = try children.next() {
                    guard child.header.type == "mean" || child.header.type == "name" else { continue }
                    let text = MetadataTags.utf8(Array(child.payload.remainingBytes.dropFirst(4)))
                    if child.header.type == "mean" { mean = text } else { name = text }
                }
                key = "----:\(mean):\(name)"
            }
            items.append(Item(key: key, box: Array(payload[start..<end])))
        }
    }

    /// The `ilst` box: a header and the items.
    public var box: [UInt8] {
        let payload = items.flatMap(\.box)
        return Self.header(size: 8 + payload.count, type: "ilst") + payload
    }

    /// Removes every item with `key`.
    public mutating func remove(_ key: String) {
        items.removeAll { $0.key == key }
    }

    /// Replaces the items with `key` by one holding `values` (each a `data` box of `type`), at
    /// the place of the first one, else at the end.
    public mutating func set(_ key: String, type: UInt32, values: [[UInt8]]) {
        setData(key, values: values.map { (type, $0) })
    }

    /// Replaces the items with `key` by one holding a `data` box per value, each of its own type
    /// (several covers, JPEG and PNG), at the place of the first one, else at the end.
    public mutating func setData(_ key: String, values: [(type: UInt32, bytes: [UInt8])]) {
        var body: [UInt8] = []
        if key.hasPrefix("----:") {
            let parts = key.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            let mean = parts.count > 1 ? String(parts[1]) : "com.apple.iTunes"
            let name = parts.count > 2 ? String(parts[2]) : ""
            body += Self.header(size: 12 + mean.utf8.count, type: "mean") + [0, 0, 0, 0] + Array(mean.utf8)
            body += Self.header(size: 12 + name.utf8.count, type: "name") + [0, 0, 0, 0] + Array(name.utf8)
        }
        for value in values {
            body += Self.header(size: 16 + value.bytes.count, type: "data") + Self.u32(value.type & 0xFF_FFFF) + [0, 0, 0, 0] + value.bytes
        }
        let code = key.hasPrefix("----:") ? "----" : key
        let item = Item(key: key, box: Self.header(size: 8 + body.count, type: code) + body)
        if let index = items.firstIndex(where: { $0.key == key }) {
            var kept = items.enumerated().filter { $0.element.key != key || $0.offset == index }.map(\.element)
            if let at = kept.firstIndex(where: { $0.key == key }) { kept[at] = item }
            items = kept
        } else {
            items.append(item)
        }
    }

    /// The text of the first item with `key` whose first `data` box holds UTF-8 (type 1).
    public func text(_ key: String) -> String? {
        guard let item = items.first(where: { $0.key == key }), item.box.count >= 8 else { return nil }
        guard var children = try? BoxIterator(ByteReader(item.box, range: 8..<item.box.count), path: BoxPath(components: [key])) else { return nil }
        while let child = try? children.next() {
            guard child.header.type == "data" else { continue }
            let bytes = Array(child.payload.remainingBytes)
            guard bytes.count >= 8, bytes[1] == 0, bytes[2] == 0, bytes[3] == 1 else { return nil }
            return MetadataTags.utf8(Array(bytes[8...]))
        }
        return nil
    }

    static func u32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    /// A box header of `size` and `type`, whose characters are taken as Latin-1 (`©` is 0xA9).
    static func header(size: Int, type: String) -> [UInt8] {
        u32(UInt32(clamping: size)) + type.unicodeScalars.prefix(4).map { UInt8(truncatingIfNeeded: $0.value) }
    }
}
