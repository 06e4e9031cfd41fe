import MediaStreaming
import Testing

/// Blocking playlist reloads are bounded (issue 23, item 4): at most
/// `LiveHLSPublication.maximumWaitingRequests` (4096) wait at once; the next is answered at once
/// as timed out, which the origin turns into 503 (not stored by caches). Once the held requests
/// are answered, requests wait again.
@Suite struct LiveHLSWaiterBoundTests {
    /// A live playlist of `segments` whose target duration is an hour: the origin would hold a
    /// request three of them, so a 503 within the test's time limit is a refusal, not a timeout.
    static func playlist(segments: Int) -> HLSMediaPlaylist {
        var list = LiveHLSPublicationTests.playlist(segments: segments, openParts: 0)
        list.targetHint = 3600
        return list
    }

    @Test(.timeLimit(.minutes(15)))
    func the4097thWaiterIsAnswered503AtOnce() async throws {
        let bound = LiveHLSPublication.maximumWaitingRequests
        #expect(bound == 4096)
        let publication = LiveHLSPublication()
        let origin = HLSOrigin(publication: publication, directory: FilePath("/nonexistent"))
        publication.publish(Self.playlist(segments: 2))
        try await withThrowingTaskGroup(of: LiveHLSPublication.Reload.self) { group in
            // 4096 requests for segment 2, which is being recorded: they wait. (Timeouts of an hour:
            // a request answered `.timedOut` within the test's limit was refused, not timed out.)
            for _ in 0..<bound {
                group.addTask { await publication.playlist(segment: 2, part: nil, timeout: .seconds(3600)) }
            }
            let clock = ContinuousClock()
            let start = clock.now
            while publication.waitingRequests < bound, clock.now - start < .seconds(60) { try await Task.sleep(for: .milliseconds(10)) }
            try #require(publication.waitingRequests == bound, "\(publication.waitingRequests) waiting")
            // One more: answered at once, not held.
            #expect(await publication.playlist(segment: 2, part: nil, timeout: .seconds(3600)) == .timedOut)
            #expect(await publication.waitForPart(segment: 2, part: 0, timeout: .seconds(3600)) == false, "the preload hint's waiters are bounded too")
            let refused = await origin.respond(to: .init(path: ["index.m3u8"], query: ["_HLS_msn": "2"]))
            #expect(refused.status == 503 && refused.header("Cache-Control")?.contains("no-store") == true, "\(refused.status) \(refused.headers)")
            #expect(publication.waitingRequests == bound)
            // Segment 2 is published: every held request gets the playlist.
            publication.publish(Self.playlist(segments: 3))
            var ready = 0
            for try await answer in group { if case .ready = answer { ready += 1 } }
            #expect(ready == bound)
        }
        #expect(publication.waitingRequests == 0)
        // The room is free again: a request waits, and is answered when its segment comes.
        async let held = publication.playlist(segment: 3, part: nil, timeout: .seconds(3600))
        let clock = ContinuousClock()
        let start = clock.now
        while publication.waitingRequests < 1, clock.now - start < .seconds(30) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(publication.waitingRequests == 1)
        publication.publish(Self.playlist(segments: 4))
        if case .ready = await held {} else { Issue.record("a request after the bound was freed") }
    }
}
