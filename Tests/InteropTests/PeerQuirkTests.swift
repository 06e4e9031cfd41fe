import Testing
import TestSupport

/// ``PeerQuirk`` (TestSupport) filters exactly its lines.
@Suite struct PeerQuirkTests {
    @Test func eachQuirkIsFilteredAndNothingElse() {
        let stderr = """
            [mov,mp4,m4a,3gp,3g2,mj2 @ 0x5633b4f80180] stream 0, timescale not set
            Unsupported codec with id 98314 for input stream 1
            [hls @ 0x55ef6eb93880] Attached picture on stream 1 has invalid size, ignoring
            [aac @ 0x55d0] Estimating duration from bitrate, this may be inaccurate
            Guessed Channel Layout for Input Stream #0.0 : stereo

            [aac @ 0x55d0] Number of bands (29) exceeds limit (28).
            """
        #expect(PeerQuirk.filter(stderr) == "[aac @ 0x55d0] Number of bands (29) exceeds limit (28).")
        #expect(PeerQuirk.filter(stderr, quirks: [.adtsDurationEstimate]).split(separator: "\n").count == 5)
        #expect(PeerQuirk.filter("") == "")
    }
}
