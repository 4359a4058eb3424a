import Foundation
import Testing
import TestSupport

/// A piece map is parsed in memory of about its size, in a process of its
/// own (`assetpack-testhelper piece-map-peak`, which reads `VmHWM`): the
/// JSON values of its members are never held all at once. A 62 MB map
/// added 324 MB to the peak before (5.2 times its size), 98 MB now (1.6).
@Suite(.enabled(if: Program.available("python3"))) struct PieceMapMemoryTests {
    /// Writes a valid piece map of `count` members (some 218 bytes each) to `path`.
    static func writeMap(count: Int, to path: String) throws {
        let script = """
            import json, sys
            n, out, sha, off, members = int(sys.argv[1]), sys.argv[2], "ab" * 32, 100, []
            for i in range(n):
                size = 1000 + i % 7
                members.append({"crc32": 3735928559, "length": size * 3, "method": 8, "offset": off, "sha256": sha, "size": size,
                                "path": "assets/levels/world-%06d/textures/diffuse-%06d.ktx2" % (i // 100, i)})
                off += size + 120
            total = off + 5000
            glue = total - sum(m["size"] for m in members)
            doc = {"format": 1, "glue": {"sha256": sha, "size": glue, "url": "P.zip.glue"}, "members": members,
                   "pack": "P", "sha256": sha, "size": total, "version": 1}
            open(out, "w").write(json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\\n")
            """
        let r = try Program.run("python3", ["-c", script, String(count), path])
        guard r.status == 0 else { throw TestFailure("python: \(r.stderr)") }
    }

    @Test func aLargePieceMapParsesInLessThanTwiceItsSize() throws {
        let dir = TemporaryDirectory("piece-map-memory")
        let path = dir.file("map.pieces")
        try Self.writeMap(count: 100_000, to: path)
        let r = try Helper.run(["piece-map-peak", "--file", path])
        #expect(r.status == 0, "\(r.stderr)")
        let report = jsonObject(r.out)
        let members = try #require(report["members"] as? Int)
        let mapBytes = try #require(report["mapBytes"] as? Int)
        let added = try #require(report["addedKiB"] as? Int)
        #expect(members == 100_000)
        // Before: 5.2 times the map; the members themselves are some 1.2 times it.
        #expect(added * 1024 < 2 * mapBytes, "the parse added \(added) KiB for a \(mapBytes)-byte map")
    }
}
