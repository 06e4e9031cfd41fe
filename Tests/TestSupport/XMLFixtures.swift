/// XML documents more than one test target reads.
public enum XMLFixtures {
    /// Malformed documents: the text, what the refusal says, its line. Python's expat refuses each
    /// of them too (KeyFrameKitTests' `XMLElementTreeAgainstExpatTests`).
    public static let malformed: [(text: String, what: String, line: Int)] = [
        ("<MPD>\n<Period>\n</MPD>", "the end tag </MPD> does not match the start tag <Period> of line 2", 3),
        ("<a>\n  <b></c>\n</a>", "the end tag </c> does not match the start tag <b> of line 2", 2),
        ("<a>\n<!-- no end", "the comment that starts here is not closed", 2),
        ("<a>\n<![CDATA[ no end", "the CDATA section that starts here is not closed", 2),
        ("<a\n b=\"no end/>", "the value of the attribute b of <a> is not closed", 2),
        ("<a b='1'\n c='x<y'/>", "a '<' in the value of the attribute c of <a>", 2),
        ("<a\n b='1' b='2'/>", "the attribute b appears twice in the start tag <a>", 2),
        ("<a/>\nstray", "text after the root element", 2),
        ("<a/>\n\n<b/>", "a second root element <b>", 3),
        ("not xml", "text before the root element", 1),
        ("\n<a>\n<b>\n", "the text ends inside <b> of line 3, which is not closed", 4),
        ("<a>&undefined;</a>", "the entity &undefined; is not declared", 1),
        ("<a>\n<b c='1'd='2'/></a>", "where a space, '>' or '/>' is expected", 2),
        ("<a b='1'c='2'/>", "where a space, '>' or '/>' is expected", 1),
        ("<a b=1/>", "where the value in quotes is expected", 1),
        ("<a b/>", "where '=' is expected", 1),
        ("<a>\n</a b>", "in the end tag </a>, where '>' is expected", 2),
        ("<a>\n<1/></a>", "where an element's name after '<' is expected", 2),
        ("<a\n", "the start tag <a> that starts here is not closed", 1),
        ("</a>", "before the root element", 1),
        ("<a/><!-- -- -->", "'--' inside a comment", 1),
    ]
}
