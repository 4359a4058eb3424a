import Foundation
import AssetArchive
import AssetStore

/// The pack the stress and crash tests install in many versions. Every
/// member's bytes are a function of (version, path) and begin with the
/// version (8 bytes, little-endian), so a reader can tell which version any
/// bytes it got belong to, and check that they are all of that version.
enum StressPack {
    struct Member: Hashable {
        let path: String
        let size: Int
        let compression: ArchiveWriter.Compression
    }

    /// Members every version has: stored media (one page-aligned), deflated
    /// text, and a hundred tiny members that give the index some volume.
    static let common: [Member] = {
        var m = [
            Member(path: "media/big.bin", size: 200_000, compression: .stored),
            Member(path: "media/mid.bin", size: 70_000, compression: .stored),
            Member(path: "media/small.bin", size: 3_000, compression: .stored),
            Member(path: "text/a.txt", size: 50_000, compression: .deflated),
            Member(path: "text/b.json", size: 5_000, compression: .deflated),
        ]
        for i in 0..<100 { m.append(Member(path: String(format: "tiny/t%03d", i), size: 16 + i % 48, compression: .stored)) }
        return m
    }()

    /// The members of `version`: the common ones and some of its own, so an
    /// update also adds and drops paths.
    static func members(version: Int) -> [Member] {
        var m = common
        m.append(Member(path: "only/v\(version).txt", size: 1_000, compression: .deflated))
        for k in 0..<10 { m.append(Member(path: "only/v\(version)/\(k)", size: 20, compression: .stored)) }
        return m
    }

    /// The bytes of `member` in `version`.
    static func content(version: Int, member: Member) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(member.size)
        withUnsafeBytes(of: UInt64(version).littleEndian) { out.append(contentsOf: $0) }
        if member.compression == .deflated {
            var i = 0
            while out.count < member.size {
                out.append(contentsOf: "version \(version) of \(member.path), line \(i)\n".utf8)
                i += 1
            }
            out.removeSubrange(member.size...)
        } else {
            var x = seed(version, member.path)
            while out.count < member.size {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17
                out.append(UInt8(truncatingIfNeeded: x))
            }
        }
        return out
    }

    /// The version the bytes claim, from their first 8 bytes.
    static func claimedVersion(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 8 else { return nil }
        return Int(exactly: UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self)))
    }

    private static func seed(_ version: Int, _ path: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(version)
        for b in path.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h | 1
    }

    /// Writes `dir/v1.zip` … `dir/v<versions>.zip`, packs of `id`.
    static func write(dir: String, id: String, versions: Int) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let comment = PackDescription(id: id, downloadPolicy: .onDemand, platforms: [.linux]).archiveComment
        for v in 1...versions {
            let members = members(version: v).map {
                ArchiveWriter.Member(path: $0.path, source: .bytes(content(version: v, member: $0)), compression: $0.compression)
            }
            try ArchiveWriter.write(members, comment: comment, to: dir + "/v\(v).zip")
        }
    }

    /// Every (version, path) → bytes, for readers to compare against.
    static func expected(versions: Int) -> [Int: [String: [UInt8]]] {
        var table: [Int: [String: [UInt8]]] = [:]
        for v in 1...versions {
            for m in members(version: v) { table[v, default: [:]][m.path] = content(version: v, member: m) }
        }
        return table
    }
}
