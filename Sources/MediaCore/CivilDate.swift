/// A day of the proleptic Gregorian calendar from a count of days since 1970-01-01, for the
/// dates KeyFrameKit writes (RFC 3339 in playlists, RFC 9110's IMF-fixdate in HTTP) without
/// Foundation. Howard Hinnant's `civil_from_days`.
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
}
