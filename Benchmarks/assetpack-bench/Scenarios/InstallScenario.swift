import Foundation
import AssetPacks
import AssetSystem
import AssetStore
import AssetArchive
import CSched
import Synchronization

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
///
/// - assetpacks-update: the pack installed before the clock, then replaced
///   by its second version (``secondVersion(of:)``): the same checks, and
///   an index write that keeps, changes, adds and drops members.
///
/// `install-1m`: the same at 1,000,000 members (`--quick`: 20,000), without
/// the files peer (a million files measure the file system, not the
/// indexing), in fewer rounds; its notes give the peak resident set an
/// install added to the harness's own (`VmHWM`, reset before each round).
enum InstallScenario {
    static let scenario = Scenario(
        "install", "install (index) a 100,000-member pack, members/s"
    ) { ctx in [try run(ctx, members: ctx.scale.installMembers, name: "install")] }

    static let million = Scenario(
        "install-1m", "install (index) a 1,000,000-member pack, members/s, and the install's peak RSS"
    ) { ctx in [try run(ctx, members: ctx.scale.quick ? 20_000 : 1_000_000, name: "install-1m", files: false, rounds: ctx.scale.rounds ?? 2)] }

    static func run(_ ctx: Context, members n: Int, name: String, files: Bool = true, rounds: Int? = nil) throws -> ScenarioResult {
        let rounds = rounds ?? ctx.scale.installRounds
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

        let updateDir = dir + "-update"
        let updatePath = updateDir + "/pack.zip"
        try ctx.workspace.fill(updateDir, label: "version 2 of that pack: 1 % of members changed, 1 % dropped, 1 % added") {
            try ArchiveWriter.write(Self.secondVersion(of: members), to: updatePath)
        }

        var peaks = PeakMemory.Peaks()
        var updatePeaks = PeakMemory.Peaks()
        let all: [(String, () throws -> Double)] = [
            ("assetpacks", {
                let manager = try AssetPackManager(container: .init(path: scratch))
                return try PeakMemory.measure(into: &peaks) { try manager.installPack(at: zipPath, id: "bench.install") }
            }),
            ("assetpacks-update", {
                // Version 1 through a manager of its own, closed before the
                // clock: without a writable map, LMDB keeps the buffers of a
                // transaction's pages for the next one until its environment
                // closes, and the update would reuse them unseen.
                do { try AssetPackManager(container: .init(path: scratch)).installPack(at: zipPath, id: "bench.install") }
                let manager = try AssetPackManager(container: .init(path: scratch))
                return try PeakMemory.measure(into: &updatePeaks) { try manager.installPack(at: updatePath, id: "bench.install") }
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
        let contenders = all.filter { (files || $0.0 != "files") && (ctx.scale.only?.contains($0.0) ?? true) }
        let seconds = try Passes.run(contenders.map { c in
            (c.0, {
                try? FileManager.default.removeItem(atPath: scratch)
                defer { try? FileManager.default.removeItem(atPath: scratch) }
                return try c.1()
            })
        }, rounds: rounds)
        let measured = Passes.measurements(names: contenders.map(\.0), seconds: seconds, units: n, bytes: total)
        var notes = ["AssetPacks installs from the pack file and checks every CRC-32 and the SHA-256, with syncs; "
                     + "the peers write bytes already in memory and check nothing (files: no sync)."]
        if peaks.resident > 0 {
            notes.append("Peak resident set an assetpacks install added (VmHWM over VmRSS before it): \(Format.fixed(Double(peaks.resident) / 1024, decimals: 1)) MiB; "
                         + "of it anonymous memory (RssAnon, sampled every 5 ms): \(Format.fixed(Double(peaks.anonymous) / 1024, decimals: 1)) MiB. "
                         + "The rest is mapped file pages: the index's, written through its map, page cache the kernel may write back and reclaim.")
        }
        if updatePeaks.resident > 0 {
            notes.append("assetpacks-update replaces the installed pack (put in before the clock) with its second version, "
                         + "1 % of members changed, 1 % dropped and 1 % added; ops/s are the pack's members a second. "
                         + "Peak resident set it added: \(Format.fixed(Double(updatePeaks.resident) / 1024, decimals: 1)) MiB, "
                         + "of it anonymous: \(Format.fixed(Double(updatePeaks.anonymous) / 1024, decimals: 1)) MiB.")
        }
        return ScenarioResult(
            name: name,
            summary: "install a pack of \(Format.count(n)) stored members of 64–1024 B (\(Format.count(members.totalBytes >> 20)) MiB); "
                + "ops/s are members/s, p50/p99 the time per member in the median and the slowest of \(rounds) rounds",
            measurements: measured, basis: .throughput, notes: notes)
    }
}

extension InstallScenario {
    /// Version 2 of the pack of `members`: every hundredth member changed
    /// (its bytes inverted), the one after it dropped, and one new member
    /// for each hundred, at paths version 1 does not have.
    static func secondVersion(of members: MemberSet) -> [ArchiveWriter.Member] {
        var result: [ArchiveWriter.Member] = []
        result.reserveCapacity(members.count)
        for i in 0 ..< members.count where i % 100 != 1 {
            let bytes = i % 100 == 0 ? members.bytes(i).map { ~$0 } : members.bytes(i)
            result.append(ArchiveWriter.Member(path: members.paths[i], source: .bytes(bytes), compression: .stored))
        }
        for k in 0 ..< members.count / 100 {
            result.append(ArchiveWriter.Member(path: "added/\(k).bin", source: .bytes(members.bytes(k)), compression: .stored))
        }
        return result
    }
}

/// This process's peak resident set, from `/proc/self/status`.
enum PeakMemory {
    /// Resets the peak (`VmHWM`) to the current resident set (writing 5 to
    /// `/proc/self/clear_refs`) and returns that, in KiB. Free heap an
    /// earlier round left is given back first (`malloc_trim`): memory the
    /// measured work reused from it would not count.
    static func reset() -> Int {
        _ = csched_malloc_trim()
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        return field("VmRSS:")
    }

    /// The peak resident set (`VmHWM`) in KiB.
    static func peak() -> Int { field("VmHWM:") }

    /// The anonymous part of the resident set (`RssAnon`) in KiB.
    static func anonymous() -> Int { field("RssAnon:") }

    /// The most a measured run added, in KiB, over the rounds so far.
    struct Peaks {
        /// To the resident set (`VmHWM` over `VmRSS` before it).
        var resident = 0
        /// To anonymous memory (``AnonymousPeak``).
        var anonymous = 0
    }

    /// Runs `body` timed, from a reset peak, and raises `peaks` to what it added.
    static func measure(into peaks: inout Peaks, _ body: () throws -> Void) throws -> Double {
        let before = reset()
        let anonymous = AnonymousPeak()
        let seconds = try timed(body)
        peaks.resident = max(peaks.resident, peak() - before)
        peaks.anonymous = max(peaks.anonymous, anonymous.stop())
        return seconds
    }

    private static func field(_ name: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}

/// The most anonymous memory (`RssAnon` in `/proc/self/status`) this
/// process held above what it held at the start, sampled every 5 ms on a
/// thread of its own from ``init()`` to ``stop()``, in KiB. The kernel keeps
/// no peak of it (`VmHWM` counts mapped file pages too).
final class AnonymousPeak: @unchecked Sendable {
    // Unchecked: `peak` is written by the sampler only, and read after
    // `stop()` has joined it (the semaphore).
    private let baseline = PeakMemory.anonymous()
    private var peak = 0
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                peak = max(peak, PeakMemory.anonymous())
                usleep(5_000)
            }
            peak = max(peak, PeakMemory.anonymous())
            done.signal()
        }
        thread.start()
    }

    /// Stops sampling and returns the peak over the baseline, in KiB.
    func stop() -> Int {
        stopped.store(true, ordering: .relaxed)
        done.wait()
        return max(0, peak - baseline)
    }
}

/// Runs `body` and returns how long it took, in seconds.
func timed(_ body: () throws -> Void) throws -> Double {
    let start = Clock.now()
    try body()
    return Double(Clock.now() &- start) / 1e9
}
