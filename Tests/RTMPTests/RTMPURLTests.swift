import RTMP
import Testing

@Suite("RTMP URLs")
struct RTMPURLTests {
    @Test("app and key split as FFmpeg's rtmpproto.c does", arguments: [
        ("rtmp://host/live/key", "live", "key", "rtmp://host/live"),
        ("rtmp://host:1936/live/key", "live", "key", "rtmp://host:1936/live"),
        ("rtmp://host/app/instance/key", "app/instance", "key", "rtmp://host/app/instance"),
        ("rtmp://host/app/inst/a/b", "app/inst", "a/b", "rtmp://host/app/inst"),
        ("rtmp://host/app/mp4:dir/file", "app", "mp4:dir/file", "rtmp://host/app"),
        ("rtmp://host/live/key?token=abc&x=1", "live", "key?token=abc&x=1", "rtmp://host/live"),
        ("rtmp://a.rtmp.youtube.com/live2/xxxx-yyyy", "live2", "xxxx-yyyy", "rtmp://a.rtmp.youtube.com/live2"),
        ("rtmps://live-api-s.facebook.com:443/rtmp/FB-123?s_bl=1", "rtmp", "FB-123?s_bl=1", "rtmps://live-api-s.facebook.com:443/rtmp"),
        ("rtmp://[::1]:1935/live/key", "live", "key", "rtmp://[::1]:1935/live"),
        ("rtmp://host/ondemand/a/b", "ondemand", "a/b", "rtmp://host/ondemand"),
        ("RTMP://host/live/key", "live", "key", "rtmp://host/live"),
    ])
    func split(url: String, application: String, key: String, tcURL: String) throws {
        let parsed = try RTMPURL(url)
        #expect(parsed.application == application)
        #expect(parsed.streamKey == key)
        #expect(parsed.tcURL == tcURL)
        #expect(parsed.masked == "\(tcURL)/****")
        #expect(!parsed.masked.contains(key))
    }

    @Test("default ports: 1935 for rtmp, 443 for rtmps")
    func ports() throws {
        #expect(try RTMPURL("rtmp://h/a/k").port == 1935)
        #expect(try RTMPURL("rtmps://h/a/k").port == 443)
        #expect(try RTMPURL("rtmps://h/a/k").isSecure)
        #expect(try RTMPURL("rtmp://h:99/a/k").port == 99)
        #expect(try RTMPURL("rtmp://[::1]/a/k").host == "::1")
    }

    @Test("unusable URLs are refused with the key masked", arguments: [
        ("http://host/live/key", RTMPURL.Problem.unsupportedScheme),
        ("host/live/key", .unsupportedScheme),
        ("rtmp:///live/key", .noHost),
        ("rtmp://host:0/live/key", .invalidPort),
        ("rtmp://host:x/live/key", .invalidPort),
        ("rtmp://user:secret@host/live/key", .credentials),
        ("rtmp://host/live", .noStreamKey),
        ("rtmp://host/live/", .noStreamKey),
        ("rtmp://host", .noStreamKey),
        ("rtmp://host//secretkey", .noApplication),
    ])
    func refused(url: String, problem: RTMPURL.Problem) {
        do {
            _ = try RTMPURL(url)
            Issue.record("\(url) parsed")
        } catch {
            guard case .invalidURL(let masked, let found) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(found == problem)
            #expect(!masked.contains("secret"))
            #expect(!error.description.contains("secret"))
        }
    }
}
