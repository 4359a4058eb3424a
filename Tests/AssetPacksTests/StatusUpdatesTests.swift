import Foundation
import Testing
import AssetPacks
import TestSupport

/// `statusUpdates(forAssetPackWithID:)`, `AssetPackDownloadProgress`'s
/// cancel/pause/resume and the status records behind them, against nginx on
/// 127.0.0.1 slowed with `limit_rate` so that a download lasts long enough
/// to act during it.
@Suite struct StatusUpdatesTests {
    let site = BigPackSite("status-updates")
    static let size = 3 << 20

    /// `Big` published and served at `rate`, a manager of a fresh container, and the pack as the catalog lists it.
    func start(rate: String) async throws -> (NginxHost, AssetPackManager, AssetPack) {
        try site.publish(version: 1, size: Self.size)
        let nginx = try site.nginx(extra: "limit_rate \(rate);")
        let manager = try site.manager(nginx)
        return (nginx, manager, try await manager.assetPack(withID: "Big"))
    }

    /// The first `.downloading` update's progress of a download other than
    /// `skipping`, or `nil` when `download` ends first (a test on a starved
    /// machine then fails instead of waiting for ever).
    func firstProgress(_ manager: AssetPackManager, after skipping: String? = nil,
                       whileRunning download: Task<Void, any Error>) async -> AssetPackDownloadProgress? {
        let updates = manager.statusUpdates(forAssetPackWithID: "Big")
        let watcher = Task { () -> AssetPackDownloadProgress? in
            for await update in updates {
                if case .downloading(_, let progress) = update, progress.downloadID != skipping, progress.completedUnitCount > 0 {
                    return progress
                }
            }
            return nil
        }
        let ender = Task {
            _ = await download.result
            watcher.cancel()
        }
        defer { ender.cancel() }
        return await watcher.value
    }

    /// The `.download` files left in the container's staging directory.
    func partialFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: site.dir.file("container/staging")).filter { $0.hasSuffix(".download") }
    }

    @Test(.timeLimit(.minutes(4)))
    func updatesGoFromBeganThroughDownloadingToFinished() async throws {
        let (nginx, manager, pack) = try await start(rate: "2m")
        defer { nginx.stop() }
        // Subscribed before the download starts: every step is this download's.
        let updates = manager.statusUpdates(forAssetPackWithID: "Big")
        let seen = Task { () -> [String] in
            var names: [String] = []
            for await update in updates {
                switch update {
                case .began: names.append("began")
                case .downloading(let p, let progress):
                    #expect(p.id == "Big" && progress.totalUnitCount == Int64(pack.archiveSize))
                    if names.last != "downloading" { names.append("downloading") }
                case .paused: names.append("paused")
                case .finished(let p):
                    #expect(p.status.contains(.downloaded) && p.memberCount == 1)
                    names.append("finished")
                    return names
                case .failed(_, let error): names.append("failed \(error)")
                }
            }
            return names
        }
        try await manager.ensureLocalAvailability(of: pack)
        #expect(await seen.value == ["began", "downloading", "finished"])
        let record = try #require(manager.downloadStatus(ofAssetPackWithID: "Big"))
        #expect(record.state == .finished && record.completedBytes == pack.archiveSize && !record.isRunning)
        #expect(record.jsonLine.contains(#""state":"finished""#) && record.jsonLine.hasSuffix(#""running":false}"#))
    }

    // Slow downloads (3 MiB at 256 KiB/s): the request must reach the
    // download while it runs, also on a machine where this task waits seconds
    // for a thread; a cancel ends it at once.
    @Test(.timeLimit(.minutes(4)))
    func cancellingTwiceInARowCancelsBothDownloadsAndLeavesNothing() async throws {
        let (nginx, manager, pack) = try await start(rate: "256k")
        defer { nginx.stop() }
        var cancelled: [String] = []
        for _ in 0..<2 {
            let skip = cancelled.last
            let download = Task { try await manager.ensureLocalAvailability(of: pack) }
            let progress = try #require(await firstProgress(manager, after: skip, whileRunning: download))
            progress.cancel()
            do {
                try await download.value
                Issue.record("a cancelled download installed the pack")
            } catch let error as AssetPackError {
                #expect(error.code == .downloadCancelled && error.pack == "Big", "\(error)")
            }
            #expect(progress.isCancelled)
            #expect(!cancelled.contains(progress.downloadID))
            cancelled.append(progress.downloadID)
        }
        #expect(try await manager.assetPack(withID: "Big").status == .downloadAvailable)
        #expect(try partialFiles().isEmpty)
        // The next writer's reclaim finds nothing of them either.
        _ = try manager.installPack(at: site.dir.file("Big-1.zip"))
        #expect(try partialFiles().isEmpty)
    }

    @Test(.timeLimit(.minutes(4)))
    func aCancelReachesTheCallersWaitingForTheSameDownload() async throws {
        let (nginx, manager, pack) = try await start(rate: "256k")
        defer { nginx.stop() }
        let callers = (0..<3).map { _ in Task { try await manager.ensureLocalAvailability(of: pack) } }
        let progress = try #require(await firstProgress(manager, whileRunning: callers[0]))
        // Give the other callers time to queue on the download lock.
        try await Task.sleep(for: .milliseconds(200))
        progress.cancel()
        for caller in callers {
            do {
                try await caller.value
                Issue.record("a caller returned as if installed")
            } catch let error as AssetPackError {
                #expect(error.code == .downloadCancelled, "\(error)")
            }
        }
        let gets = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 1, "\(gets)")
    }

    @Test(.timeLimit(.minutes(4)))
    func pauseStopsTheTransferAndResumeContinuesWithARange() async throws {
        let (nginx, manager, pack) = try await start(rate: "512k")
        defer { nginx.stop() }
        let download = Task { try await manager.ensureLocalAvailability(of: pack) }
        let progress = try #require(await firstProgress(manager, whileRunning: download))
        progress.pause()
        let paused = try await until { manager.downloadStatus(ofAssetPackWithID: "Big").flatMap { $0.state == .paused ? $0 : nil } }
        #expect(paused.isRunning && paused.downloadID == progress.downloadID)
        try await Task.sleep(for: .milliseconds(400))
        let still = try #require(manager.downloadStatus(ofAssetPackWithID: "Big"))
        #expect(still.state == .paused && still.completedBytes == paused.completedBytes)
        #expect(paused.completedBytes < pack.archiveSize)
        progress.resume()
        try await download.value
        #expect(try manager.contents(at: "big.bin", searchingInAssetPackWithID: "Big") == Data(BigPackSite.content(size: Self.size, version: 1)))
        let gets = nginx.accessLog(count: 2) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 2 && gets[1].status == 206, "\(gets)")
        #expect(gets.count == 2 && gets[1].range.hasPrefix("bytes=") && gets[1].range != "bytes=0-", "\(gets)")
    }

    @Test func requestsWithNoDownloadRunningAreRefused() throws {
        let manager = try AssetPackManager(container: .init(path: site.dir.file("container")))
        for request in [manager.pauseDownload, manager.resumeDownload, manager.cancelDownload] {
            do {
                try request("Big")
                Issue.record("no error")
            } catch {
                #expect(error.code == .noDownloadInProgress && error.pack == "Big", "\(error)")
            }
        }
        #expect(manager.downloadStatus(ofAssetPackWithID: "Big") == nil && manager.allDownloadStatuses().isEmpty)
    }
}

/// Waits up to 20 s for `probe` to return a value.
func until<T>(_ probe: () throws -> T?) async throws -> T {
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline {
        if let value = try probe() { return value }
        try await Task.sleep(for: .milliseconds(10))
    }
    throw CancellationError()
}
