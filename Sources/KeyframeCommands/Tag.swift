import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyFrameKit

/// `keyframe tag FILE… [--set KEY=VALUE]… [--remove KEY]… [--cover IMG]… [--remove-cover] [--import-json FILE] [--json]`.
struct Tag: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag",
        abstract: "Read or write the tags and cover art of M4A/MP4/M4B, MP3, FLAC and Ogg Opus files, without re-encoding.",
        discussion: """
            With no edit, prints the tags (--json: one object per file). Edits are written in place \
            when the new tags fit in the old ones' padding (only those bytes change), else by a \
            streamed rewrite committed with one rename, so the original survives any failure. \
            MP4: every other box is kept, the gapless edit list and iTunSMPB included; keys: \
            \(TagKey.names.joined(separator: ", ")); a four-character atom (©nam); or a freeform \
            item MEAN:NAME (com.apple.iTunes:ISRC). MP3 (an ID3v2.4 tag: title → TIT2, comment \
            → COMM, another name → TXXX, the cover → APIC), FLAC (Vorbis comments and a PICTURE \
            block) and Ogg Opus (OpusTags, the cover as METADATA_BLOCK_PICTURE): any key, by the \
            generic names above; every other frame, block and page is kept.
            """
    )

    @Argument(help: "The files to read or edit.")
    var files: [String]

    @Option(name: .customLong("set"), help: ArgumentHelp("Set a tag (repeatable): title=…, track=3/12, media_kind=podcast, com.apple.iTunes:ISRC=…",
                                                        valueName: "KEY=VALUE"))
    var sets: [String] = []

    @Option(name: .customLong("remove"), help: ArgumentHelp("Remove a tag (repeatable).", valueName: "KEY"))
    var removals: [String] = []

    @Option(name: .customLong("cover"), help: ArgumentHelp("Set the cover art to these JPEG/PNG images (repeatable).", valueName: "IMG"))
    var covers: [String] = []

    @Flag(help: "Remove the cover art.")
    var removeCover = false

    @Flag(help: "Print the tags as JSON (after any edit).")
    var json = false

    @Option(help: ArgumentHelp("Set the tags of a JSON object (KEY: VALUE, or the `tags` of `tag --json`); iTunSMPB and covers in it are skipped.",
                               valueName: "FILE"))
    var importJson: String?

    func run() throws {
        try RemoteObjects.requireLocal(files, command: "tag")
        var assignments = sets
        if let importJson { assignments = try Self.assignments(fromJSON: importJson) + assignments }
        var pairs: [(key: String, value: String)] = []
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "=") else { throw CommandFailure("--set \(assignment): write KEY=VALUE") }
            pairs.append((String(assignment[..<equals]), String(assignment[assignment.index(after: equals)...])))
        }
        var images: [[UInt8]] = []
        for path in covers {
            guard let data = FileManager.default.contents(atPath: path), ITunesMetadata.Artwork(data: Array(data)) != nil else {
                throw CommandFailure("\(path): not a JPEG or PNG image")
            }
            images.append(Array(data))
        }
        let hasEdits = !pairs.isEmpty || !removals.isEmpty || removeCover || !images.isEmpty
        // An MP4's edit, as iTunes items: its keys are checked before any file is touched.
        let files = files.map { (path: $0, native: Tagging.metadataEditor(for: FilePath($0), formats: Keyframe.formats) != nil) }
        let itemEdits = files.contains { !$0.native } ? try itemListEdits(pairs, images: images) : []
        // Any other file's edit, by generic names (an ID3 frame or a Vorbis field each).
        let edit = MetadataEdit(sets: pairs, removals: removals, cover: images.first.map { .set($0) } ?? (removeCover ? .remove : nil))
        var failed = false
        for (path, native) in files {
            do {
                if hasEdits {
                    let summary = native ? try Tagging.write(metadata: edit, to: FilePath(path), formats: Keyframe.formats)
                        : try Tagging.write({ list throws(PipelineError) in
                            for edit in itemEdits {
                                do { try edit(&list) } catch { throw .unsupported("\(error)") }
                            }
                        }, to: FilePath(path), formats: Keyframe.formats)
                    if !json {
                        print("\(path): \(summary.itemCount) tags written \(summary.inPlace ? "in place" : "by rewriting the file") "
                              + "(\(summary.bytesWritten) bytes)")
                    }
                }
                if json || !hasEdits { try printTags(path, native: native) }
            } catch {
                // Each file on its own: the rest are still tagged, and the status says one failed.
                Terminal.error("Error: " + CommandFailure.message(error, naming: path) + "\n")
                failed = true
            }
        }
        if failed { throw ExitCode(1) }
    }

    /// The edits of an MP4's iTunes items for `pairs`, the removals and the covers.
    private func itemListEdits(_ pairs: [(key: String, value: String)], images: [[UInt8]]) throws -> [(inout ITunesItemList) throws -> Void] {
        var edits: [(inout ITunesItemList) throws -> Void] = []
        for (name, value) in pairs {
            let key = try TagKey(name)
            let data = try key.data(value)
            edits.append { $0.set(key.atom, type: data.type, values: [data.bytes]) }
        }
        for name in removals {
            let key = try TagKey(name)
            edits.append { $0.remove(key.atom) }
        }
        if removeCover { edits.append { $0.remove("covr") } }
        let pictures = images.compactMap { ITunesMetadata.Artwork(data: $0) }
        if !pictures.isEmpty {
            edits.append { list in
                list.remove("covr")
                list.set("covr", type: pictures[0].format.rawValue, values: [pictures[0].data])
                // Several covers: one `data` box each, in one item; types may differ per box.
                if pictures.count > 1 {
                    list.setData("covr", values: pictures.map { ($0.format.rawValue, $0.data) })
                }
            }
        }
        return edits
    }

    static func assignments(fromJSON path: String) throws -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("\(path): cannot read it") }
        let decoded: [String: JSONScalar]
        do {
            struct Printed: Decodable { let tags: [String: JSONScalar] }
            if let printed = try? JSONDecoder().decode(Printed.self, from: data) {
                decoded = printed.tags
            } else {
                decoded = try JSONDecoder().decode([String: JSONScalar].self, from: data)
            }
        } catch {
            throw CommandFailure("\(path): not a JSON object of tags (\(error))")
        }
        return decoded.filter { $0.key != "----:com.apple.iTunes:iTunSMPB" && $0.key != "covr" }
            .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.text)" }
    }

    private func printTags(_ path: String, native: Bool) throws {
        let tags: [String: String]
        if native {
            // As the file's own tag holds them, by generic name (several values joined by "; ").
            let metadata = try Tagging.readMetadata(FilePath(path), formats: Keyframe.formats)
            tags = Dictionary(metadata.tags.map { ($0.key, $0.value) }, uniquingKeysWith: { $0 + "; " + $1 })
        } else {
            tags = try Probe.report(for: path).tags ?? [:]
        }
        if json {
            try JSONOutput.print(["file": JSONValue.string(path), "tags": JSONValue.object(tags.mapValues(JSONValue.string))])
        } else {
            print("\(path):")
            // By the names --set takes (title, artist…), with the atom beside; atoms without a
            // name (and freeform items) as they are.
            let atoms = Dictionary(TagKey.table.map { ($0.value.0, $0.key) }, uniquingKeysWith: { first, _ in first })
            let named = tags.map { tag in (key: atoms[tag.key].map { "\($0) (\(tag.key))" } ?? tag.key, value: tag.value) }
            for (key, value) in named.sorted(by: { $0.key < $1.key }) { print("  \(key): \(value)") }
        }
    }
}

/// A string or number in a JSON file of tags.
struct JSONScalar: Decodable {
    let text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            text = string
        } else if let integer = try? container.decode(Int.self) {
            text = String(integer)
        } else if let flag = try? container.decode(Bool.self) {
            text = flag ? "yes" : "no"
        } else {
            throw DecodingError.typeMismatch(String.self, .init(codingPath: decoder.codingPath, debugDescription: "a string or a number"))
        }
    }
}

/// A JSON value for `tag --json`.
enum JSONValue: Encodable {
    case string(String)
    case object([String: JSONValue])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .object(let object): try container.encode(object)
        }
    }
}

/// A tag name of `keyframe tag` and the item it is.
struct TagKey {
    enum Kind { case text, position, flag, integer16, mediaKind, genreID, freeform }

    let atom: String
    let kind: Kind

    static let table: [String: (String, Kind)] = [
        "title": ("©nam", .text), "artist": ("©ART", .text), "album": ("©alb", .text), "album_artist": ("aART", .text),
        "composer": ("©wrt", .text), "date": ("©day", .text), "genre": ("©gen", .text), "comment": ("©cmt", .text),
        "lyrics": ("©lyr", .text), "grouping": ("©grp", .text), "encoder": ("©too", .text),
        "sort_title": ("sonm", .text), "sort_artist": ("soar", .text), "sort_album": ("soal", .text),
        "sort_album_artist": ("soaa", .text), "sort_composer": ("soco", .text),
        "track": ("trkn", .position), "disc": ("disk", .position),
        "compilation": ("cpil", .flag), "tempo": ("tmpo", .integer16), "media_kind": ("stik", .mediaKind), "genre_id": ("gnre", .genreID),
    ]
    static var names: [String] { table.keys.sorted() }

    static let mediaKinds: [String: UInt8] = ["music": 1, "audiobook": 2, "music_video": 6, "movie": 9, "tv_show": 10, "booklet": 11,
                                              "ringtone": 14, "podcast": 21]

    init(_ name: String) throws {
        if let (atom, kind) = Self.table[name.lowercased()] {
            self.atom = atom
            self.kind = kind
        } else if name.contains(":") {
            atom = name.hasPrefix("----:") ? name : "----:" + name
            kind = .freeform
        } else if name.unicodeScalars.count == 4 {
            atom = name
            // A known atom keeps its own kind (trkn is a position, cpil a flag, …).
            kind = Self.table.values.first { $0.0 == name }?.1 ?? .text
        } else {
            throw CommandFailure("unknown tag \(name): use \(Self.names.joined(separator: ", ")), a four-character atom, or MEAN:NAME",
                                 status: .usage)
        }
    }

    /// The `data` box type and bytes for `value`.
    func data(_ value: String) throws -> (type: UInt32, bytes: [UInt8]) {
        func number<T: FixedWidthInteger>(_ type: T.Type) throws -> [UInt8] {
            guard let number = T(value) else { throw CommandFailure("\(atom): \(value) is not a number") }
            return withUnsafeBytes(of: number.bigEndian) { Array($0) }
        }
        switch kind {
        case .text, .freeform:
            return (1, Array(value.utf8))
        case .position:
            guard let position = ITunesMetadata.Position(text: value) else { throw CommandFailure("\(atom): write N or N/TOTAL, not \(value)") }
            let parts = [UInt16(0), UInt16(clamping: position.number), UInt16(clamping: position.total)] + (atom == "trkn" ? [UInt16(0)] : [])
            return (0, parts.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
        case .flag:
            let truthy = ["1", "yes", "true"].contains(value.lowercased())
            guard truthy || ["0", "no", "false"].contains(value.lowercased()) else { throw CommandFailure("\(atom): write yes or no") }
            return (21, [truthy ? 1 : 0])
        case .integer16:
            return (21, try number(UInt16.self))
        case .mediaKind:
            if let kind = Self.mediaKinds[value.lowercased()] { return (21, [kind]) }
            return (21, try number(UInt8.self))
        case .genreID:
            return (0, try number(UInt16.self))
        }
    }
}
