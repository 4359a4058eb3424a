import Foundation
import AssetPacks
import AssetDelivery
import AssetStore

/// `status`: how late another process learns of a download's progress.
///
/// This process writes a download's status record (`DownloadBoard.write`,
/// the write every running download makes: the record replaced whole by a
/// rename in `<container>/downloads/`), one every 5 ms, each stamped with
/// the time of its writing; a worker process follows the pack with
/// `statusUpdates(forAssetPackWithID:)` and records, per update, how long
/// after its stamp it arrived. The peer is the floor of any cross-process
/// notification: the same stamps written as lines to a pipe the worker
/// reads. Updates the worker skips (two records written between two of its
/// reads) are counted in a note: a reader sees the latest record.
enum StatusScenario {
    static let scenario = Scenario(
        "status", "a download's progress reaching another process: status records through `statusUpdates`, against a pipe"
    ) { ctx in try run(ctx) }

    static let pack = "Progress"
    static let interval = 0.005

    /// What a status watcher or pipe reader reports.
    struct Report: Codable {
        var received: Int
        var histogram: [[UInt64]]
    }

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let count = ctx.scale.quick ? 100 : 400
        let container = ctx.workspace.root + "/status-container"
        try? FileManager.default.removeItem(atPath: container)
        defer { try? FileManager.default.removeItem(atPath: container) }
        let board = DownloadBoard(store: try AssetStore(container: GroupContainer(path: container)))

        var measurements: [Measurement] = []
        var notes: [String] = []
        for contender in ["assetpacks", "pipe"] where ctx.scale.only?.contains(contender) ?? true {
            let worker = try WorkerProcess(executable: ctx.executable,
                                           contender == "pipe" ? ["pipe-reader", String(count)] : ["status-watcher", container, pack, String(count)])
            try worker.waitUntilReady()
            worker.go()
            let started = DownloadBoard.now
            for i in 1 ... count {
                Thread.sleep(forTimeInterval: interval)
                let now = DownloadBoard.now
                if contender == "pipe" {
                    worker.send("\(now)\n")
                } else {
                    try board.write(DownloadStatus(pack: pack, download: "00000000000000b1", state: i == count ? .finished : .downloading,
                                                   bytes: UInt64(i), total: UInt64(count), version: "1", url: "http://127.0.0.1/p.zip",
                                                   pid: getpid(), started: started, updated: now))
                }
            }
            let report = try worker.result(Report.self)
            let histogram = Histogram(sparse: report.histogram)
            measurements.append(Measurement(contender: contender, opsPerSecond: 1 / interval, histogram: histogram, batch: 1))
            if contender == "assetpacks" {
                notes.append("\(report.received) of \(count) records were seen one by one (the others were replaced before the watcher read them); "
                    + "p50 \(Format.duration(histogram.percentile(0.5))), p99 \(Format.duration(histogram.percentile(0.99))); "
                    + "the test suite asks for a median under 100 ms")
            }
        }
        return [ScenarioResult(
            name: "status",
            summary: "a status record written every 5 ms, read by another process with `statusUpdates` (inotify, then a read of "
                + "the record); the peer writes the same time stamps to a pipe. Latency: from the writer's stamp to the reader's clock",
            measurements: measurements, basis: .latency, reference: "assetpacks", notes: notes)]
    }

    /// The worker: follows `pack`'s updates until the final one, recording delays.
    static func watch(container: String, pack: String, count: Int) throws {
        let manager = try AssetPackManager(container: .init(path: container))
        let done = DispatchSemaphore(value: 0)
        let box = Findings()
        Task {
            var histogram = Histogram()
            var received = 0
            ready()
            for await update in manager.statusUpdates(forAssetPackWithID: pack) {
                let arrived = Date()
                switch update {
                case .downloading(_, let progress):
                    histogram.record(arrived.timeIntervalSince(progress.updated) * 1e9)
                    received += 1
                case .finished, .failed: box.set(Report(received: received, histogram: histogram.sparse))
                default: continue
                }
                if box.value != nil { break }
            }
            done.signal()
        }
        done.wait()
        FileHandle.standardOutput.write(try JSONEncoder().encode(box.value!))
    }

    /// The peer's worker: reads `count` stamps from standard input.
    static func readPipe(count: Int) throws {
        ready()
        var histogram = Histogram()
        for _ in 0 ..< count {
            guard let line = readLine(), let stamp = UInt64(line) else { break }
            histogram.record(Double(DownloadBoard.now - min(stamp, DownloadBoard.now)) * 1000)
        }
        FileHandle.standardOutput.write(try JSONEncoder().encode(Report(received: count, histogram: histogram.sparse)))
    }

    /// Says `ready`, then waits for the parent's `go`.
    private static func ready() {
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        _ = readLine()
    }
}

/// The watcher task's report, read after its semaphore.
private final class Findings: @unchecked Sendable {
    private(set) var value: StatusScenario.Report?
    func set(_ r: StatusScenario.Report) { value = r }
}
