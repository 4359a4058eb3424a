import Foundation
import AssetPacks
import AssetSystem
import AssetStore
import AssetArchive

/// `install`: indexing a pack of 100,000 stored members of 64–1024 B
/// (`--quick`: 10,000), in members per second, each round into a fresh
/// target that is removed afterwards (outside the timing).
///
/// - assetpacks: `installPack(at:)` into a new container: copy into
///   staging, check the ZIP structure, every CRC-32 and the SHA-256, move
///   into `packs/`, index every member in one LMDB transaction, with syncs;
/// - files: extract every member to a file (from memory, no sync), as
///   `unzip` does;
/// - sqlite: insert every member into a new `sqlar` table (from memory) in
///   one transaction, with SQLite's default journal and syncs;
/// - lmdb-raw: put every member under its path (from memory) in one
///   transaction, synced on commit.
///
/// The peers start from bytes in memory and check nothing; AssetPacks starts
/// from the pack file and checks everything.
enum InstallScenario {
    static let scenario = Scenario(
        "install", "install (index) a 100,000-member pack, members/s"
    ) { ctx in [try run(ctx)] }

    static func run(_ ctx: Context) throws -> ScenarioResult {
        let n = ctx.scale.installMembers
        let members = MemberSet(count: n, sizes: 64 ... 1024, content: .random, seed: 0x1A57, ext: "bin")
        let dir = ctx.workspace.root + "/install-\(n)"
        let zipPath = dir + "/pack.zip"
        try ctx.workspace.fill(dir, label: "a pack of \(Format.count(n)) members for installing") {
            try ArchiveWriter.write((0 ..< n).map {
                ArchiveWriter.Member(path: members.paths[$0], source: .bytes(members.bytes($0)), compression: .stored)
            }, to: zipPath)
        }
        let bytes = (0 ..< n).map { members.bytes($0) }
        let keys = members.paths.map { Array($0.utf8) }
        let directories = members.directories
        let scratch = dir + "/target"
        let total = Double(members.totalBytes)

        let all: [(String, () throws -> Double)] = [
            ("assetpacks", {
                let manager = try AssetPackManager(container: .init(path: scratch))
                return try timed { try manager.installPack(at: zipPath, id: "bench.install") }
            }),
            ("files", {
                try timed {
                    for d in directories { try FileManager.default.createDirectory(atPath: scratch + "/" + d, withIntermediateDirectories: true) }
                    for i in 0 ..< n { try bytes[i].withUnsafeBytes { try writeFile(scratch + "/" + members.paths[i], $0) } }
                }
            }),
            ("sqlite", {
                try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
                return try timed {
                    try SQLiteArchive.create(at: scratch + "/sqlar.db", count: n, durable: true) { i, insert in
                        try bytes[i].withUnsafeBytes { try insert(members.paths[i], members.sizes[i], $0) }
                    }
                }
            }),
            ("lmdb-raw", {
                try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
                return try timed {
                    try RawLMDB.create(at: scratch, mapSize: members.totalBytes * 3 + (64 << 20), count: n, durable: true) { i, put in
                        try keys[i].withUnsafeBytes { k in try bytes[i].withUnsafeBytes { try put(k, $0) } }
                    }
                }
            }),
        ]
        let contenders = all.filter { ctx.scale.only?.contains($0.0) ?? true }
        let seconds = try Passes.run(contenders.map { c in
            (c.0, {
                try? FileManager.default.removeItem(atPath: scratch)
                defer { try? FileManager.default.removeItem(atPath: scratch) }
                return try c.1()
            })
        }, rounds: ctx.scale.installRounds)
        let measured = Passes.measurements(names: contenders.map(\.0), seconds: seconds, units: n, bytes: total)
        return ScenarioResult(
            name: "install",
            summary: "install a pack of \(Format.count(n)) stored members of 64–1024 B (\(Format.count(members.totalBytes >> 20)) MiB); "
                + "ops/s are members/s, p50/p99 the time per member in the median and the slowest of \(ctx.scale.installRounds) rounds",
            measurements: measured, basis: .throughput,
            notes: ["AssetPacks installs from the pack file and checks every CRC-32 and the SHA-256, with syncs; "
                    + "the peers write bytes already in memory and check nothing (files: no sync)."])
    }
}

/// Runs `body` and returns how long it took, in seconds.
func timed(_ body: () throws -> Void) throws -> Double {
    let start = Clock.now()
    try body()
    return Double(Clock.now() &- start) / 1e9
}
