import Foundation
import AssetPacks
import AssetSystem
import AssetStore
import AssetArchive

/// `readers`: reader processes (this executable, `--worker reader`) reading
/// stored members of 1–16 KiB by path from one pack of 10,000 (`--quick`:
/// 2,000) for a fixed time, as in `small-read`.
///
/// - `readers/1`, `readers/2`: one, then two reader processes (two cores):
///   aggregate reads/s, merged latencies.
/// - `readers/install`: one reader while another process
///   (`--worker installer`) installs updates of the very pack being read,
///   alternating two versions, for the whole phase.
///
/// Phases alternate (1, 2, install) for several rounds; reads/s is the
/// median over rounds of the sum over readers.
enum ReadersScenario {
    static let scenario = Scenario(
        "readers", "1 and 2 reader processes, aggregate reads/s; reader latency while another process installs updates"
    ) { ctx in try run(ctx) }

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let s = ctx.scale
        if let only = s.only, !only.contains("assetpacks") { return [] }
        let n = s.readersMembers
        let dir = ctx.workspace.root + "/readers-\(n)"
        let members = MemberSet(count: n, sizes: s.readersMemberSizes, content: .random, seed: 0x2EAD, ext: "bin")
        let container = dir + "/container"
        let pack = "bench.readers"
        let zips = [dir + "/v1.zip", dir + "/v2.zip"]
        let pathsFile = dir + "/paths.txt"
        try ctx.workspace.fill(dir, label: "a pack of \(Format.count(n)) members in two versions") {
            for (v, zip) in zips.enumerated() {
                try ArchiveWriter.write((0 ..< n).map { i in
                    var bytes = members.bytes(i)
                    bytes[0] ^= UInt8(v)
                    return ArchiveWriter.Member(path: members.paths[i], source: .bytes(bytes), compression: .stored)
                }, to: zip)
            }
            try AssetStore(container: GroupContainer(path: container)).install(packAt: zips[0], id: pack)
            try members.paths.joined(separator: "\n").write(toFile: pathsFile, atomically: true, encoding: .utf8)
        }

        let seconds = String(s.readerSeconds)
        func reader(_ seed: Int) throws -> WorkerProcess {
            try WorkerProcess(executable: ctx.executable, ["reader", container, pack, pathsFile, seconds, String(seed)])
        }
        var rates = [[Double]](repeating: [], count: 3)
        var histograms = [Histogram](repeating: Histogram(), count: 3)
        var batches = [1, 1, 1]
        var longest: [UInt64] = [0, 0, 0]
        var over2ms = [0, 0, 0]
        var slow = [Workers.SlowChunks](repeating: .init(), count: 3)
        var timed: [(chunks: Int, minorFaults: Int)] = [(0, 0), (0, 0), (0, 0)]
        var installs = 0
        var installSeconds = 0.0
        for round in 0 ..< s.readerRounds {
            for phase in 0 ..< 3 {
                var workers: [WorkerProcess] = [try reader(round * 10 + 1)]
                if phase == 1 { workers.append(try reader(round * 10 + 2)) }
                let installer = phase == 2
                    ? try WorkerProcess(executable: ctx.executable, ["installer", container, pack, seconds] + zips.reversed())
                    : nil
                for w in workers { try w.waitUntilReady() }
                try installer?.waitUntilReady()
                for w in workers { w.go() }
                installer?.go()
                var rate = 0.0
                for w in workers {
                    let r = try w.result(Workers.ReaderReport.self)
                    rate += Double(r.ops) / r.seconds
                    batches[phase] = max(batches[phase], r.batch)
                    longest[phase] = max(longest[phase], r.longest)
                    over2ms[phase] += r.over2ms
                    slow[phase].merge(r.slow)
                    timed[phase].chunks += r.timedChunks
                    timed[phase].minorFaults += r.timedMinorFaults
                    histograms[phase].merge(Histogram(sparse: r.histogram))
                }
                if let installer {
                    let r = try installer.result(Workers.InstallerReport.self)
                    installs += r.installs
                    installSeconds += r.seconds
                }
                rates[phase].append(rate)
            }
        }
        let m = (0 ..< 3).map { Measurement(contender: "assetpacks", opsPerSecond: median(rates[$0]), histogram: histograms[$0], batch: batches[$0]) }
        let sizes = s.readersMemberSizes.upperBound < 1024 * 16 ? "64–1024 B" : "1–16 KiB"
        let what = "stored members of \(sizes) by path, \(Format.count(n))-member pack, \(seconds) s per phase, \(s.readerRounds) rounds"
        return [
            ScenarioResult(name: "readers/1", summary: "one reader process: \(what)", measurements: [m[0]], basis: .none),
            ScenarioResult(name: "readers/2", summary: "two reader processes, aggregate: \(what)", measurements: [m[1]], basis: .none),
            ScenarioResult(name: "readers/install", summary: "one reader process while another installs updates of the pack it reads",
                           measurements: [m[2]], basis: .none,
                           notes: ["\(installs) installs of the \(Format.count(n))-member pack completed meanwhile "
                                   + "(\(Format.fixed(Double(installs) / max(installSeconds, 1e-9), decimals: 2))/s); "
                                   + "idle p99 (readers/1): \(Format.duration(histograms[0].percentile(0.99)))",
                                   "longest timed batch of \(batches[2]) read(s) while installing: \(Format.duration(Double(longest[2])))"
                                   + " (\(over2ms[2]) over 2 ms); idle: \(Format.duration(Double(longest[0]))) (\(over2ms[0]) over 2 ms)",
                                   "what the reader went through in the timed chunks of 4,096 reads holding a batch over 2 ms — while installing: "
                                   + Self.describe(slow[2]) + "; idle: " + Self.describe(slow[0]),
                                   "minor page faults per timed chunk — while installing: " + Self.faults(slow[2], timed[2])
                                   + "; idle: " + Self.faults(slow[0], timed[0])]),
        ]
    }

    /// "N chunks: P preempted, B blocked, F with a major fault, C none of
    /// these; off-CPU time covers the slowest batch in K; at most X of a
    /// slow batch not accounted for by time off the CPU; run delay covers it
    /// in W, the host's steal in S (most steal Y)".
    /// "F on average, S on average in the slow chunks (at most M)".
    static func faults(_ s: Workers.SlowChunks, _ timed: (chunks: Int, minorFaults: Int)) -> String {
        let all = timed.chunks > 0 ? Format.fixed(Double(timed.minorFaults) / Double(timed.chunks), decimals: 1) : "–"
        guard s.chunks > 0 else { return "\(all) on average, no slow chunk" }
        return "\(all) on average, \(Format.fixed(Double(s.minorFaults) / Double(s.chunks), decimals: 1)) in the slow ones (at most \(s.mostMinorFaults))"
    }

    static func describe(_ s: Workers.SlowChunks) -> String {
        guard s.chunks > 0 else { return "none" }
        return "\(s.chunks) chunk(s): \(s.preempted) preempted by the scheduler, \(s.blocked) blocked, "
            + "\(s.majorFaults) with a major page fault, \(s.onCPU) none of these; "
            + "time off the CPU at least the slow batch in \(s.offCPUCovers); "
            + "at most \(Format.duration(Double(s.unexplained))) of a slow batch spent on the CPU; "
            + "waiting for a CPU at least the slow batch in \(s.waitCovers), the host's steal at least the slow batch in \(s.stealCovers) "
            + "(most steal in a slow chunk \(Format.duration(Double(s.stolen))))"
    }
}
