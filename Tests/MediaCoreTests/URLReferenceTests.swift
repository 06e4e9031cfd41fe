import MediaCore
import Testing

@Suite("URLReference: the one URL parser under every destination")
struct URLReferenceTests {
    @Test("scheme, userinfo, host, port and what follows, as written")
    func parts() throws {
        let url = try URLReference("RTMP://user:p%40ss@live.example:1936/app/key?token=a@b#x")
        #expect(url.scheme == "rtmp")
        #expect(url.userInfo == "user:p%40ss")
        #expect(url.host == "live.example")
        #expect(url.port == 1936)
        #expect(url.authority == "live.example:1936")
        #expect(url.remainder == "/app/key?token=a@b#x")
        #expect(url.path == "/app/key")
        #expect(try URLReference("icecast://h/live#1").path == "/live#1", "# is the path's, as written")
        #expect(url.query == "token=a@b#x")
    }

    @Test("an @ past the authority is the path's, unless the userinfo runs to the last @")
    func userInfoLimit() throws {
        let key = try URLReference("rtmp://host/app/k@y")
        #expect(key.userInfo == nil)
        #expect(key.host == "host")
        #expect(key.path == "/app/k@y")
        let icecast = try URLReference("icecast://source:pa/ss?w@host:8000/live", options: .init(userInfoRunsToLastAt: true))
        #expect(icecast.userInfo == "source:pa/ss?w")
        #expect(icecast.host == "host")
        #expect(icecast.port == 8000)
        #expect(icecast.path == "/live")
    }

    @Test("IPv6 in brackets, without them")
    func ipv6() throws {
        let url = try URLReference("srt://[::1]:9000?streamid=#!::r=live")
        #expect(url.host == "::1")
        #expect(url.port == 9000)
        #expect(url.query == "streamid=#!::r=live")
        #expect(try URLReference("srt://[fe80::1]").port == nil)
        #expect(URLReference.bracketed("::1") == "[::1]")
        #expect(URLReference.bracketed("host") == "host")
    }

    @Test("problems", arguments: [
        ("host/live/key", URLReference.Problem.notAURL),
        ("://host", .notAURL),
        ("rtmp:/host", .notAURL),
        ("srt://[::1:9000", .unclosedBracket),
        ("srt://host:0", .invalidPort),
        ("srt://host:65536", .invalidPort),
        ("srt://host:x", .invalidPort),
        ("srt://host:", .invalidPort),
        ("srt://host:+80", .invalidPort),
        ("srt://host:٣٣", .invalidPort),
        ("srt://[::1]x", .invalidPort),
    ])
    func problems(text: String, problem: URLReference.Problem) {
        #expect(throws: problem) { _ = try URLReference(text) }
    }

    @Test("strings of URL punctuation never trap, and what parses keeps its parts apart")
    func hostileStrings() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(":/?#@[]%.0123456789aZ-_ é")
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...24, using: &generator)
            let text = "srt://" + String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            guard let url = try? URLReference(text) else { continue }
            #expect(url.scheme == "srt")
            #expect(!url.host.contains("/") && !url.host.contains("?") && !url.host.contains("#"), "\(text)")
            #expect(url.port.map { (1...65_535).contains($0) } ?? true, "\(text)")
            #expect(url.userInfo.map { !$0.contains("/") && !$0.contains("?") && !$0.contains("#") } ?? true, "\(text)")
            #expect(text.hasSuffix(String(url.remainder)), "\(text)")
        }
    }
}
