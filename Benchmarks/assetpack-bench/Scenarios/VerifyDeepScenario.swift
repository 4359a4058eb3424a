import Foundation
import AssetPacks
import AssetSystem
import AssetStore
import AssetArchive

/// `verify-deep`: `verify --deep` of an installed container, against
/// `sha256sum` and `unzip -tqq` on the same archive files, in bytes of
/// archive per second, page cache warm.
///
/// - assetpacks: `AssetStore.verify(options: deep)` — every pack record, the
///   archive's structure, its SHA-256 (on a second thread) and every member's
///   CRC-32, inflating deflated members;
/// - sha256sum: coreutils hashing the same files (one process);
/// - unzip: Info-ZIP `unzip -tqq` on each archive (CRC-32 of every member,
///   inflating deflated ones), one process after another.
///
/// The container holds packs of stored media (random bytes) and deflated
/// text, 4 × 128 MiB (`--quick`: 2 × 16 MiB).
///
/// `verify-deep-1m`: the same of a container holding one pack of 1,000,000
/// stored members of 64–1024 B (`--quick`: 20,000), with the peak resident
/// set a verify added to the harness's own (`VmHWM`, reset before each round).
enum VerifyDeepScenario {
    static let scenario = Scenario(
        "verify-deep", "`verify --deep` of an installed container, against `sha256sum` and `unzip -t` on the same archives"
    ) { ctx in [try run(ctx)] }

    static let million = Scenario(
        "verify-deep-1m", "`verify --deep` of a 1,000,000-member pack, against `sha256sum` and `unzip -t`, and the verify's peak RSS"
    ) { ctx in [try runMillion(ctx)] }

    static func runMillion(_ ctx: Context) throws -> ScenarioResult {
        let n = ctx.scale.quick ? 20_000 : 1_000_000
        let dir = ctx.workspace.root + "/verify-members-\(n)"
        let container = GroupContainer(path: dir + "/container")
        try ctx.workspace.fill(dir, label: "a container of one \(Format.count(n))-member pack for verify") {
            let members = MemberSet(count: n, sizes: 64 ... 1024, content: .random, seed: 0x1A57, ext: "bin")
            let zip = dir + "/pack.zip"
            try ArchiveWriter.write((0 ..< n).map {
                ArchiveWriter.Member(path: members.paths[$0], source: .bytes(members.bytes($0)), compression: .stored)
            }, to: zip)
            try AssetPackManager(container: .init(path: container.path)).installPack(at: zip, id: "bench.verify-1m")
            try FileManager.default.removeItem(atPath: zip)
        }
        return try measure(ctx, container: container, name: "verify-deep-1m", rounds: ctx.scale.rounds ?? (ctx.scale.quick ? 2 : 3),
                           summary: "verify --deep of one pack of \(Format.count(n)) stored members of 64–1024 B")
    }

    static func run(_ ctx: Context) throws -> ScenarioResult {
        let packs = ctx.scale.quick ? 2 : 4
        let packBytes = ctx.scale.quick ? 16 << 20 : 128 << 20
        let dir = ctx.workspace.root + "/verify-\(packs)x\(packBytes >> 20)"
        let container = GroupContainer(path: dir + "/container")
        try ctx.workspace.fill(dir, label: "a container of \(packs) packs of \(packBytes >> 20) MiB for verify") {
            let manager = try AssetPackManager(container: .init(path: container.path))
            for p in 0 ..< packs {
                var members: [ArchiveWriter.Member] = []
                let media = MemberSet(count: packBytes * 3 / 4 / (4 << 20), sizes: (4 << 20) ... (4 << 20), content: .random,
                                      seed: 0x7E51 &+ UInt64(p), ext: "mp4")
                for i in 0 ..< media.count {
                    members.append(.init(path: "media/" + media.paths[i], source: .bytes(media.bytes(i)), compression: .stored))
                }
                let text = MemberSet(count: packBytes / 4 / (64 << 10), sizes: (32 << 10) ... (96 << 10), content: .text,
                                     seed: 0x7E52 &+ UInt64(p), ext: "json")
                for i in 0 ..< text.count {
                    members.append(.init(path: "text/" + text.paths[i], source: .bytes(text.bytes(i)), compression: .deflated))
                }
                let zip = dir + "/pack\(p).zip"
                try ArchiveWriter.write(members, to: zip)
                try manager.installPack(at: zip, id: "bench.verify\(p)")
                try FileManager.default.removeItem(atPath: zip)
            }
        }
        return try measure(ctx, container: container, name: "verify-deep", rounds: ctx.scale.quick ? 2 : 5,
                           summary: "verify --deep of \(packs) packs (3/4 stored media, 1/4 deflated text)")
    }

    /// Times `verify --deep` of `container` against `sha256sum` and `unzip -t` of its archives.
    static func measure(_ ctx: Context, container: GroupContainer, name: String, rounds: Int, summary: String) throws -> ScenarioResult {
        var storeOptions = AssetStore.Options()
        storeOptions.createsContainer = false
        let store = try AssetStore(container: container, options: storeOptions)
        let archives = FileManager.default.subpaths(atPath: container.packsPath)?.sorted().map { container.packsPath + "/" + $0 } ?? []
        let total = archives.reduce(0.0) { $0 + Double((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }

        var peak = 0
        let all: [(String, () throws -> Void)] = [
            ("assetpacks", {
                let before = PeakMemory.reset()
                let report = try store.verify(options: VerificationOptions(deep: true))
                peak = max(peak, PeakMemory.peak() - before)
                guard !report.hasErrors, report.bytesChecked > 0 else { throw BenchError.failed("verify found \(report.findings)") }
            }),
            ("sha256sum", { try Tool.run("sha256sum", archives) }),
            ("unzip", { for a in archives { try Tool.run("unzip", ["-tqq", a]) } }),
        ]
        let contenders = all.filter { ctx.scale.only?.contains($0.0) ?? true }
        for c in contenders { try c.1() }   // warm the page cache and the code
        let seconds = try Passes.run(contenders.map { c in (c.0, { try timed(c.1) }) }, rounds: rounds)
        let measured = Passes.measurements(names: contenders.map(\.0), seconds: seconds, units: 1, bytes: total)
        var notes = ["assetpacks checks each archive's SHA-256 and every member's CRC-32 (inflating deflated ones) and the index; "
                     + "sha256sum only hashes; unzip -t only checks CRC-32s."]
        if peak > 0 { notes.append("Peak resident set an assetpacks verify added (VmHWM over VmRSS before it): \(Format.fixed(Double(peak) / 1024, decimals: 1)) MiB.") }
        return ScenarioResult(
            name: name,
            summary: summary + ", \(Format.count(Int(total) >> 20)) MiB of archives, "
                + "page cache warm; ops are whole passes, p50/p99 over \(rounds) rounds",
            measurements: measured, basis: .throughput, notes: notes)
    }
}

/// Runs a program found on PATH, with output discarded; fails on a non-zero exit.
enum Tool {
    static func run(_ program: String, _ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = [program] + arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw BenchError.failed("\(program) exited with \(p.terminationStatus)") }
    }
}
