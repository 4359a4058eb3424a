import Foundation
import AssetPacks
import AssetArchive

/// `large-member`: one pack with a big stored member (5 GiB of random bytes)
/// and a big deflated one (3 GiB of text; `--quick`: 256 MiB each), each
/// operation run as the `assetpack` command against its peer in the same
/// run, page cache warm, with the time of a whole run and the peak resident
/// set (`VmHWM`, as GNU time's `%M` reports it) of the process doing it:
///
/// - `large-member/cat-stored`, `large-member/cat-deflated`: `assetpack cat`
///   of the member into a pipe (read by `cat >/dev/null`) against
///   `unzip -p` of the same member from the pack file into the same sink;
/// - `large-member/install`: `assetpack install` of the pack into a new
///   container (copy, every check, syncs) against `cp` and `cat` of the pack
///   file to a new file (no check, no sync);
/// - `large-member/verify-deep`: `assetpack verify --deep` of the container
///   against `unzip -tqq` of the pack file.
enum LargeMemberScenario {
    static let scenario = Scenario(
        "large-member", "cat / install / verify --deep of a pack with a 5 GiB stored and a 3 GiB deflated member, time and peak RSS"
    ) { ctx in try run(ctx) }

    static let stored = "media/big.bin"
    static let deflated = "text/big.txt"

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let storedBytes = ctx.scale.quick ? 256 << 20 : 5 << 30
        let deflatedBytes = ctx.scale.quick ? 256 << 20 : 3 << 30
        let dir = ctx.workspace.root + "/large-member-\(storedBytes >> 20)-\(deflatedBytes >> 20)"
        let zip = dir + "/pack.zip"
        let container = dir + "/container"
        let assetpack = (ctx.executable as NSString).deletingLastPathComponent + "/assetpack"
        guard FileManager.default.isExecutableFile(atPath: assetpack) else {
            throw BenchError.failed("large-member needs \(assetpack): build it with the same configuration (swift build -c release --product assetpack)")
        }
        // Members this large are over the default limits (1 GiB): the
        // containers here allow them.
        let limits = ["limits", "--member-size", String(deflatedBytes + (1 << 20)), "--ratio", "1000"]
        try ctx.workspace.fill(dir, label: "a pack of a \(storedBytes >> 20) MiB stored and a \(deflatedBytes >> 20) MiB deflated member") {
            try writeSource(dir + "/big.bin", bytes: storedBytes) { rng, n in MemberSet.randomBytes(n, &rng) }
            try writeSource(dir + "/big.txt", bytes: deflatedBytes) { rng, n in MemberSet.text(n, &rng) }
            try ArchiveWriter.write([
                .init(path: stored, source: .file(dir + "/big.bin"), compression: .stored),
                .init(path: deflated, source: .file(dir + "/big.txt"), compression: .deflated),
            ], to: zip)
            try FileManager.default.removeItem(atPath: dir + "/big.bin")
            try FileManager.default.removeItem(atPath: dir + "/big.txt")
            try shell([assetpack] + limits + ["--container", container])
            try shell([assetpack, "install", zip, "--id", "bench.large-member", "--container", container])
        }
        let zipBytes = Double((try FileManager.default.attributesOfItem(atPath: zip)[.size] as? Int) ?? 0)
        // Two rounds: a round of every contender is minutes at full size.
        let rounds = ctx.scale.rounds ?? 2
        let target = dir + "/target"
        let sink = " | cat >/dev/null"
        func quoted(_ words: [String]) -> String { words.map { "'" + $0 + "'" }.joined(separator: " ") }

        let cases: [(String, Double, [(String, String, String?)])] = [
            ("cat-stored", Double(storedBytes), [
                ("assetpacks", quoted([assetpack, "cat", stored, "--container", container]) + sink, nil),
                ("unzip -p", quoted(["unzip", "-p", zip, stored]) + sink, nil),
            ]),
            ("cat-deflated", Double(deflatedBytes), [
                ("assetpacks", quoted([assetpack, "cat", deflated, "--container", container]) + sink, nil),
                ("unzip -p", quoted(["unzip", "-p", zip, deflated]) + sink, nil),
            ]),
            ("install", zipBytes, [
                ("assetpacks", quoted([assetpack] + limits + ["--container", target]) + " >/dev/null && "
                    + quoted([assetpack, "install", zip, "--id", "bench.large-member", "--container", target]) + " >/dev/null",
                 target),
                ("cp", quoted(["cp", zip, target]), target),
                ("cat", quoted(["cat", zip]) + " >" + quoted([target]), target),
            ]),
            ("verify-deep", zipBytes, [
                ("assetpacks", quoted([assetpack, "verify", "--deep", "--container", container]) + " >/dev/null", nil),
                ("unzip -t", quoted(["unzip", "-tqq", zip]), nil),
            ]),
        ]
        var results: [ScenarioResult] = []
        for (name, bytes, all) in cases {
            let contenders = all.filter { ctx.scale.only?.contains($0.0) ?? true }
            // Warm the page cache with what the contenders read: the pack
            // file and the installed archive (one sequential read each, not a
            // whole run of every contender).
            let archives = ((try? FileManager.default.contentsOfDirectory(atPath: container + "/packs")) ?? [])
                .filter { $0.hasSuffix(".zip") }.map { container + "/packs/" + $0 }
            try shell(["sh", "-c", quoted(["cat", zip] + archives) + " >/dev/null"])
            var peaks: [String: Int] = [:]
            let seconds = try Passes.run(contenders.map { c in
                (c.0, {
                    let (s, kb) = try measured(c.1, cleaning: c.2, dir: dir)
                    peaks[c.0] = max(peaks[c.0] ?? 0, kb)
                    return s
                })
            }, rounds: rounds)
            let peakText = contenders.map { "\($0.0) \(Format.fixed(Double(peaks[$0.0] ?? 0) / 1024, decimals: 1)) MiB" }
            results.append(ScenarioResult(
                name: "large-member/\(name)",
                summary: "\(name) of the large-member pack (\(Format.count(storedBytes >> 20)) MiB stored, "
                    + "\(Format.count(deflatedBytes >> 20)) MiB deflated; \(Format.count(Int(zipBytes) >> 20)) MiB archive), "
                    + "page cache warm; ops are whole runs, p50/p99 over \(rounds) rounds",
                measurements: Passes.measurements(names: contenders.map(\.0), seconds: seconds, units: 1, bytes: bytes),
                basis: .throughput,
                notes: ["Peak resident set of the process doing the work (VmHWM): " + peakText.joined(separator: ", ") + "."]))
        }
        return results
    }

    /// Runs `command` under `sh -c`, its first process under GNU time;
    /// returns the wall time of the whole and the peak RSS (KiB) of that
    /// process (the last `&&` step's, for a chain). `cleaning` is removed
    /// before and after, outside the time.
    static func measured(_ command: String, cleaning: String?, dir: String) throws -> (Double, Int) {
        if let cleaning { try? FileManager.default.removeItem(atPath: cleaning) }
        defer { if let cleaning { try? FileManager.default.removeItem(atPath: cleaning) } }
        let report = dir + "/peak.txt"
        let timedCommand = command.components(separatedBy: " && ").map { "/usr/bin/time -a -f %M -o '\(report)' " + $0 }
            .joined(separator: " && ")
        try? FileManager.default.removeItem(atPath: report)
        let seconds = try timed { try shell(["sh", "-c", timedCommand]) }
        let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        let kilobytes = text.split(separator: "\n").compactMap { Int($0) }.last ?? 0
        return (seconds, kilobytes)
    }

    /// Runs a program (output discarded); fails on a non-zero exit.
    static func shell(_ words: [String]) throws {
        try Tool.run(words[0], Array(words.dropFirst()))
    }

    /// Writes `bytes` bytes made by `make` to `path`, 8 MiB at a time.
    static func writeSource(_ path: String, bytes: Int, _ make: (inout SplitMix64, Int) -> [UInt8]) throws {
        var rng = SplitMix64(seed: 0xB16_F11E)
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw PeerError("create \(path)") }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw PeerError("open \(path)") }
        defer { try? handle.close() }
        var written = 0
        while written < bytes {
            let chunk = make(&rng, min(8 << 20, bytes - written))
            try handle.write(contentsOf: Data(chunk))
            written += chunk.count
        }
    }
}
