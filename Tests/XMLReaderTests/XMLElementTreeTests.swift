@testable import XMLReader
import MediaCore
import Testing
import TestSupport

/// ``XMLElementTree``: the subset of XML 1.0 (fifth edition) it reads, each refusal naming its
/// line, and its limits. (KeyFrameKitTests' `XMLElementTreeAgainstExpatTests` compares its trees
/// with Python's `xml.etree.ElementTree` for every MPD of the corpus, FFmpeg's and mutants.)
@Suite(.blocking) struct XMLElementTreeTests {
    typealias Tree = XMLElementTree
    typealias Element = XMLElementTree.Element

    static func read(_ text: String, limits: Tree.Limits = Tree.Limits()) throws(PipelineError) -> Tree {
        try Tree(bytes: Array(text.utf8), limits: limits)
    }

    /// The refusal of `bytes`, or `nil` when they read.
    static func refusal(_ bytes: [UInt8], limits: Tree.Limits = Tree.Limits()) -> (error: PipelineError, syntax: Tree.SyntaxError?)? {
        do {
            _ = try Tree(bytes: bytes, limits: limits)
            return nil
        } catch {
            return (error, error.underlying(as: Tree.SyntaxError.self))
        }
    }

    static func refusal(_ text: String, limits: Tree.Limits = Tree.Limits()) -> (error: PipelineError, syntax: Tree.SyntaxError?)? {
        refusal(Array(text.utf8), limits: limits)
    }

    // MARK: - What it reads

    @Test func elementsAttributesTextAndSelfClosingTags() throws {
        let tree = try Self.read("""
            <MPD a="1" b='two "quoted"' c="it's">
              <Period id="p"/>
              before<Empty></Empty>between<Period id='q' >inner</Period >after
            </MPD>
            """)
        let root = tree.root
        #expect(root.name == "MPD" && root.localName == "MPD" && root.prefix == nil && root.namespaceURI == nil && root.line == 1 && root.offset == 0)
        #expect(root.attributes.map(\.name) == ["a", "b", "c"], "document order")
        #expect(root.attributes.map(\.value) == ["1", "two \"quoted\"", "it's"])
        #expect(root[attribute: "b"] == "two \"quoted\"" && root[attribute: "z"] == nil)
        #expect(root.children.map(\.name) == ["Period", "Empty", "Period"])
        #expect(root.children.map { $0[attribute: "id"] } == ["p", nil, "q"])
        #expect(root.children.map(\.line) == [2, 3, 3])
        #expect(root.children[0].children.isEmpty && root.children[0].text.isEmpty && root.children[1].text.isEmpty)
        #expect(root.children[2].text == "inner")
        #expect(root.text == "\n  \n  beforebetweenafter\n", "the element's own text, concatenated; not its children's")
    }

    @Test func entitiesAndCharacterReferences() throws {
        let tree = try Self.read("<a v=\"&lt;&gt;&amp;&apos;&quot;&#65;&#x42;&#x1F600;&#10;&#9;&#13;\">&lt;b&gt; &amp;amp; &#x20AC;&#8364;&apos;&quot;</a>")
        #expect(tree.root[attribute: "v"] == "<>&'\"AB😀\n\t\r", "references in values are kept (3.3.3 normalizes only written white space)")
        #expect(tree.root.text == "<b> &amp; €€'\"")
        for (bad, what) in [("&#0;", "a character XML does not allow"), ("&#xD800;", "a character XML does not allow"),
                            ("&#x110000;", "a character XML does not allow"), ("&#xFFFE;", "a character XML does not allow"),
                            ("&#99999999999999999999;", "a character XML does not allow"), ("&#1;", "a character XML does not allow"),
                            ("&#;", "is malformed"), ("&#x;", "is malformed"), ("&#12a;", "is malformed"), ("&#X41;", "is malformed"),
                            ("&nbsp;", "&nbsp; is not declared"), ("& x", "does not start a reference"), ("&amp", "does not start a reference")] {
            for text in ["<a>\n\(bad)</a>", "<a\nv=\"\(bad)\"/>"] {
                let refused = Self.refusal(text)
                #expect(refused?.syntax?.line == 2 && refused?.error.description.contains(what) == true, "\(text.debugDescription): \(String(describing: refused?.error))")
            }
        }
    }

    @Test func lineEndsAndAttributeWhiteSpace() throws {
        let tree = try Self.read("<a v=\"x\r\ny\tz\nw\rv\">1\r\n2\r3\n<b/>\r\n</a>")
        #expect(tree.root[attribute: "v"] == "x y z w v", "2.11 then 3.3.3: each written line end or tab is one space")
        #expect(tree.root.text == "1\n2\n3\n\n", "CR LF and CR read as LF")
        #expect(tree.root.children.first?.line == 7, "CR LF, CR and LF each end a line, in values as in text")
    }

    @Test func cdataCommentsAndProcessingInstructions() throws {
        let tree = try Self.read("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <!-- before -->
            <?stylesheet href="x"?>
            <a><!-- <b/> & --><![CDATA[<b>&amp;]]]]><![CDATA[>]]><?pi <c/> ?>x<?p?></a>
            <!-- after --><?after?>\u{20}
            """)
        #expect(tree.root.children.isEmpty)
        #expect(tree.root.text == "<b>&amp;]]>x", "CDATA as written; comments and PIs skipped")
        #expect(tree.root.line == 4)
        for (text, what, line) in [("<a>\n<!-- x -- y --></a>", "'--' inside a comment", 2), ("<a><!-- x ---></a>", "'--' inside a comment", 1),
                                   ("<?xml version=\"1.0\"?><?XmL x?><a/>", "an XML declaration ('<?xml') after the start", 1),
                                   ("\n<?xml version=\"1.0\"?><a/>", "an XML declaration ('<?xml') after the start", 2),
                                   ("<?xml version=\"2.0\"?><a/>", "not 1.x", 1), ("<?xml encoding=\"UTF-8\"?><a/>", "in that order", 1),
                                   ("<?xml version=\"1.0\" standalone=\"maybe\"?><a/>", "not yes or no", 1),
                                   ("<?xml version=\"1.0\"><a/>", "not closed", 1), ("<a><?pi x</a>", "processing instruction that starts here is not closed", 1),
                                   ("<a>\n\n<![CDATA[ x ]]</a>", "CDATA section that starts here is not closed", 3),
                                   ("<a>\n<!-- x </a>", "comment that starts here is not closed", 2), ("<a>]]></a>", "']]>' in text", 1)] {
            let refused = Self.refusal(text)
            #expect(refused?.syntax?.line == line && refused?.error.description.contains(what) == true, "\(text.debugDescription): \(String(describing: refused?.error))")
        }
    }

    @Test func doctypeIsSkippedAndEntityDeclarationsAreRefused() throws {
        let skipped = [
            "<!DOCTYPE MPD><MPD/>",
            "<!DOCTYPE MPD SYSTEM \"mpd.dtd\"><MPD/>",
            "<!DOCTYPE MPD PUBLIC \"-//x//y\" 'a[b]>c.dtd'><MPD/>",
            """
            <?xml version="1.0"?>
            <!DOCTYPE MPD [
              <!ELEMENT MPD (Period)*>
              <!ATTLIST MPD type CDATA "a > b ] c" id ID #IMPLIED>
              <!NOTATION n SYSTEM "x>y">
              <!-- <!ENTITY in a comment> -->
              <?pi <!ENTITY?>
            ]>
            <MPD/>
            """,
        ]
        for text in skipped {
            #expect(try Self.read(text).root.name == "MPD", "\(text.debugDescription)")
        }
        let refused = Self.refusal("<?xml version=\"1.0\"?>\n<!DOCTYPE MPD [\n<!ENTITY a \"b\">]><MPD>&a;</MPD>")
        #expect(refused?.syntax?.kind == .entityDeclaration && refused?.syntax?.line == 3, "\(String(describing: refused?.error))")
        #expect(refused?.error.description.contains("an entity declaration (<!ENTITY)") == true)
        // A billion laughs never gets as far as a reference.
        let laughs = "<!DOCTYPE lolz [<!ENTITY lol \"lol\">" + (1...9).map { "<!ENTITY lol\($0) \"" + String(repeating: "&lol\($0 - 1);", count: 10) + "\">" }.joined()
            + "]><lolz>&lol9;</lolz>"
        #expect(Self.refusal(laughs)?.syntax?.kind == .entityDeclaration)
        for (text, what, line) in [("<!DOCTYPE MPD [\n%pe;]><MPD/>", "parameter-entity reference", 2),
                                   ("<!DOCTYPE MPD [<!ATTLIST MPD a CDATA %pe;>]><MPD/>", "parameter-entity reference", 1),
                                   ("<!DOCTYPE MPD [\n<!ELEMENT MPD ANY>\n", "internal subset that starts here is not closed", 1),
                                   ("<!DOCTYPE MPD SYSTEM \"x.dtd\"", "DOCTYPE that starts here is not closed", 1),
                                   ("<!DOCTYPE MPD [<!FOO>]><MPD/>", "where a declaration is expected", 1),
                                   ("<!DOCTYPE MPD><!DOCTYPE MPD><MPD/>", "a second DOCTYPE", 1), ("<MPD/>\n<!DOCTYPE MPD>", "a DOCTYPE after the root", 2),
                                   ("<MPD>\n<!DOCTYPE MPD></MPD>", "only a comment or CDATA section", 2), ("<!DOCTYPE>", "root element's name", 1)] {
            let refused = Self.refusal(text)
            #expect(refused?.syntax?.kind == .malformed && refused?.syntax?.line == line && refused?.error.description.contains(what) == true,
                    "\(text.debugDescription): \(String(describing: refused?.error))")
        }
    }

    @Test func namespacesResolveAndPrefixesStayAsWritten() throws {
        let tree = try Self.read("""
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" xmlns:cenc="urn:mpeg:cenc:2013" cenc:x="1" y="2">
              <cenc:pssh xml:lang="en">AAAA</cenc:pssh>
              <Other xmlns="urn:other" xmlns:cenc="urn:again"><cenc:a/></Other>
              <Plain xmlns=""/>
              <b:c xmlns:b="urn:b" b:d="" />
            </MPD>
            """)
        let root = tree.root
        #expect(root.namespaceURI == "urn:mpeg:dash:schema:mpd:2011")
        #expect(root.attributes.map(\.name) == ["xmlns", "xmlns:cenc", "cenc:x", "y"], "namespace declarations are attributes as written")
        #expect(root.attributes.map(\.namespaceURI) == [nil, nil, "urn:mpeg:cenc:2013", nil], "an unprefixed attribute is in no namespace")
        let pssh = root.children[0]
        #expect(pssh.name == "cenc:pssh" && pssh.localName == "pssh" && pssh.prefix == "cenc" && pssh.namespaceURI == "urn:mpeg:cenc:2013" && pssh.text == "AAAA")
        #expect(pssh.attributes.first?.namespaceURI == Tree.xmlNamespace && pssh.attributes.first?.localName == "lang")
        #expect(root.children[1].namespaceURI == "urn:other" && root.children[1].children.first?.namespaceURI == "urn:again", "the innermost declaration")
        #expect(root.children[2].namespaceURI == nil, "xmlns=\"\" undeclares the default namespace")
        #expect(root.children[3].namespaceURI == "urn:b" && root.children[3].attributes.last?.namespaceURI == "urn:b")
        for (text, what) in [("<a>\n<x:b/></a>", "the prefix x of <x:b> is not declared"), ("<a>\n<b x:c=\"1\"/></a>", "the prefix x of the attribute x:c"),
                             ("<a><b xmlns:p=\"u\"/>\n<p:b/></a>", "prefix p of <p:b>"),
                             ("<a xmlns:p=\"u\" xmlns:q=\"u\">\n<b p:c=\"1\" q:c=\"2\"/></a>", "two attributes named c in the namespace u"),
                             ("<a>\n<b xmlns:p=\"\"/></a>", "empty namespace name"), ("<a>\n<b xmlns:xml=\"urn:x\"/></a>", "reserves"),
                             ("<a>\n<b:c:d/></a>", "is not a qualified name"), ("<a>\n<:b/></a>", "is not a qualified name")] {
            let refused = Self.refusal(text)
            #expect(refused?.syntax?.line == 2 && refused?.error.description.contains(what) == true, "\(text.debugDescription): \(String(describing: refused?.error))")
        }
        // Out of scope after its element: the first <p:b> reads, the second does not.
        #expect(Self.refusal("<a><c xmlns:p=\"u\"><p:b/></c>\n<p:b/></a>")?.syntax?.line == 2)
    }

    @Test func encodings() throws {
        #expect(try Tree(bytes: [0xEF, 0xBB, 0xBF] + Array("<?xml version=\"1.0\"?><a>é</a>".utf8)).root.text == "é", "a UTF-8 byte order mark is skipped")
        #expect(try Self.read("<?xml version='1.0' encoding='iso-8859-1'?><a>ascii</a>").root.text == "ascii", "ASCII under another name")
        #expect(try Self.read("<?xml version='1.0' encoding='us-ascii'?><a/>").root.name == "a")
        let utf16 = Array("<?xml version=\"1.0\"?><a/>".utf16)
        let little: [UInt8] = [0xFF, 0xFE] + utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let big: [UInt8] = [0xFE, 0xFF] + utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        for bytes: [UInt8] in [little, big, Array(little.dropFirst(2)), Array(big.dropFirst(2))] {
            let refused = Self.refusal(bytes)
            #expect(refused?.syntax?.kind == .encoding && refused?.error.description.contains("UTF-16") == true, "\(String(describing: refused?.error))")
        }
        #expect(Self.refusal([0x00, 0x00, 0xFE, 0xFF, 0, 0, 0, 0x3C])?.error.description.contains("UTF-32") == true)
        for (bytes, what, line) in [(Array("<a>\n".utf8) + [0xC3, 0x28] + Array("</a>".utf8), "not UTF-8", 2),
                                    (Array("<a>".utf8) + [0xC0, 0xAF] + Array("</a>".utf8), "not UTF-8", 1),
                                    (Array("<a>".utf8) + [0xED, 0xA0, 0x80] + Array("</a>".utf8), "not UTF-8", 1),
                                    (Array("<a>\n\n".utf8) + [0xE2, 0x82] + Array("</a>".utf8), "not UTF-8", 3),
                                    (Array("<?xml version='1.0' encoding='ISO-8859-1'?><a>".utf8) + [0xE9] + Array("</a>".utf8), "encoding ISO-8859-1", 1),
                                    (Array("<?xml version='1.0' encoding='Shift_JIS'?>\n<a/>".utf8), "encoding Shift_JIS", 1),
                                    (Array("<?xml version='1.0' encoding='UTF-16'?><a/>".utf8), "encoding UTF-16", 1)] {
            let refused = Self.refusal(bytes)
            #expect(refused?.syntax?.kind == .encoding && refused?.syntax?.line == line && refused?.error.description.contains(what) == true,
                    "\(String(describing: refused?.error))")
        }
        for (text, line) in [("<a>\n\u{0}</a>", 2), ("<a>\u{1}</a>", 1), ("<a>\u{FFFE}</a>", 1), ("<a/>\n\n\u{0}", 3)] {
            let refused = Self.refusal(text)
            #expect(refused?.syntax?.kind == .malformed && refused?.syntax?.line == line && refused?.error.description.contains("which XML does not allow") == true,
                    "\(text.debugDescription): \(String(describing: refused?.error))")
        }
    }

    // MARK: - Refusals

    @Test func refusalsNameTheLineAndWhatIsWrong() {
        for (text, what, line) in XMLFixtures.malformed {
            let refused = Self.refusal(text)
            #expect(refused?.error.code == .container, "\(text.debugDescription)")
            #expect(refused?.syntax?.kind == .malformed && refused?.syntax?.line == line, "\(text.debugDescription): \(String(describing: refused?.error))")
            #expect(refused?.error.description.contains(what) == true, "\(text.debugDescription): \(String(describing: refused?.error))")
            #expect(refused?.error.description.hasPrefix("XML line \(line), column ") == true, "\(String(describing: refused?.error))")
            #expect(refused?.error.offset == refused?.syntax.map { Int64($0.offset) }, "the byte offset as a value")
        }
        for text in ["", "   \n\t", "<?xml version=\"1.0\"?>", "<!-- only a comment -->\n"] {
            let refused = Self.refusal(text)
            #expect(refused?.syntax?.kind == .noRootElement && refused?.error.description.contains("no root element") == true, "\(text.debugDescription)")
        }
        // The column counts characters, not bytes.
        #expect(Self.refusal("<a>ééé</b>")?.syntax?.column == 7)
    }

    // MARK: - Limits

    @Test func limitsOnDepthElementsAndAttributes() throws {
        let deep = String(repeating: "<d>", count: 256) + String(repeating: "</d>", count: 256)
        #expect(try Self.read(deep).root.name == "d", "256 levels read")
        let deeper = "<r>\n" + String(repeating: "<d>", count: 256) + String(repeating: "</d>", count: 256) + "</r>"
        let refused = Self.refusal(deeper)
        #expect(refused?.syntax?.kind == .limit && refused?.syntax?.line == 2 && refused?.error.description.contains("more than 256 elements deep") == true,
                "\(String(describing: refused?.error))")
        // A hostile depth is refused at the limit, not followed.
        #expect(Self.refusal(String(repeating: "<d>", count: 1_000_000))?.syntax?.kind == .limit)

        let limits = Tree.Limits(depth: 4, elements: 10, attributes: 5)
        #expect(try Self.read("<a>" + String(repeating: "<b/>", count: 9) + "</a>", limits: limits).root.children.count == 9)
        #expect(Self.refusal("<a>" + String(repeating: "<b/>", count: 10) + "</a>", limits: limits)?.error.description.contains("more than 10 elements") == true)
        #expect(try Self.read("<a x='1' y='2'><b x='1' y='2' z='3'/></a>", limits: limits).root.children.count == 1)
        #expect(Self.refusal("<a x='1' y='2'><b x='1' y='2' z='3'/><c q=''/></a>", limits: limits)?.error.description.contains("more than 5 attributes") == true)
    }

    /// Long texts and many elements, attributes and declarations read in time linear in their
    /// size (a quadratic step would take minutes here).
    @Test(.hangGuard(minutes: 15)) func hostileShapesReadInLinearTime() throws {
        let clock = ContinuousClock()
        let megabytes = 4
        let shapes: [(String, [UInt8])] = [
            ("a long text", Array(("<a>" + String(repeating: "x&amp;\r\n", count: megabytes << 17) + "</a>").utf8)),
            ("a long attribute", Array(("<a v=\"" + String(repeating: "x&#65;\t", count: megabytes << 17) + "\"/>").utf8)),
            ("many siblings", Array(("<a>" + String(repeating: "<b/>", count: 200_000) + "</a>").utf8)),
            ("many attributes", Array(("<a " + (0..<100_000).map { "a\($0)=\"\"" }.joined(separator: " ") + "/>").utf8)),
            ("many declarations", Array(("<a " + (0..<50_000).map { "xmlns:p\($0)=\"u\($0)\"" }.joined(separator: " ") + ">"
                                         + (0..<50_000).map { "<p\($0):b/>" }.joined() + "</a>").utf8)),
            ("a long comment", Array(("<a><!--" + String(repeating: "- ", count: megabytes << 18) + "--></a>").utf8)),
            ("a long CDATA section", Array(("<a><![CDATA[" + String(repeating: "]] ]", count: megabytes << 16) + "]]></a>").utf8)),
            ("a long name", Array(("<" + String(repeating: "n", count: megabytes << 20) + "/>").utf8)),
            ("an unclosed comment", Array(("<a><!--" + String(repeating: "-", count: 1) + String(repeating: "x", count: megabytes << 20)).utf8)),
            ("a long end-tag mismatch", Array(("<" + String(repeating: "n", count: 1 << 20) + ">" + "</" + String(repeating: "n", count: (1 << 20) - 1) + "m>").utf8)),
        ]
        for (what, bytes) in shapes {
            let start = clock.now
            _ = try? Tree(bytes: bytes)
            let elapsed = clock.now - start
            #expect(elapsed < .seconds(20), "\(what): \(elapsed)")
        }
        #expect(try Tree(bytes: shapes[3].1).root.attributes.count == 100_000)
        #expect(try Tree(bytes: shapes[4].1).root.children.last?.namespaceURI == "u49999")
    }
}
