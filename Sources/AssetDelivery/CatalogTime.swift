import AssetSystem

/// A moment in a catalog: whole seconds since 1970-01-01T00:00:00Z, written
/// as RFC 3339 in UTC (`2026-12-01T09:30:00Z`).
///
/// Reading accepts `T` or `t`, `Z` or `z`, and a fraction of a second
/// (dropped: catalogs count whole seconds), years 0000–9999 and seconds
/// 00–59 (no leap second). Offsets other than `Z` are refused: catalog
/// times are UTC.
public struct CatalogTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds since the Unix epoch.
    public let seconds: Int64

    public init(seconds: Int64) {
        self.seconds = seconds
    }

    public static func < (a: CatalogTime, b: CatalogTime) -> Bool { a.seconds < b.seconds }

    /// `YYYY-MM-DDTHH:MM:SSZ`.
    public var description: String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        let (y, m, d) = CivilCalendar.date(fromDays: days)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let year = String(y)
        return String(repeating: "0", count: max(0, 4 - year.count)) + year
            + "-\(two(m))-\(two(d))T\(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60))Z"
    }

    /// Parses RFC 3339 UTC text; `nil` when it is not that.
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        guard b.count >= 20, b.count <= 40 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var n: Int64 = 0
            for i in range {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                n = n * 10 + Int64(b[i] - 0x30)
            }
            return n
        }
        guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] | 0x20 == UInt8(ascii: "t"),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19) else { return nil }
        var i = 19
        if b[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            guard i > start else { return nil }
        }
        guard i == b.count - 1, b[i] | 0x20 == UInt8(ascii: "z") else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 59 else { return nil }
        seconds = CivilCalendar.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
