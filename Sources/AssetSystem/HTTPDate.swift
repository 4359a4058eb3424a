/// HTTP dates (RFC 9110 §5.6.7), in seconds since 1970 UTC, without the C
/// library's locale or time zone.
package enum HTTPDate {
    static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The civil date of `seconds` since 1970 UTC.
    struct Civil: Equatable {
        var year: Int64, month: Int, day: Int, hour: Int, minute: Int, second: Int, weekday: Int
    }

    static func civil(_ seconds: Int64) -> Civil {
        let dayNumber = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = Int(seconds - dayNumber * 86400)
        let (year, m, d) = CivilCalendar.date(fromDays: dayNumber)
        let month = Int(m), day = Int(d)
        let weekday = Int(((dayNumber % 7) + 11) % 7)  // 1970-01-01 was a Thursday (4)
        return Civil(year: year, month: month, day: day, hour: secondOfDay / 3600,
                     minute: secondOfDay / 60 % 60, second: secondOfDay % 60, weekday: weekday)
    }

    static func seconds(year: Int64, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64 {
        CivilCalendar.days(year: year, month: Int64(month), day: Int64(day)) * 86400 + Int64(hour * 3600 + minute * 60 + second)
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate).
    package static func format(_ seconds: Int64) -> String {
        let c = civil(seconds)
        return "\(days[c.weekday]), \(two(c.day)) \(months[c.month - 1]) \(c.year) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) GMT"
    }

    /// `06/Nov/1994:08:49:37 +0000`, as the common log format writes time.
    package static func logFormat(_ seconds: Int64) -> String {
        let c = civil(seconds)
        return "\(two(c.day))/\(months[c.month - 1])/\(c.year):\(two(c.hour)):\(two(c.minute)):\(two(c.second)) +0000"
    }

    /// Parses the three forms RFC 9110 §5.6.7 makes recipients accept:
    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`, years below 70 taken as 20xx) and
    /// asctime (`Sun Nov  6 08:49:37 1994`). `nil` for anything else, which
    /// makes a conditional field be ignored.
    package static func parse(_ text: String) -> Int64? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var day: Int?, month: Int?, year: Int64?, clock: [Int]?
        switch words.count {
        case 6 where words[5] == "GMT":
            // IMF-fixdate: day-name, DD Mon YYYY HH:MM:SS GMT
            guard days.contains(words[0]), words[1].count == 2, words[3].count == 4 else { return nil }
            (day, month, year, clock) = (Int(words[1]), months.firstIndex(of: words[2]), Int64(words[3]), time(words[4]))
        case 4 where words[3] == "GMT":
            // RFC 850: day-name-l, DD-Mon-YY HH:MM:SS GMT
            let parts = words[1].split(separator: "-").map(String.init)
            guard longDays.contains(words[0]), parts.count == 3, parts[0].count == 2, parts[2].count == 2,
                  let yy = Int64(parts[2]) else { return nil }
            (day, month, year, clock) = (Int(parts[0]), months.firstIndex(of: parts[1]), yy < 70 ? 2000 + yy : 1900 + yy, time(words[2]))
        case 5:
            // asctime: day-name Mon D HH:MM:SS YYYY
            guard days.contains(words[0]), words[2].count <= 2, words[4].count == 4 else { return nil }
            (day, month, year, clock) = (Int(words[2]), months.firstIndex(of: words[1]), Int64(words[4]), time(words[3]))
        default:
            return nil
        }
        return assemble(day: day, month: month, year: year, clock: clock)
    }

    /// `HH:MM:SS` as three numbers.
    private static func time(_ text: String) -> [Int]? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }) else { return nil }
        let numbers = parts.compactMap { Int($0) }
        return numbers.count == 3 ? numbers : nil
    }

    private static func assemble(day: Int?, month: Int?, year: Int64?, clock: [Int]?) -> Int64? {
        guard let day, let month, let year, let clock, (1...31).contains(day), (1970...9999).contains(year),
              clock[0] < 24, clock[1] < 60, clock[2] < 61 else { return nil }
        return seconds(year: year, month: month + 1, day: day, hour: clock[0], minute: clock[1], second: min(clock[2], 59))
    }
}
