#if canImport(Glibc)
import Glibc
#endif

/// Human-readable numbers for the tables.
enum Format {
    /// A duration given in nanoseconds: `87 ns`, `1.24 µs`, `35.1 ms`, `2.03 s`.
    static func duration(_ ns: Double) -> String {
        if ns < 1_000 { return "\(Int(ns.rounded())) ns" }
        if ns < 1_000_000 { return significant(ns / 1_000) + " µs" }
        if ns < 1_000_000_000 { return significant(ns / 1_000_000) + " ms" }
        return significant(ns / 1_000_000_000) + " s"
    }

    /// A rate: `812`, `45.3 k`, `6.21 M`.
    static func rate(_ perSecond: Double) -> String {
        if perSecond < 1_000 { return significant(perSecond) }
        if perSecond < 1_000_000 { return significant(perSecond / 1_000) + " k" }
        return significant(perSecond / 1_000_000) + " M"
    }

    /// Bytes per second in binary units: `812 MiB/s`, `9.31 GiB/s`.
    static func bandwidth(_ bytesPerSecond: Double) -> String { bytes(bytesPerSecond) + "/s" }

    /// Bytes in binary units: `812 MiB`, `9.31 GiB`.
    static func bytes(_ count: Double) -> String {
        let mib = count / 1_048_576
        if mib < 1_024 { return significant(mib) + " MiB" }
        return significant(mib / 1_024) + " GiB"
    }

    /// A ratio: `12.4×`, `0.93×`.
    static func ratio(_ r: Double) -> String { significant(r) + "×" }

    /// Three significant digits, at most two decimals.
    static func significant(_ x: Double) -> String {
        let decimals = x >= 100 ? 0 : x >= 10 ? 1 : 2
        return fixed(x, decimals: decimals)
    }

    static func fixed(_ x: Double, decimals: Int) -> String {
        var scale = 1.0
        for _ in 0 ..< decimals { scale *= 10 }
        let n = Int((x * scale).rounded())
        if decimals == 0 { return String(n) }
        let sign = n < 0 ? "-" : ""
        let a = abs(n)
        let frac = String(a % Int(scale))
        return sign + String(a / Int(scale)) + "." + String(repeating: "0", count: decimals - frac.count) + frac
    }

    /// A count with thousands separators: `1,000,000`.
    static func count(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (i, ch) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return out
    }
}

/// Progress and diagnostics on standard error.
enum Log {
    static func info(_ message: String) {
        let line = message + "\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}
