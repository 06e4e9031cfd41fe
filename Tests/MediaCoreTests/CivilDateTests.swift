import MediaCore
import Testing

/// Days since 1970 to a civil date and back, and RFC 9110's IMF-fixdate written and read.
@Suite struct CivilDateTests {
    @Test func daysRoundTripAcrossEraAndLeapYears() {
        for days in [-719_468, -1, 0, 59, 60, 10_957, 11_016, 20_788, 2_932_896] as [Int64] {
            let date = CivilDate(daysSince1970: days)
            #expect(CivilDate(year: date.year, month: date.month, day: date.day).daysSince1970 == days, "\(days)")
        }
        let leapDay = CivilDate(daysSince1970: 11_016)
        #expect(leapDay.year == 2000 && leapDay.month == 2 && leapDay.day == 29)
    }

    @Test func httpDatesAreIMFFixdates() {
        #expect(HTTPDate.imfFixdate(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.imfFixdate(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.imfFixdate(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDate.imfFixdate(1_795_651_200) == "Thu, 26 Nov 2026 00:00:00 GMT")
        for seconds in [0, 784_111_777, 951_782_400, 1_795_651_200, 1_796_131_799] as [Int64] {
            #expect(HTTPDate.seconds(imfFixdate: HTTPDate.imfFixdate(seconds)) == seconds)
        }
        // RFC 9110 5.6.7's obsolete forms, and near misses, are not IMF-fixdates.
        for text in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
                     "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT extra", ""] {
            #expect(HTTPDate.seconds(imfFixdate: text) == nil, "\(text)")
        }
    }
}
