import Foundation
import Synchronization
import AssetPacks

/// `small-read-threads`: the `small-read` members read by path by several
/// threads of one process at once, as a game's loader threads read — one
/// `AssetPackManager` shared by all of them — against the same number of
/// threads reading the extracted files, and raw `mdb_get` (one read
/// transaction per thread on one environment).
///
/// Each contender runs with one thread, then with one thread per CPU; every
/// thread has its operation and its random order of its own, and all start
/// together. A round's rate is all the threads' reads over the time from the
/// start until the last thread is done; reads are timed as in
/// ``Competition`` (batches of at least ten clock reads' cost), so the
/// percentiles are those of reads made while the other threads read too.
enum ThreadedReadScenario {
    static let scenario = Scenario(
        "small-read-threads",
        "as `small-read` by one thread, then by one thread per CPU at once in one process (one shared manager): reads/s of all the threads"
    ) { ctx in try run(ctx) }

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let d = try SmallDataset.prepare(ctx.workspace, deflated: false)
        let manager = try AssetPackManager(container: .init(path: d.container.path))
        let lmdb = try RawLMDB(path: d.lmdbPath)
        let plan = ctx.scale.plan
        let many = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let threadCounts = [1, many]
        var measured: [[Measurement]] = threadCounts.map { _ in [] }
        func measure<Op: Operation & SendableMetatype>(_ name: String, _ make: () throws -> Op) throws {
            guard plan.only?.contains(name) ?? true else { return }
            for (k, threads) in threadCounts.enumerated() {
                measured[k].append(try ReadingThreads.measure(name, threads: threads, items: d.members.count, plan: plan, make: make))
            }
        }
        try measure("assetpacks") { ContentsRead(manager: manager, pack: d.packID, paths: d.members.paths, consume: false) }
        try measure("files") { FilesRead(paths: d.filePaths, buffer: ByteBuffer(capacity: d.largest), consume: false) }
        try measure("lmdb-raw") { LMDBRead(lmdb: try RawLMDB(readerOf: lmdb), keys: d.names, consume: false) }

        let what = "\(Format.count(d.members.count)) stored members of 1–16 KiB, random paths, warm cache, by path"
        var results = [
            ScenarioResult(name: "small-read-threads/1", summary: what + ", one thread", measurements: measured[0]),
            ScenarioResult(name: "small-read-threads/\(many)", summary: what + ", \(many) threads at once, reads/s of all",
                           measurements: measured[1]),
        ]
        // How each contender's reads/s grew from one thread to many.
        let scaling = measured[1].compactMap { m -> String? in
            guard let one = measured[0].first(where: { $0.contender == m.contender }), one.opsPerSecond > 0 else { return nil }
            return "`\(m.contender)` \(Format.ratio(m.opsPerSecond / one.opsPerSecond))"
        }
        if !scaling.isEmpty {
            results[1].notes.append("Reads/s with \(many) threads over one thread's: " + scaling.joined(separator: ", ") + ".")
        }
        return results
    }
}

/// Runs one contender's reads on several threads at once.
enum ReadingThreads {
    /// `rounds` rounds of `threads` threads, each making its operation with
    /// `make` (on the calling thread, before any starts) and reading its own
    /// random order for about ``Plan/passSeconds``.
    static func measure<Op: Operation & SendableMetatype>(_ name: String, threads: Int, items: Int, plan: Plan,
                                       make: () throws -> Op) throws -> Measurement {
        // One thread's pass over a shuffled warm-up sets the reads per thread
        // and the batch, as ``Competition`` does.
        var warmOp = try make()
        var rng = SplitMix64(seed: 0x7448_5244)
        var warm = Array(0 ..< Int32(items))
        warm.shuffle(using: &rng)
        let elapsed = try warm.withUnsafeBufferPointer { try Contender.pass(&warmOp, $0) }
        let mean = max(1, Double(elapsed) / Double(items))
        let batch = Competition.batch(forMean: mean)
        let perThread = max(batch, Int(plan.passSeconds * 1e9 / mean) / batch * batch)

        var histogram = Histogram()
        var rates: [Double] = []
        for round in 0 ..< plan.rounds {
            let runs = try (0 ..< threads).map { t in
                ThreadRun(op: try make(),
                          order: randomOrder(count: perThread, items: items, seed: 0x5448 &+ UInt64(round) &* 7919 &+ UInt64(t) &* 104_729))
            }
            let arrived = Atomic<Int>(0)
            let done = DispatchGroup()
            let start = Clock.now()
            for run in runs {
                done.enter()
                let thread = Thread {
                    // Every thread waits for the others, so they read at once.
                    arrived.add(1, ordering: .acquiringAndReleasing)
                    while arrived.load(ordering: .acquiring) < threads {}
                    run.read(batch: batch)
                    done.leave()
                }
                thread.start()
            }
            done.wait()
            let wall = Double(runs.map(\.end).max()! &- start) / 1e9
            for run in runs {
                if let error = run.error { throw error }
                histogram.merge(run.histogram)
            }
            rates.append(Double(threads * perThread) / wall)
        }
        return Measurement(contender: name, opsPerSecond: median(rates), histogram: histogram, batch: batch)
    }

    /// One thread's operation, order and what it measured.
    private final class ThreadRun<Op: Operation>: @unchecked Sendable {
        // Unchecked: filled in by its own thread, read by the caller only
        // after that thread is done (the group's wait orders the two).
        var op: Op
        let order: [Int32]
        var histogram = Histogram()
        var end: UInt64 = 0
        var error: (any Error)?

        init(op: Op, order: [Int32]) {
            self.op = op
            self.order = order
        }

        func read(batch: Int) {
            do {
                _ = try order.withUnsafeBufferPointer { try Contender.batches(&op, $0, batch: batch, into: &histogram) }
            } catch {
                self.error = error
            }
            end = Clock.now()
        }
    }
}
