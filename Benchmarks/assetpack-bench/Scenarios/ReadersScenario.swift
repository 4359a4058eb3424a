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
///   alternating two versions, for the whole phase, at background priority
///   (`installPack(…, priority: .background)`).
/// - `readers/install-normal`: the same with the installs at normal priority.
/// - `readers/2-install`, `readers/2-install-normal`: two readers (both
///   CPUs taken) beside the installs at each priority.
/// - `readers/install-one-cpu`: one reader and the background installs
///   placed on one CPU (`sched_setaffinity`), so that the installs' threads
///   share the reader's CPU the whole time instead of now and then: what
///   the store's own background work costs a reader, apart from what the
///   machine does around it.
///
/// Phases alternate (1, 2, the four install phases, then the machine's
/// floor for 1 and for install: the reader's timed loop over an operation
/// that reads nothing) for several rounds; reads/s is the median over
/// rounds of the sum over readers.
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
        // The phases: 0 one reader, 1 two, 2 one while another process
        // installs updates at background priority (as updates that arrive
        // in the background are installed), 3 the same at normal priority,
        // 4 and 5 two readers — both CPUs taken — beside the installs at
        // each priority; 6 and 7 the machine's floor for 0 and 2: the
        // reader's loop, timed the same way, reading nothing (`--worker clock`);
        // 8 one reader and the background installer on one CPU.
        let plan: [(readers: Int, clock: Bool, installer: String?, oneCPU: Bool)] = [
            (1, false, nil, false), (2, false, nil, false), (1, false, "background", false), (1, false, "normal", false),
            (2, false, "background", false), (2, false, "normal", false), (1, true, nil, false), (1, true, "background", false),
            (1, false, "background", true),
        ]
        let cpus = Affinity.allowed()
        let phases = plan.count
        var rates = [[Double]](repeating: [], count: phases)
        var histograms = [Histogram](repeating: Histogram(), count: phases)
        var batches = [Int](repeating: 1, count: phases)
        var longest = [UInt64](repeating: 0, count: phases)
        var over2ms = [Int](repeating: 0, count: phases)
        var slow = [Workers.SlowChunks](repeating: .init(), count: phases)
        var timed = [(chunks: Int, minorFaults: Int)](repeating: (0, 0), count: phases)
        var installs = [Int](repeating: 0, count: phases)
        var installSeconds = [Double](repeating: 0, count: phases)
        for round in 0 ..< s.readerRounds {
            for phase in 0 ..< phases {
                let workers: [WorkerProcess] = try (1 ... plan[phase].readers).map { k in
                    plan[phase].clock
                        ? try WorkerProcess(executable: ctx.executable, ["clock", seconds, String(round * 10 + 3)])
                        : try reader(round * 10 + k)
                }
                let installer = try plan[phase].installer.map { priority in
                    try WorkerProcess(executable: ctx.executable, ["installer", container, pack, seconds, priority] + zips.reversed())
                }
                for w in workers { try w.waitUntilReady() }
                try installer?.waitUntilReady()
                if plan[phase].oneCPU, let cpu = cpus.last {
                    // Threads the workers start later inherit the placement.
                    for pid in workers.map(\.pid) + (installer.map { [$0.pid] } ?? []) {
                        guard Affinity.set(process: pid, to: [cpu]) else { throw BenchError.failed("sched_setaffinity failed for \(pid)") }
                    }
                }
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
                    installs[phase] += r.installs
                    installSeconds[phase] += r.seconds
                }
                rates[phase].append(rate)
            }
        }
        let m = (0 ..< phases).map { Measurement(contender: "assetpacks", opsPerSecond: median(rates[$0]), histogram: histograms[$0], batch: batches[$0]) }
        let sizes = s.readersMemberSizes.upperBound < 1024 * 16 ? "64–1024 B" : "1–16 KiB"
        let what = "stored members of \(sizes) by path, \(Format.count(n))-member pack, \(seconds) s per phase, \(s.readerRounds) rounds"
        /// The notes of an install phase, beside the phase with the same
        /// readers and no install (`idle`: 0 or 1).
        func installNotes(_ phase: Int, idle: Int = 0) -> [String] {
            let base = idle == 0 ? "readers/1" : "readers/2"
            return ["\(installs[phase]) installs of the \(Format.count(n))-member pack completed meanwhile "
                + "(\(Format.fixed(Double(installs[phase]) / max(installSeconds[phase], 1e-9), decimals: 2))/s); "
                + "idle p99 (\(base)): \(Format.duration(histograms[idle].percentile(0.99)))",
             "longest timed batch of \(batches[phase]) read(s) while installing: \(Format.duration(Double(longest[phase])))"
                + " (\(over2ms[phase]) over 2 ms); idle (\(base)): \(Format.duration(Double(longest[idle]))) (\(over2ms[idle]) over 2 ms)",
             "what the readers went through in the timed chunks of 4,096 reads holding a batch over 2 ms — while installing: "
                + Self.describe(slow[phase]) + "; idle: " + Self.describe(slow[idle]),
             "minor page faults per timed chunk — while installing: " + Self.faults(slow[phase], timed[phase])
                + "; idle: " + Self.faults(slow[idle], timed[idle])]
        }
        return [
            ScenarioResult(name: "readers/1", summary: "one reader process: \(what)", measurements: [m[0]], basis: .none),
            ScenarioResult(name: "readers/2", summary: "two reader processes, aggregate: \(what)", measurements: [m[1]], basis: .none),
            ScenarioResult(name: "readers/install",
                           summary: "one reader process while another installs updates of the pack it reads at background priority",
                           measurements: [m[2]], basis: .none,
                           notes: installNotes(2) + [
                               "the machine's floor, the same loop reading nothing (batches of \(batches[6]) no-ops): longest batch "
                               + "while installing \(Format.duration(Double(longest[7]))) (\(over2ms[7]) over 2 ms), idle "
                               + "\(Format.duration(Double(longest[6]))) (\(over2ms[6]) over 2 ms); its slow chunks while installing: "
                               + Self.describe(slow[7]) + "; idle: " + Self.describe(slow[6])]),
            ScenarioResult(name: "readers/install-normal",
                           summary: "the same, the installs at normal priority (`installPack` without `priority: .background`)",
                           measurements: [m[3]], basis: .none, notes: installNotes(3)),
            ScenarioResult(name: "readers/2-install",
                           summary: "two reader processes, aggregate, both CPUs taken, while another installs updates at background priority",
                           measurements: [m[4]], basis: .none, notes: installNotes(4, idle: 1)),
            ScenarioResult(name: "readers/2-install-normal",
                           summary: "the same, the installs at normal priority",
                           measurements: [m[5]], basis: .none, notes: installNotes(5, idle: 1)),
            ScenarioResult(name: "readers/install-one-cpu",
                           summary: "one reader process and another installing updates at background priority, both placed on one CPU "
                               + "(`sched_setaffinity`): the installs' threads share the reader's CPU all the time",
                           measurements: [m[8]], basis: .none, notes: installNotes(8)),
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
