import AssetArchive
import Foundation
import TestSupport

/// Raw deflate by way of the writer: a member forced to deflate, read back.
enum Deflate {
    static func raw(_ bytes: [UInt8]) -> [UInt8] {
        let directory = TemporaryDirectory()
        let path = directory.file("deflate.zip")
        do {
            let archive = try ArchiveWriter.write(
                [.init(path: "x", source: .bytes(bytes), compression: .deflated)], to: path)
            let file = try directory.read("deflate.zip")
            let entry = archive.entries[0]
            return Array(file[Int(entry.dataOffset) ..< Int(entry.dataOffset + entry.compressedSize)])
        } catch {
            fatalError("deflate helper: \(error)")
        }
    }
}

/// Parses `bytes` as an archive named "t.zip".
func parse(_ bytes: [UInt8]) throws(ArchiveError) -> ZipArchive {
    try bytes.withUnsafeBytes { b in Result { () throws(ArchiveError) in try ZipArchive.parse(b, name: "t.zip") } }.get()
}

/// The error parsing `bytes` as "t.zip" throws, or `nil`.
func parseError(_ bytes: [UInt8]) -> ArchiveError? {
    do { _ = try parse(bytes); return nil } catch { return error }
}

/// Extracts every member of the archive `bytes` with `extract`, by path.
func extractAll(_ bytes: [UInt8], name: String = "t.zip") throws -> [String: [UInt8]] {
    try bytes.withUnsafeBytes { b in
        let archive = try ZipArchive.parse(b, name: name)
        var result: [String: [UInt8]] = [:]
        for entry in archive.entries { result[entry.path] = try ZipArchive.extract(entry, from: b, archive: name) }
        return result
    }
}

/// Compressible text: numbered lines.
func text(lines: Int) -> [UInt8] {
    Array((0 ..< lines).map { "line \($0): the quick brown fox jumps over the lazy dog\n" }.joined().utf8)
}

/// Little-endian appends for building bytes by hand.
extension Array where Element == UInt8 {
    mutating func append16(_ v: UInt16) { append(UInt8(v & 0xff)); append(UInt8(v >> 8)) }
    mutating func append32(_ v: UInt32) { for s in stride(from: 0, to: 32, by: 8) { append(UInt8((v >> UInt32(s)) & 0xff)) } }
    mutating func append64(_ v: UInt64) { for s in stride(from: 0, to: 64, by: 8) { append(UInt8((v >> UInt64(s)) & 0xff)) } }
    func u16(_ o: Int) -> UInt16 { UInt16(self[o]) | UInt16(self[o + 1]) << 8 }
    func u32(_ o: Int) -> UInt32 { (0 ..< 4).reduce(0) { $0 | UInt32(self[o + $1]) << (8 * UInt32($1)) } }
}

/// Directory listings for tests that check what the writer leaves behind.
enum FileManagerList {
    static func names(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
}
