import MediaCore
@testable import ObjectStorage
import Testing

/// What an HTTP ingest store makes of its URL: the secrets masked in its description, HTTP
/// Basic as RFC 7617 writes it, a password refused in the clear to another machine, WebDAV's
/// schemes, and the objects' request paths.
@Suite struct HTTPIngestStoreTests {
    @Test func credentialsAreMaskedAndSentAsBasic() throws {
        let store = try HTTPIngestStore(url: "https://studio:s%40cret@ingest.example.com/live/show")
        #expect(store.description == "https://studio:****@ingest.example.com/live/show" && store.origin == "https://ingest.example.com")
        // RFC 7617 2: base64("studio:s@cret"), the percent-escape decoded.
        #expect(store.authorization == "Basic " + Base64.encode(Array("studio:s@cret".utf8)))
        let token = try HTTPIngestStore(url: "https://TOKEN123@ingest.example.com/x")
        #expect(token.description == "https://****@ingest.example.com/x" && token.authorization == "Basic " + Base64.encode(Array("TOKEN123:".utf8)))
        #expect(try HTTPIngestStore(url: "http://127.0.0.1:8080/in").authorization == nil)
    }

    @Test func aPasswordGoesInTheClearToThisMachineOnly() {
        for url in ["http://u:p@example.com/x", "http://u:p@127.0.0.1.example.com/x", "http://u:p@127.1/x", "http://u:p@10.0.0.1/x"] {
            #expect(throws: ObjectStoreError.self, "\(url)") { try HTTPIngestStore(url: url) }
        }
        for url in ["http://u:p@127.0.0.1:9/x", "http://u:p@localhost/x", "http://u:p@[::1]:9/x", "https://u:p@example.com/x"] {
            #expect(throws: Never.self, "\(url)") { try HTTPIngestStore(url: url) }
        }
    }

    @Test func webDAVSchemesAndPaths() throws {
        let dav = try HTTPIngestStore(url: "davs://cloud.example.com/remote.php/dav/files/me/")
        #expect(dav.makesCollections && dav.origin == "https://cloud.example.com" && dav.basePath == "/remote.php/dav/files/me")
        #expect(dav.path(of: "64k/segment 1.m4s") == "/remote.php/dav/files/me/64k/segment%201.m4s")
        #expect(try !HTTPIngestStore(url: "https://h/x").makesCollections)
        for url in ["ftp://h/x", "https://h/x?y=1", "https://h/a/../b", "dav://"] {
            #expect(throws: ObjectStoreError.self, "\(url)") { try HTTPIngestStore(url: url) }
        }
    }
}
