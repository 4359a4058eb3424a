import Foundation

/// What this process holds resident, from `/proc/self/smaps`.
public enum ResidentMemory {
    /// Kilobytes resident in this process's mappings of `file` (its path
    /// as the kernel shows it).
    public static func kilobytes(mapping file: String) throws -> Int {
        guard let smaps = FileHandle(forReadingAtPath: "/proc/self/smaps") else { throw CocoaError(.fileReadNoSuchFile) }
        defer { try? smaps.close() }
        let text = String(decoding: smaps.readDataToEndOfFile(), as: UTF8.self)
        var total = 0
        var inFile = false
        for line in text.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-"), line.split(separator: " ").count >= 5 {
                inFile = line.hasSuffix(" " + file)
            } else if inFile, line.hasPrefix("Rss:") {
                total += Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
            }
        }
        return total
    }

    /// The field `name` of `/proc/self/status` (`VmHWM:`, `VmRSS:`), in KiB; 0 when absent.
    public static func status(_ name: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}
