import Foundation
import AssetPacks
import AssetStore
import TestSupport

/// `download`: AssetPacks' downloader against curl, both fetching the same
/// published pack of 1 GiB (`--quick`: 64 MiB, one stored member of noise)
/// from nginx on loopback, into the same file system:
///
/// - `download`: assetpacks: a fresh container each round, an
///   `AssetPackManager` with the catalog, `ensureLocalAvailability(of:)` of
///   the pack (the catalog is fetched before the clock starts; the download,
///   its SHA-256, the install with its checks and syncs are timed; a note
///   gives the install's part, from its crash points); curl:
///   `curl -sS -o FILE URL` of the same file (removed after the round);
/// - `download/resume`: a fresh container holding what a downloader killed
///   halfway leaves (the journal entry and the first half of the file in
///   `staging/`), then `ensureLocalAvailability(of:)`: it rehashes the half
///   on disk and asks for the rest. The note says how many bytes nginx sent
///   beyond the remainder (its access log's `bytes_sent`: headers only).
enum DownloadScenario {
    static let scenario = Scenario(
        "download", "downloading a 1 GiB pack from nginx on loopback into a container, against `curl` to a file; and resuming one from half"
    ) { ctx in try run(ctx) }

    static let packID = "Big"
    static let member = "big.bin"

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let size = ctx.scale.quick ? 64 << 20 : 1 << 30
        let dir = ctx.workspace.root + "/download-\(size >> 20)m"
        let site = dir + "/site"
        try ctx.workspace.fill(dir, label: "a published \(size >> 20) MiB pack to download") {
            try publish(size: size, in: dir, to: site)
        }
        let entry = try catalogEntry(site)
        let nginx = try NginxHost(root: site)
        defer { nginx.stop() }
        let catalogURL = nginx.baseURL + "/catalog.json"
        let packURL = nginx.baseURL + "/" + entry.url
        let container = dir + "/container", curlFile = dir + "/curl.download"
        let rounds = ctx.scale.installRounds
        func fresh() { for p in [container, curlFile] { try? FileManager.default.removeItem(atPath: p) } }
        defer { fresh() }

        let phases = InstallPhases()
        var installs: [InstallPhases.Round] = []
        let all: [(String, () throws -> Double)] = [
            ("assetpacks", {
                fresh()
                defer { fresh() }
                phases.start()
                defer { phases.stop() }
                let seconds = try download(catalogURL, into: container, size: size)
                if let round = phases.round { installs.append(round) }
                return seconds
            }),
            ("curl", {
                fresh()
                defer { fresh() }
                return try ServeScenario.curl(["-o", curlFile, "-w", "%{size_download}\n", packURL], expect: [Int(entry.size)])
            }),
            // The same, made durable as an install is: the file's fsync
            // (coreutils `sync FILE`) inside the clock.
            ("curl+sync", {
                fresh()
                defer { fresh() }
                let transfer = try ServeScenario.curl(["-o", curlFile, "-w", "%{size_download}\n", packURL], expect: [Int(entry.size)])
                var synced: Program.Result?
                let flush = try timed { synced = try Program.run("sync", [curlFile]) }
                guard synced?.status == 0 else { throw BenchError.failed("sync \(curlFile): \(synced?.stderr ?? "")") }
                return transfer + flush
            }),
        ]
        let contenders = all.filter { ctx.scale.only?.contains($0.0) ?? true }
        let seconds = try Passes.run(contenders.map { ($0.0, $0.1) }, rounds: rounds)
        // The part of the assetpacks figure that is not the transfer: the
        // install that adopts the downloaded file, timed by its crash points.
        let install = installs.isEmpty ? [] : ["of which the install (adopting the downloaded file: container lock to done) took "
            + "\(Format.duration(median(installs.map(\.install)) * 1e9)) at the median — its `fsync` "
            + "\(Format.duration(median(installs.map(\.sync)) * 1e9)), its validation (ZIP structure, every CRC-32) "
            + "\(Format.duration(median(installs.map(\.validation)) * 1e9))"]
        var results = [ScenarioResult(
            name: "download",
            summary: "one \(size >> 20) MiB pack (one stored member of noise) from nginx on loopback: assetpacks "
                + "`ensureLocalAvailability` into a fresh container (download, SHA-256, install); curl `-o FILE`; curl+sync the same and `sync FILE`",
            measurements: Passes.measurements(names: contenders.map(\.0), seconds: seconds, units: 1, bytes: Double(entry.size)),
            basis: .throughput, reference: "assetpacks",
            notes: ["assetpacks checks the size and SHA-256 while the bytes arrive, then installs the file in place (ZIP and "
                    + "CRC-32 checks, index transaction, syncs); curl writes the bytes and syncs nothing; curl+sync then flushes the "
                    + "file (`sync FILE`, timed), the durability an install pays. Same file system, same nginx. The target is "
                    + "against plain curl."]
                + install)]

        if ctx.scale.only?.contains("assetpacks") ?? true {
            let half = entry.size / 2, rest = entry.size - half
            let resumes = try Passes.run([("assetpacks", {
                fresh()
                defer { fresh() }
                try leaveHalf(of: site + "/" + entry.url, count: half, entry: entry, url: packURL, in: container)
                return try download(catalogURL, into: container, size: size)
            })], rounds: rounds)
            let gets = nginx.accessLog(count: rounds) { $0.uri.hasSuffix(".zip") && $0.range != "" }
            let ranges = Set(gets.map(\.range)), statuses = Set(gets.map(\.status))
            let beyond = gets.map { $0.bytesSent - Int(rest) }
            let sent = ranges == ["bytes=\(half)-"] && statuses == [206]
                ? "every resume asked for `bytes=\(half)-` and got 206; nginx sent \(beyond.map(String.init).joined(separator: ", ")) "
                    + "bytes beyond the \(Format.count(Int(rest)))-byte remainder (headers)"
                : "resumes were not all `bytes=\(half)-` → 206: ranges \(ranges.sorted()), statuses \(statuses.sorted()), "
                    + "bytes beyond the remainder \(beyond)"
            results.append(ScenarioResult(
                name: "download/resume",
                summary: "resuming the \(size >> 20) MiB pack from a journal entry and the first half in `staging/`: "
                    + "rehash the half, `Range` for the rest, install; bytes/s count the remainder",
                measurements: Passes.measurements(names: ["assetpacks"], seconds: resumes, units: 1, bytes: Double(rest)),
                basis: .throughput, reference: "assetpacks", notes: [sent]))
        }
        return results
    }

    /// Packages pack `Big` (one stored member of `size` bytes of noise) with
    /// the public API and publishes it into `site`.
    static func publish(size: Int, in dir: String, to site: String) throws {
        let content = dir + "/content", zip = dir + "/Big.zip"
        try FileManager.default.createDirectory(atPath: content, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: content + "/" + member, contents: nil),
              let handle = FileHandle(forWritingAtPath: content + "/" + member) else {
            throw BenchError.failed("cannot create \(content)/\(member)")
        }
        let chunk = 8 << 20
        for i in 0 ..< size / chunk { try handle.write(contentsOf: noise(chunk, seed: UInt64(i) + 1)) }
        try handle.close()
        let manifest = AssetPackManifest(assetPackID: packID, downloadPolicy: .onDemand,
                                         fileSelectors: [.file(member, compression: .stored)], platforms: [.linux], version: 1)
        _ = try Packager.package(manifest, root: content, manifestPath: dir + "/manifest.json", output: zip)
        _ = try AssetPackPublisher.publish(packsAt: [zip], to: site)
        for p in [content, zip] { try FileManager.default.removeItem(atPath: p) }
    }

    static func catalogEntry(_ site: String) throws -> AssetPackCatalog.Entry {
        let data = try Data(contentsOf: URL(fileURLWithPath: site + "/catalog.json"))
        guard let entry = try AssetPackCatalog.parse(data, source: site + "/catalog.json").entry(withID: packID) else {
            throw BenchError.failed("\(site)/catalog.json does not list \(packID)")
        }
        return entry
    }

    /// Makes the pack available in a new container at `container` from the
    /// catalog at `catalogURL`; returns the seconds `ensureLocalAvailability`
    /// took, after checking that the member is readable at its full size.
    static func download(_ catalogURL: String, into container: String, size: Int) throws -> Double {
        let manager = try AssetPackManager(container: .init(path: container),
                                           options: .init(catalog: .init(url: catalogURL)))
        let pack = try blocking { try await manager.assetPack(withID: packID) }
        let seconds = try timed { try blocking { try await manager.ensureLocalAvailability(of: pack) } }
        let got = try manager.contents(at: member, searchingInAssetPackWithID: packID).count
        guard got == size else { throw BenchError.failed("download: \(member) has \(got) bytes, expected \(size)") }
        return seconds
    }

    /// Leaves in a new container what a downloader killed after `count`
    /// bytes leaves: the journal entry and the first `count` bytes of the
    /// pack file in `staging/`. The store is closed again before returning.
    static func leaveHalf(of file: String, count: UInt64, entry: AssetPackCatalog.Entry, url: String, in container: String) throws {
        let group = GroupContainer(path: container)
        let store = try AssetStore(container: group)
        let name = packID + "-1234abcd" + JournalEntry.stagingSuffix, staged = group.stagingPath + "/" + name
        guard let source = FileHandle(forReadingAtPath: file), FileManager.default.createFile(atPath: staged, contents: nil),
              let target = FileHandle(forWritingAtPath: staged) else {
            throw BenchError.failed("cannot copy the first half of \(file) into \(container)/staging")
        }
        defer { try? source.close(); try? target.close() }
        var left = Int(count)
        while left > 0, let chunk = try source.read(upToCount: min(left, 8 << 20)), !chunk.isEmpty {
            try target.write(contentsOf: chunk)
            left -= chunk.count
        }
        try store.putJournalEntry(JournalEntry(
            pack: packID, state: .downloading, url: url, catalogVersion: String(entry.version), stagingName: name,
            expectedSize: entry.size, sha256: hexBytes(entry.sha256), etag: nil))
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        let d = Array(hex.utf8)
        return stride(from: 0, to: d.count, by: 2).map { UInt8(String(decoding: d[$0 ... $0 + 1], as: UTF8.self), radix: 16) ?? 0 }
    }
}

/// The outcome of an async call, handed from its task to the waiting thread.
private final class Outcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Runs `body` in a task and blocks the calling thread until it finishes:
/// the harness is synchronous, the download API async.
func blocking<T>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>(), done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}
