/// A day of the proleptic Gregorian calendar and its count of days since 1970-01-01, for the
/// dates KeyFrameKit writes and reads (RFC 3339 in playlists, RFC 9110's IMF-fixdate in HTTP)
/// without Foundation. Howard Hinnant's `civil_from_days` and `days_from_civil`.
package struct CivilDate: Sendable, Hashable {
    /// The year.
    package var year: Int64
    /// The month, 1 to 12.
    package var month: Int64
    /// The day of the month, from 1.
    package var day: Int64

    /// The date `days` after 1970-01-01 (before it when negative).
    package init(daysSince1970 days: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// The date `year`-`month`-`day` (the month 1 to 12, the day from 1), not checked.
    package init(year: Int64, month: Int64, day: Int64) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The days from 1970-01-01 to this date (negative before it).
    package var daysSince1970: Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// An HTTP date in the IMF-fixdate form (RFC 9110 5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
package enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The date `seconds` after 1970-01-01 00:00:00 UTC.
    package static func imfFixdate(_ seconds: Int64) -> String {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - days * 86400
        let date = CivilDate(daysSince1970: days)
        let weekday = Int((days % 7 + 7 + 4) % 7)   // 1970-01-01 was a Thursday
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[weekday]), \(two(date.day)) \(months[Int(date.month) - 1]) \(date.year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60)) GMT"
    }

    /// The seconds since 1970-01-01 00:00:00 UTC of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
    /// GMT`); `nil` for any other text (the obsolete RFC 850 and asctime forms included).
    package static func seconds(imfFixdate text: String) -> Int64? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[0].count == 4, fields[0].hasSuffix(","), weekdays.contains(String(fields[0].dropLast())),
              fields[1].count == 2, let day = Int64(fields[1]), let month = months.firstIndex(of: String(fields[2])),
              fields[3].count == 4, let year = Int64(fields[3]), fields[5] == "GMT" else { return nil }
        let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int64(clock[0]), let minute = Int64(clock[1]),
              let second = Int64(clock[2]), (1...31).contains(day), hour < 24, minute < 60, second <= 60 else { return nil }
        let days = CivilDate(year: year, month: Int64(month) + 1, day: day).daysSince1970
        return days * 86400 + hour * 3600 + minute * 60 + second
    }
}
