import Foundation
@testable import MediaStreaming
@testable import MediaValidation
@testable import XMLReader
import Testing
import TestSupport

/// ``XMLElementTree`` against Python's `xml.etree.ElementTree` (expat): the same tree for every
/// MPD of the corpus, MPDs FFmpeg writes, and mutants of them; what it writes reads back. (The
/// reader's own tests are XMLReaderTests'.)
@Suite(.blocking) struct XMLElementTreeAgainstExpatTests {
    typealias Tree = XMLElementTree
    typealias Element = XMLElementTree.Element

    static func read(_ text: String, limits: Tree.Limits = Tree.Limits()) throws(PipelineError) -> Tree {
        try Tree(bytes: Array(text.utf8), limits: limits)
    }

    // MARK: - Writing back

    @Test func xmlTextReadsBackToTheSameTree() throws {
        let texts = [Self.handMade, DASHManifestTests.features, DASHManifestTests.ffmpegMPD, StreamManifests.mpd(DASHManifestTests.ourRenditions)]
        for text in texts {
            let tree = try Self.read(text)
            let written = tree.xmlText
            let again = try Self.read(written)
            #expect(again.xmlText == written)
            #expect(Self.signature(again) == Self.signature(tree), "names, attributes and text survive")
        }
    }

    // MARK: - Against Python's ElementTree

    /// A document with each thing the reader skips or decodes.
    static let handMade = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <!DOCTYPE MPD SYSTEM "urn:example:mpd.dtd" [ <!ELEMENT MPD ANY> <!ATTLIST MPD type CDATA "static"> <!-- c --> <?pi x?> ]>
        <?xml-stylesheet href="mpd.xsl"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" xmlns:cenc="urn:mpeg:cenc:2013" type='dynamic' minBufferTime="PT2S"
             title="tab\there&#9;and&#10;line
        end" cenc:x="&lt;&#x1F600;&gt;">
          <!-- text & <markup> in a comment -->
          <BaseURL><![CDATA[http://cdn.example/a&b/]]>tail&amp;more</BaseURL>
          <Period id="p&amp;0" start="PT0S">\r
            <AdaptationSet mimeType="audio/mp4" codecs="mp4a.40.2" segmentAlignment="true">\r\n
              <ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011" cenc:default_KID="0"><cenc:pssh>AAAA&#x41;&#65;</cenc:pssh></ContentProtection>
              <Representation id="r&lt;1&gt;" bandwidth="64000" audioSamplingRate="48000" xml:lang="en"><?pi inside?>x<!-- -->y
                <SegmentTemplate timescale="48000" media="$RepresentationID$/$Number$.m4s" initialization="$RepresentationID$/init.mp4">
                  <SegmentTimeline><S t="0" d="96256" r="-1"/></SegmentTimeline>
                </SegmentTemplate>
              </Representation>
              <Other xmlns="urn:other" xmlns:cenc="urn:again"><cenc:a cenc:b="é"/><b xmlns=""/></Other>
            </AdaptationSet>
          </Period>
        </MPD>
        <!-- after the root -->
        """

    /// One element as Python's ElementTree names it: `{namespace}local` or the name; its
    /// attributes without namespace declarations, named the same way; its own text.
    struct Node: Decodable, Equatable, CustomStringConvertible {
        var depth: Int
        var tag: String
        var attributes: [[String]]
        var text: String

        var description: String { "\(depth) \(tag) \(attributes) \(text.debugDescription)" }
    }

    struct PythonResult: Decodable {
        var ok: Bool
        var error: String?
        var elements: [Node]?
    }

    /// The tree in document order, as ``Node``s.
    static func signature(_ tree: Tree) -> [Node] {
        var nodes: [Node] = []
        var stack: [(Element, Int)] = [(tree.root, 1)]
        while let (element, depth) = stack.popLast() {
            func expanded(_ namespace: String?, _ local: String, _ name: String) -> String { namespace.map { "{\($0)}\(local)" } ?? name }
            let attributes = element.attributes.filter { $0.name != "xmlns" && !$0.name.hasPrefix("xmlns:") }
                .map { [expanded($0.namespaceURI, $0.localName, $0.name), $0.value] }
            nodes.append(Node(depth: depth, tag: expanded(element.namespaceURI, element.localName, element.name), attributes: attributes, text: element.text))
            stack += element.children.reversed().map { ($0, depth + 1) }
        }
        return nodes
    }

    /// Python's ElementTree (expat) on each file: the same ``Node``s, or its refusal.
    static let pythonReader = """
        import json, sys, xml.etree.ElementTree as ET
        out = []
        for path in sys.argv[1:]:
            try:
                root = ET.parse(path).getroot()
            except Exception as error:
                out.append({"ok": False, "error": str(error)})
                continue
            elements, stack = [], [(root, 1)]
            while stack:
                element, depth = stack.pop()
                text = (element.text or "") + "".join(child.tail or "" for child in element)
                elements.append({"depth": depth, "tag": element.tag, "attributes": [[k, v] for k, v in element.attrib.items()], "text": text})
                stack.extend((child, depth + 1) for child in reversed(list(element)))
            out.append({"ok": True, "elements": elements})
        json.dump(out, sys.stdout)
        """

    static func python(_ paths: [String]) throws -> [PythonResult] {
        let result = try Subprocess.succeed("python3", ["-c", pythonReader] + paths)
        return try JSONDecoder().decode([PythonResult].self, from: result.outputData)
    }

    /// Every `.mpd` under `../shared/corpus/` (searched recursively, read where it lies).
    static func corpusMPDs() -> [URL] {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus")
        guard let walker = FileManager.default.enumerator(at: corpus, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension.lowercased() == "mpd" }.sorted { $0.path < $1.path }
    }

    /// MPDs of FFmpeg's dash muxer in `directory`: SegmentTimeline, `$Number$` templates,
    /// SegmentList, audio + video, low-latency, several bitrates.
    static func ffmpegMPDs(in directory: URL) throws -> [URL] {
        let sine = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000:duration=0.6"]
        let dash = ["-c:a", "aac", "-b:a", "16k", "-f", "dash", "-seg_duration", "0.2"]
        let variants: [(String, [String])] = [
            ("timeline", sine + dash), ("number", sine + dash + ["-use_timeline", "0"]),
            ("list", sine + dash + ["-use_template", "0", "-use_timeline", "0"]),
            ("ldash", sine + dash + ["-streaming", "1", "-ldash", "1", "-window_size", "2", "-utc_timing_url", "https://time.example/?iso"]),
            ("av", ["-f", "lavfi", "-i", "testsrc=size=32x32:rate=5:duration=0.6"] + sine + ["-c:v", "libx264", "-preset", "ultrafast"] + dash),
            ("bitrates", sine + ["-map", "0:a", "-map", "0:a", "-c:a", "aac", "-b:a:0", "16k", "-b:a:1", "24k", "-f", "dash", "-seg_duration", "0.2",
                                 "-adaptation_sets", "id=0,streams=a"]),
        ]
        return try variants.map { name, options in
            let folder = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let mpd = folder.appendingPathComponent("manifest.mpd")
            try Subprocess.succeed("ffmpeg", ["-nostdin", "-v", "error", "-y"] + options + [mpd.path])
            return mpd
        }
    }

    @Test func sameTreesAsPythonsElementTree() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("XMLElementTreeAgainstExpatTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let corpus = Self.corpusMPDs()
        var files = corpus + (try Self.ffmpegMPDs(in: directory))
        let inline = [Self.handMade, DASHManifestTests.features, DASHManifestTests.ffmpegMPD, StreamManifests.mpd(DASHManifestTests.ourRenditions),
                      "\u{FEFF}<a>byte order mark</a>"]
        for (index, text) in inline.enumerated() {
            let url = directory.appendingPathComponent("inline-\(index).mpd")
            try Data(text.utf8).write(to: url)
            files.append(url)
        }
        let expected = try Self.python(files.map(\.path))
        try #require(expected.count == files.count)
        for (file, python) in zip(files, expected) {
            #expect(python.ok, "Python refuses \(file.lastPathComponent): \(python.error ?? "")")
            let tree: Tree
            do {
                tree = try Tree(bytes: [UInt8](try Data(contentsOf: file)))
            } catch {
                Issue.record("\(file.path): \(error)")
                continue
            }
            let ours = Self.signature(tree)
            let theirs = python.elements ?? []
            #expect(ours.count == theirs.count, "\(file.lastPathComponent): \(ours.count) elements, Python \(theirs.count)")
            for (mine, its) in zip(ours, theirs) where mine != its {
                Issue.record("\(file.lastPathComponent): ours \(mine), Python's \(its)")
                break
            }
        }
        if corpus.isEmpty {
            // Said, not failed: the corpus is a shared folder that may have no MPD.
            print("XMLElementTreeAgainstExpatTests: no .mpd file under ../shared/corpus; compared FFmpeg's and inline MPDs only")
        }

        // Every malformed document of the refusal test is refused by expat too.
        let malformedFiles = try XMLFixtures.malformed.enumerated().map { index, item in
            let url = directory.appendingPathComponent("malformed-\(index).xml")
            try Data(item.text.utf8).write(to: url)
            return url
        }
        for (item, python) in zip(XMLFixtures.malformed, try Self.python(malformedFiles.map(\.path))) {
            #expect(!python.ok, "Python reads \(item.text.debugDescription), which we refuse")
        }
    }

    /// Mutants of real MPDs: what we read, expat reads to the same tree; what we refuse and expat
    /// reads is only what we refuse by design (entity declarations, a version other than 1.x).
    /// Expat names follow XML 1.0's fourth edition (Appendix B), ours the fifth (2.3, [4]), which
    /// allows more characters beyond ASCII: a mutant with such a name may read here only.
    @Test func mutantsReadAsPythonReadsThem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("XMLElementTreeAgainstExpatTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SplitMix64(state: 2024)
        let seeds = [Self.handMade, DASHManifestTests.features, DASHManifestTests.ffmpegMPD]
        var mutants: [[UInt8]] = []
        for round in 0..<1500 {
            var bytes = Array(DASHManifestTests.mutate(seeds[round % seeds.count], &random).utf8)
            if round % 3 == 0, !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            mutants.append(bytes)
        }
        let files = try mutants.enumerated().map { index, bytes in
            let url = directory.appendingPathComponent("mutant-\(index).xml")
            try Data(bytes).write(to: url)
            return url
        }
        let expected = try Self.python(files.map(\.path))
        try #require(expected.count == mutants.count)
        var agreedReads = 0
        var agreedRefusals = 0
        for (index, (bytes, python)) in zip(mutants, expected).enumerated() {
            let context = "mutant \(index): \(String(decoding: bytes, as: UTF8.self).prefix(2000).debugDescription)"
            do {
                let tree = try Tree(bytes: bytes)
                let fifthEditionNames = Self.signature(tree).contains { node in
                    ([node.tag] + node.attributes.map { $0[0] }).contains { $0.unicodeScalars.contains { !$0.isASCII } }
                }
                #expect(python.ok || fifthEditionNames, "we read what Python refuses (\(python.error ?? "")): \(context)")
                if python.ok {
                    #expect(Self.signature(tree) == python.elements ?? [], "\(context)")
                    agreedReads += 1
                }
            } catch {
                let syntax = error.underlying(as: Tree.SyntaxError.self)
                if python.ok {
                    #expect(syntax?.kind == .entityDeclaration || syntax?.reason.contains("the XML declaration's version") == true,
                            "we refuse what Python reads (\(error)): \(context)")
                } else {
                    agreedRefusals += 1
                }
            }
        }
        #expect(agreedReads > 100 && agreedRefusals > 100, "\(agreedReads) read and \(agreedRefusals) refused by both")
    }

    // MARK: - Fuzzing

    /// Every truncation and thousands of byte flips of real MPDs: no trap, no hang, and every
    /// refusal a `PipelineError` over a `SyntaxError` that points inside the input.
    @Test(.hangGuard(minutes: 15)) func truncationsAndByteFlipsNeverTrapOrHang() throws {
        let clock = ContinuousClock()
        var random = SplitMix64(state: 7)
        let seeds = [Array(DASHManifestTests.ffmpegMPD.utf8), Array(Self.handMade.utf8), Array(DASHManifestTests.features.utf8)]
        var inputs: [[UInt8]] = []
        for seed in seeds {
            for length in 0...seed.count { inputs.append(Array(seed.prefix(length))) }
            for _ in 0..<2000 {
                var bytes = seed
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let at = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: bytes[at] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
                    case 1: bytes[at] = UInt8.random(in: 0...255, using: &random)
                    case 2: bytes[at] = Array("<>&;\"'/=![]-?#x".utf8).randomElement(using: &random)!
                    default: bytes.remove(at: at)
                    }
                }
                inputs.append(bytes)
            }
        }
        var read = 0
        var slowest: Duration = .zero
        for bytes in inputs {
            let start = clock.now
            do {
                let tree = try Tree(bytes: bytes)
                read += 1
                #expect(Self.signature(try Self.read(tree.xmlText)) == Self.signature(tree), "what reads writes back")
            } catch {
                let syntax = error.underlying(as: Tree.SyntaxError.self)
                #expect(error.code == .container && syntax != nil, "\(error)")
                if let syntax {
                    #expect(syntax.line >= 1 && syntax.column >= 1 && (0...bytes.count).contains(syntax.offset), "\(syntax)")
                    #expect(error.description.hasPrefix("XML line \(syntax.line), column \(syntax.column): "), "\(error)")
                }
            }
            _ = try? DASHManifest(text: String(decoding: bytes, as: UTF8.self))
            slowest = max(slowest, clock.now - start)
        }
        #expect(slowest < .seconds(1), "the slowest input took \(slowest)")
        #expect(read > 500 && read < inputs.count, "\(read) of \(inputs.count) read")
    }
}
