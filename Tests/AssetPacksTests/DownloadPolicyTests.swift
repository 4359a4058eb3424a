import Foundation
import Synchronization
import Testing
import AssetPacks
import TestSupport

/// Discretionary downloads, the downloader extension and
/// `checkForUpdates()`, through `AssetPackManager` against nginx on 127.0.0.1.
@Suite struct DownloadPolicyTests {
    let dir = TemporaryDirectory("download-policy")
    static let prefetch = AssetPack.DownloadPolicy.prefetch([.firstInstallation])
    static let essential = AssetPack.DownloadPolicy.essential([.firstInstallation])

    /// Publishes pack `id` (`size` bytes of noise, stored) in `version` to `site/`.
    func publish(_ id: String, version: UInt64 = 1, policy: AssetPack.DownloadPolicy = prefetch, size: Int = 64 << 10) throws {
        try dir.write("content/\(id)/data.bin", noise(size, seed: version &* 31 &+ UInt64(id.utf8.count)))
        let manifest = AssetPackManifest(assetPackID: id, downloadPolicy: policy,
                                         fileSelectors: [.file("data.bin", compression: .stored)], platforms: [.linux], version: version)
        let file = dir.file("\(id)-\(version).zip")
        try Packager.package(manifest, root: dir.directory("content/\(id)"), manifestPath: "m.json", output: file)
        _ = try AssetPackPublisher.publish(packsAt: [file], to: dir.file("site"), options: .init())
    }

    /// A manager of the test's container, downloading from `nginx`, whose
    /// machine is on neither battery nor load unless `system` says so.
    func manager(_ nginx: NginxHost, discretionary: AssetPackManager.Discretionary = .init(),
                 downloaderExtension: (any AssetPackDownloaderExtension)? = nil) throws -> AssetPackManager {
        var source = AssetPackManager.CatalogSource(url: nginx.baseURL + "/catalog.json")
        source.initialBackoff = 0.01
        return try AssetPackManager(container: .init(path: dir.file("container")),
                                    options: .init(catalog: source, discretionary: discretionary, systemRoot: dir.directory("system"),
                                                   downloaderExtension: downloaderExtension))
    }

    @Test(arguments: [
        (AssetPackManager.Discretionary(maximumBytesPerSecond: 0), "discretionary.maximumBytesPerSecond"),
        (AssetPackManager.Discretionary(maximumBytesPerSecond: UInt64(Int64.max) + 1), "discretionary.maximumBytesPerSecond"),
        (AssetPackManager.Discretionary(maximumConcurrentDownloads: 0), "discretionary.maximumConcurrentDownloads"),
        (AssetPackManager.Discretionary(maximumConcurrentDownloads: 65), "discretionary.maximumConcurrentDownloads"),
        (AssetPackManager.Discretionary(maximumLoadAverage: 0), "discretionary.maximumLoadAverage"),
        (AssetPackManager.Discretionary(maximumLoadAverage: -1), "discretionary.maximumLoadAverage"),
        (AssetPackManager.Discretionary(maximumLoadAverage: .nan), "discretionary.maximumLoadAverage"),
        (AssetPackManager.Discretionary(recheckInterval: 0), "discretionary.recheckInterval"),
        (AssetPackManager.Discretionary(recheckInterval: .infinity), "discretionary.recheckInterval"),
        (AssetPackManager.Discretionary(recheckInterval: 3601), "discretionary.recheckInterval"),
    ])
    func aValueTheOptionsCannotTakeIsInvalidOption(discretionary: AssetPackManager.Discretionary, field: String) throws {
        do {
            _ = try AssetPackManager(container: .init(path: dir.file("container")), options: .init(discretionary: discretionary))
            Issue.record("accepted \(discretionary)")
        } catch {
            #expect(error.code == .invalidOption && error.field == field, "\(error)")
            #expect(error.message.contains(String(field.dropFirst("discretionary.".count))), "\(error.message)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("container")), "nothing is created for refused options")
    }

    @Test func theDefaultsAreValidAndTheLoadBoundIsTheProcessorCount() throws {
        let d = AssetPackManager.Discretionary()
        #expect(d.maximumBytesPerSecond == nil && d.maximumConcurrentDownloads == 1 && d.defersOnBattery && d.recheckInterval == 30)
        #expect(d.maximumLoadAverage == Double(ProcessInfo.processInfo.activeProcessorCount))
        _ = try AssetPackManager(container: .init(path: dir.file("container")), options: .init(discretionary: d))
    }

    @Test(.timeLimit(.minutes(3)))
    func aCappedDownloadKeepsToItsRate() async throws {
        try publish("Big", size: 10 << 20)
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let cap: UInt64 = 4 << 20
        let manager = try manager(nginx, discretionary: .init(maximumBytesPerSecond: cap))
        let samples = Samples()
        let pack = try await manager.assetPack(withID: "Big")
        let outcome = try await manager.ensureAvailability(of: pack, forInstallationEvent: .firstInstallation) { p in
            samples.add(Monotonic(), p.completed)
        }
        #expect(outcome == .installed)
        let (first, last) = try #require(samples.ends)
        let seconds = last.time.since(first.time)
        let rate = Double(last.bytes - first.bytes) / seconds
        #expect(last.bytes == pack.archiveSize && seconds > 1)
        #expect(rate <= 1.1 * Double(cap), "\(rate / Double(cap)) × the cap over \(seconds) s")
        #expect(rate >= 0.5 * Double(cap), "\(rate / Double(cap)) × the cap over \(seconds) s")
        #expect(try await manager.assetPack(withID: "Big").status == [.downloaded, .upToDate])
    }

    /// An extension that declines the packs it is given and records what it was asked.
    final class Declining: AssetPackDownloaderExtension {
        let declined: Set<String>
        let asked = Mutex<[String]>([])
        init(_ declined: Set<String>) { self.declined = declined }
        func shouldDownload(_ assetPack: AssetPack) -> Bool {
            asked.withLock { $0.append(assetPack.id) }
            return !declined.contains(assetPack.id)
        }
    }

    @Test func theExtensionDeclinesAutomaticDownloadsButNotTheProgramsOwn() async throws {
        try publish("Extra")
        try publish("Base", policy: Self.essential)
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let declining = Declining(["Extra"])
        let manager = try manager(nginx, downloaderExtension: declining)
        let extra = try await manager.assetPack(withID: "Extra")
        #expect(try await manager.ensureAvailability(of: extra, forInstallationEvent: .firstInstallation) == .declined)
        #expect(try await manager.assetPack(withID: "Extra").status == .downloadAvailable)
        #expect(nginx.accessLog.filter { $0.uri.hasPrefix("/Extra-") }.isEmpty)
        let base = try await manager.assetPack(withID: "Base")
        #expect(try await manager.ensureAvailability(of: base, forInstallationEvent: .firstInstallation) == .installed)
        #expect(declining.asked.withLock { $0 } == ["Extra", "Base"])

        // The program asks: the extension is not consulted.
        try await manager.ensureLocalAvailability(of: extra)
        #expect(try await manager.assetPack(withID: "Extra").status == [.downloaded, .upToDate])
        #expect(declining.asked.withLock { $0 } == ["Extra", "Base"])
        // Nor for packs that need nothing, or that the event does not download.
        #expect(try await manager.ensureAvailability(of: try await manager.assetPack(withID: "Base"),
                                                     forInstallationEvent: .firstInstallation) == .upToDate)
        #expect(try await manager.ensureAvailability(of: base, forInstallationEvent: .subsequentUpdate) == .notForEvent)
        #expect(declining.asked.withLock { $0 } == ["Extra", "Base"])
    }

    @Test(.timeLimit(.minutes(3)))
    func onBatteryAnEssentialPackDownloadsAtOnceAndNeverDefers() async throws {
        try publish("Base", policy: Self.essential)
        try dir.write("system/sys/class/power_supply/BAT0/type", "Battery\n")
        try dir.write("system/sys/class/power_supply/BAT0/status", "Discharging\n")
        try dir.write("system/proc/loadavg", "99.0 1 1 1/1 1\n")
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let manager = try manager(nginx)
        let deferrals = Mutex<[String]>([])
        let outcome = try await manager.ensureAvailability(of: try await manager.assetPack(withID: "Base"),
                                                           forInstallationEvent: .firstInstallation,
                                                           onDeferral: { reason in deferrals.withLock { $0.append(reason) } })
        #expect(outcome == .installed && deferrals.withLock { $0 }.isEmpty)
    }

    @Test(.timeLimit(.minutes(3)))
    func checkForUpdatesUpdatesInTheBackgroundAndRemovesOnlyWhatTheCatalogGave() async throws {
        try publish("Levels")
        try publish("Old")
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let manager = try manager(nginx)
        for id in ["Levels", "Old"] { try await manager.ensureLocalAvailability(of: try await manager.assetPack(withID: id)) }
        try publish("Mine", policy: .onDemand)
        try manager.installPack(at: dir.file("Mine-1.zip"))
        #expect(try await nothing(manager.checkForUpdates()))

        // Version 2 of Levels; Old and Mine leave the catalog.
        try publish("Levels", version: 2)
        let catalog = try AssetPackCatalog.parse(Data(dir.read("site/catalog.json")), source: "catalog.json")
        let trimmed = AssetPackCatalog(sequence: catalog.sequence + 1, published: catalog.published, expires: nil,
                                       packs: catalog.packs.filter { $0.id == "Levels" }, channel: catalog.channel)
        try dir.write("site/catalog.json", [UInt8](trimmed.encoded()))
        #expect(try await manager.assetPack(withID: "Mine").status == [.downloaded, .obsolete])

        let result = try await manager.checkForUpdates()
        #expect(result.updating == ["Levels"] && result.removed == ["Old"], "\(result)")
        #expect(throws: AssetPackError.self) { try manager.assetPack(withID: "Old") }
        #expect(try manager.contents(at: "data.bin", searchingInAssetPackWithID: "Mine").count == 64 << 10, "hand-installed: kept")
        let deadline = Date().addingTimeInterval(30)
        while try await manager.assetPack(withID: "Levels").status != [.downloaded, .upToDate] && Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(try await manager.assetPack(withID: "Levels").version == "2")
        #expect(try manager.contents(at: "data.bin", searchingInAssetPackWithID: "Levels") == Data(noise(64 << 10, seed: 2 &* 31 &+ 6)))
        #expect(try await nothing(manager.checkForUpdates()))
    }

    @Test(.timeLimit(.minutes(3)))
    func updatesAreDiscretionaryAndWaitForMains() async throws {
        try publish("Levels")
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let manager = try manager(nginx, discretionary: .init(recheckInterval: 0.05))
        try await manager.ensureLocalAvailability(of: try await manager.assetPack(withID: "Levels"))
        try publish("Levels", version: 2)
        try dir.write("system/sys/class/power_supply/BAT0/type", "Battery\n")
        try dir.write("system/sys/class/power_supply/AC/type", "Mains\n")
        try dir.write("system/sys/class/power_supply/AC/online", "0\n")
        #expect(try await manager.checkForUpdates().updating == ["Levels"])
        try await Task.sleep(nanoseconds: 300_000_000)  // several re-checks
        #expect(try await manager.assetPack(withID: "Levels").status == [.downloaded, .outOfDate, .updateAvailable])
        #expect(nginx.accessLog.filter { $0.uri.hasPrefix("/Levels-") }.count == 1, "only version 1 was fetched")
        // Asked again meanwhile: still reported as updating.
        #expect(try await manager.checkForUpdates().updating == ["Levels"])
        try dir.write("system/sys/class/power_supply/AC/online", "1\n")
        let deadline = Date().addingTimeInterval(30)
        while try await manager.assetPack(withID: "Levels").version != "2" && Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(try await manager.assetPack(withID: "Levels").status == [.downloaded, .upToDate])
        // The pack files (version 2's piece map was fetched too: nothing of it was installed to copy).
        #expect(nginx.accessLog.filter { $0.uri.hasPrefix("/Levels-") && $0.uri.hasSuffix(".zip") }.count == 2)
    }

    @Test(.timeLimit(.minutes(3)))
    func aDeferredDownloadKeepsARecordAndACancelEndsTheWait() async throws {
        try publish("Extra", size: 1 << 20)
        try dir.write("system/sys/class/power_supply/BAT0/type", "Battery\n")
        try dir.write("system/sys/class/power_supply/BAT0/status", "Discharging\n")
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let manager = try manager(nginx, discretionary: .init(recheckInterval: 0.05))
        let pack = try await manager.assetPack(withID: "Extra")
        let waiting = Task { try await manager.ensureAvailability(of: pack, forInstallationEvent: .firstInstallation) }
        var record = manager.downloadStatus(ofAssetPackWithID: "Extra")
        let deadline = Date().addingTimeInterval(20)
        while record?.state != .deferred && Date() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
            record = manager.downloadStatus(ofAssetPackWithID: "Extra")
        }
        #expect(record?.state == .deferred && record?.reason == "the machine is on battery" && record?.isRunning == true, "\(String(describing: record))")
        try manager.cancelDownload(ofAssetPackWithID: "Extra")
        do {
            _ = try await waiting.value
            Issue.record("a cancelled deferred download went on")
        } catch let error as AssetPackError {
            #expect(error.code == .downloadCancelled && error.pack == "Extra", "\(error)")
        }
        #expect(manager.downloadStatus(ofAssetPackWithID: "Extra")?.state == .cancelled)
        #expect(nginx.accessLog.filter { $0.uri.hasPrefix("/Extra-") }.isEmpty, "nothing was requested")
    }

    @Test func checkForUpdatesAsksTheExtension() async throws {
        try publish("Levels")
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let declining = Declining(["Levels"])
        let manager = try manager(nginx, downloaderExtension: declining)
        try await manager.ensureLocalAvailability(of: try await manager.assetPack(withID: "Levels"))
        try publish("Levels", version: 2)
        #expect(try await nothing(manager.checkForUpdates()))
        #expect(declining.asked.withLock { $0 } == ["Levels"])
        #expect(try await manager.assetPack(withID: "Levels").status == [.downloaded, .outOfDate, .updateAvailable])
    }

    /// Whether `checkForUpdates()` started and removed nothing.
    func nothing(_ result: (updating: Set<String>, removed: Set<String>)) -> Bool {
        result.updating.isEmpty && result.removed.isEmpty
    }

    /// Progress samples, from the downloading thread.
    final class Samples: Sendable {
        struct Sample { let time: Monotonic; let bytes: UInt64 }
        private let samples = Mutex<[Sample]>([])
        func add(_ time: Monotonic, _ bytes: UInt64) { samples.withLock { $0.append(Sample(time: time, bytes: bytes)) } }
        var ends: (Sample, Sample)? { samples.withLock { s in s.first.flatMap { f in s.last.map { (f, $0) } } } }
    }

    /// A monotonic instant.
    struct Monotonic: Sendable {
        let instant = ContinuousClock.now
        func since(_ earlier: Monotonic) -> Double {
            let d = instant - earlier.instant
            return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }
    }
}
