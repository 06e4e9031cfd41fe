import MediaStreaming
import Testing

/// Blocking playlist reload as RFC 8216bis 6.2.5.2 has it: hold until the segment or part
/// exists, 400 for more than two segments ahead, 503 (a timeout) when it does not come.
@Suite struct LiveHLSPublicationTests {
    static func playlist(segments: Int, openParts: Int, ended: Bool = false) -> HLSMediaPlaylist {
        var list = HLSMediaPlaylist(mapURI: "init.mp4", segments: (0..<segments).map { .init(uri: "s\($0)", duration: 2) },
                                    playlistType: nil, isEnded: ended)
        list.partTarget = 0.5
        list.openParts = (0..<openParts).map { .init(uri: "p\($0)", duration: 0.5) }
        return list
    }

    @Test func requestsWaitForTheirPartAndTooFarAheadIsRefused() async throws {
        let publication = LiveHLSPublication()
        #expect(await publication.playlist(segment: nil, part: nil, timeout: .seconds(1)) == .notStarted)
        publication.publish(Self.playlist(segments: 2, openParts: 1))
        // Segment 1 and part 0 of segment 2 exist: at once.
        if case .ready = await publication.playlist(segment: 1, part: nil, timeout: .seconds(1)) {} else { Issue.record("segment 1") }
        if case .ready = await publication.playlist(segment: 2, part: 0, timeout: .seconds(1)) {} else { Issue.record("part 2.0") }
        // More than two segments past the last (segment 1): refused.
        #expect(await publication.playlist(segment: 4, part: nil, timeout: .seconds(1)) == .tooFarAhead)
        // The Advance Part Limit (RFC 8216bis 6.2.5.2): 3 ÷ PART-TARGET = 6 parts past the last
        // published (2.0) when PART-TARGET is 0.5 s; a part without a segment is refused too.
        #expect(await publication.playlist(segment: 2, part: 6, timeout: .milliseconds(200)) == .timedOut, "part 2.6 is 6 past 2.0: held")
        #expect(await publication.playlist(segment: 2, part: 7, timeout: .seconds(1)) == .tooFarAhead)
        // The next segment's parts count from the end of this one, as many parts as the most a
        // segment has (here 4): 3.2 is 2.0 + 3 + 3 = 6 parts ahead, 3.3 seven.
        var withParts = Self.playlist(segments: 2, openParts: 1)
        for index in 0..<2 { withParts.segments[index].parts = (0..<4).map { .init(uri: "s\(index).\($0)", duration: 0.5) } }
        publication.publish(withParts)
        #expect(await publication.playlist(segment: 3, part: 2, timeout: .milliseconds(200)) == .timedOut, "3.2: held")
        #expect(await publication.playlist(segment: 3, part: 3, timeout: .seconds(1)) == .tooFarAhead, "3.3 is 2.0 + 4 + 4")
        #expect(await publication.playlist(segment: nil, part: 0, timeout: .seconds(1)) == .tooFarAhead)
        publication.publish(Self.playlist(segments: 2, openParts: 1))
        // Part 2.1 comes later: the request is held, then answered with the new playlist.
        async let held = publication.playlist(segment: 2, part: 1, timeout: .seconds(120)) // generous: other suites may hold the threads
        try await Task.sleep(for: .milliseconds(200))
        publication.publish(Self.playlist(segments: 2, openParts: 2))
        guard case .ready(let text) = await held else { Issue.record("part 2.1 was not answered"); return }
        #expect(text.contains("URI=\"p1\""))
        // Nothing more comes: a timeout (the server's 503).
        #expect(await publication.playlist(segment: 3, part: 0, timeout: .milliseconds(300)) == .timedOut)
        // A part past the last of a whole segment is the first of the next: held.
        var whole = Self.playlist(segments: 3, openParts: 0)
        whole.segments[2].parts = [.init(uri: "a", duration: 0.5), .init(uri: "b", duration: 0.5)]
        publication.publish(whole)
        #expect(await publication.playlist(segment: 2, part: 5, timeout: .milliseconds(300)) == .timedOut, "part 2.5 is part 3.0, not yet there")
        if case .ready = await publication.playlist(segment: 2, part: 1, timeout: .seconds(1)) {} else { Issue.record("part 2.1 of a whole segment") }
        // A cancelled request stops waiting at once: the part it waited for, published after the
        // cancellation, does not answer it.
        let cancelled = Task { await publication.playlist(segment: 3, part: 1, timeout: .seconds(120)) }
        try await Task.sleep(for: .milliseconds(50))
        cancelled.cancel()
        publication.publish(Self.playlist(segments: 3, openParts: 2))
        #expect(await cancelled.value == .timedOut)
        // Once ended, every request is answered at once, its parameters ignored.
        publication.publish(Self.playlist(segments: 3, openParts: 0, ended: true))
        if case .ready = await publication.playlist(segment: 3, part: 2, timeout: .seconds(5)) {} else { Issue.record("an ended playlist") }
        if case .ready = await publication.playlist(segment: 40, part: nil, timeout: .seconds(5)) {} else { Issue.record("far ahead of an ended playlist") }
        if case .ready = await publication.playlist(segment: nil, part: 1, timeout: .seconds(5)) {} else { Issue.record("a part alone, ended") }
    }
}
