import Dispatch
import MediaCore
import Testing

/// `Duration` in the units the system calls take, written once.
@Suite struct DurationUnitsTests {
    @Test func unitsTruncateTowardZeroAndSaturate() {
        let value = Duration.seconds(2) + .nanoseconds(1_500_001)
        #expect(value.inNanoseconds == 2_001_500_001)
        #expect(value.inMilliseconds() == 2001 && value.inMilliseconds(roundingUp: true) == 2002)
        #expect(Duration.milliseconds(7).inMilliseconds(roundingUp: true) == 7, "a whole millisecond is not rounded up")
        #expect(value.secondsAndNanoseconds == (2, 1_500_001))
        #expect(abs(value.inSeconds - 2.001500001) < 1e-12)
        #expect(Duration.milliseconds(-1500).inMilliseconds() == -1500 && Duration.milliseconds(-1500).inNanoseconds == -1_500_000_000)
        #expect(Duration.seconds(Int64.max).inNanoseconds == .max && Duration.seconds(Int64.min).inNanoseconds == .min)
        #expect(Duration.seconds(Int64.max).inMilliseconds(roundingUp: true) == .max)
    }

    @Test func aSemaphoreWaitsAtMostTheDuration() {
        let semaphore = DispatchSemaphore(value: 0)
        #expect(semaphore.wait(for: .milliseconds(-5)) == .timedOut, "a negative wait does not wait")
        #expect(semaphore.wait(for: .milliseconds(20)) == .timedOut)
        semaphore.signal()
        #expect(semaphore.wait(for: .seconds(Int64.max)) == .success, "a wait past any deadline still takes a signal")
    }
}

/// Percent-encoding (RFC 3986 2.1), decoded once for every URL parser.
@Suite struct PercentEncodingTests {
    @Test func escapesDecodeAndInvalidOnesAreKeptOrRefused() {
        #expect(PercentEncoding.decoded("a%20b%2Fc%e2%82%AC") == "a b/c€")
        #expect(PercentEncoding.decoded("100%") == "100%" && PercentEncoding.decoded("%zz%4") == "%zz%4")
        #expect(PercentEncoding.decoded("%+1") == "%+1", "a sign is not a hexadecimal digit")
        #expect(PercentEncoding.decoded("%ff") == "\u{FFFD}", "bytes that are not UTF-8 are replaced")
        #expect(PercentEncoding.decodedBytes("%41%42", invalid: .refused) == [0x41, 0x42])
        #expect(PercentEncoding.decodedBytes("%4", invalid: .refused) == nil && PercentEncoding.decodedBytes("%%41", invalid: .refused) == nil)
        #expect(PercentEncoding.decodedBytes("%%41") == Array("%A".utf8))
    }
}
