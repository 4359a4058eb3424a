import Foundation
import Testing
import AssetPacks
import TestSupport

/// `ensureLocalAvailability` against `assetpack serve` injecting each fault
/// with a fixed seed, on 127.0.0.1: every download ends installed with the
/// published file's SHA-256, and the server's access log (body bytes sent,
/// `Range` asked) shows that a resumed download asks for, and is sent, only
/// the remainder.
@Suite(.timeLimit(.minutes(4)))
struct DownloadFaultTests {
    /// Pack `Big` (1 MiB of noise, stored) published to `site/` with its
    /// catalog, and an empty container.
    final class Fixture {
        let dir = TemporaryDirectory("assetpack-faults")
        let media = noise(1 << 20, seed: 0xFA17)
        var site: String { dir.file("site") }
        var container: String { dir.container }
        /// The published pack's target (`/Big-….zip`), size and SHA-256 (by `sha256sum`).
        let target: String
        let size: Int
        let sha256: String

        init() throws {
            let site = dir.file("site")
            try dir.write("content/big.bin", media)
            let manifest = AssetPackManifest(assetPackID: "Big", downloadPolicy: .onDemand,
                                             fileSelectors: [.file("big.bin", compression: .stored)], platforms: [.linux], version: 1)
            try Packager.package(manifest, root: dir.file("content"), manifestPath: "m.json", output: dir.file("Big.zip"))
            _ = try AssetPackPublisher.publish(packsAt: [dir.file("Big.zip")], to: site, options: .init())
            let zip = try #require(try FileManager.default.contentsOfDirectory(atPath: site).first { $0.hasSuffix(".zip") })
            target = "/" + zip
            size = try dir.read("site/" + zip).count
            sha256 = String(try Program.run("sha256sum", [site + "/" + zip]).out.prefix(64))
        }

        func manager(_ server: ServeHost, stallTimeout: Double = 30, attempts: Int = 10) throws -> AssetPackManager {
            var source = AssetPackManager.CatalogSource(url: server.baseURL + "/catalog.json")
            source.initialBackoff = 0.01
            source.maximumAttempts = attempts
            source.stallTimeout = stallTimeout
            return try AssetPackManager(container: .init(path: container), options: .init(catalog: source))
        }

        /// Downloads `Big` from `server` and checks what got installed: the
        /// published file's SHA-256 and bytes; no partial file left.
        func download(_ server: ServeHost, stallTimeout: Double = 30) async throws {
            let manager = try manager(server, stallTimeout: stallTimeout)
            try await manager.ensureLocalAvailability(of: try await manager.assetPack(withID: "Big"))
            let pack = try await manager.assetPack(withID: "Big")
            #expect(pack.sha256 == sha256 && pack.archiveSize == UInt64(size) && pack.status == [.downloaded, .upToDate])
            #expect(try manager.contents(at: "big.bin", searchingInAssetPackWithID: "Big", verifyingChecksum: true) == Data(media))
            #expect(try Journal(container: container).partialFiles.isEmpty)
        }

        /// The GETs of the pack file, once the one that completed it is logged.
        func account(_ server: ServeHost) -> TransferAccount {
            _ = server.accessLog(count: 1) { $0.target == target && $0.rangeStart + $0.bodyBytes == size }
            return TransferAccount(server.accessLog, target: target)
        }
    }

    /// Faults only on the pack file, so the catalog arrives at once.
    static let packsOnly = ["--fault-path", "*.zip"]

    @Test func dropAfterResumesEachTimeWithTheRemainderOnly() async throws {
        let f = try Fixture()
        let server = try ServeHost(root: f.site, ["--drop-after", "300000"] + Self.packsOnly, executable: CLI.binary)
        defer { server.stop() }
        try await f.download(server)
        let account = f.account(server)
        #expect(account.responses.count == (f.size + 299_999) / 300_000, "\(account.responses)")
        #expect(account.eachResumesWhereTheLastStopped, "\(account.responses)")
        #expect(account.sent == f.size)
        #expect(account.responses.dropLast().allSatisfy { $0.notes == ["fault=drop"] && $0.bodyBytes == 300_000 })
    }

    @Test func stallAfterTimesOutAndResumesWithTheRemainderOnly() async throws {
        let f = try Fixture()
        let server = try ServeHost(root: f.site, ["--stall-after", "400000"] + Self.packsOnly, executable: CLI.binary)
        defer { server.stop() }
        try await f.download(server, stallTimeout: 1)
        let account = f.account(server)
        #expect(account.eachResumesWhereTheLastStopped, "\(account.responses)")
        #expect(account.sent == f.size)
        // Each response stalled after 400,000 bytes but the last (a machine
        // too busy to send a byte for a second would add a retry, not a byte).
        let stalled = account.responses.filter { $0.notes == ["fault=stall"] }
        #expect(stalled.count >= 2 && stalled.allSatisfy { $0.bodyBytes == 400_000 }, "\(account.responses)")
        // Each stall waited out for the stall timeout of 1 s, not the default
        // 30 s: the next request came within 30 s of the stalled one, by the
        // server's clock (so the test's place in a busy run's queue, which
        // the whole download's duration counted, does not count).
        let after = zip(account.responses, account.responses.dropFirst()).filter { $0.0.notes == ["fault=stall"] }
        #expect(after.allSatisfy { $0.1.started.timeIntervalSince($0.0.started) < 30 },
                "\(account.responses.map(\.started))")
    }

    @Test func failRateRetriesUntilAnAnswerThenSendsTheFileOnce() async throws {
        let f = try Fixture()
        // Seed 5 at p = 0.5 answers 500, 503, 500, then the file: the same in every run.
        let server = try ServeHost(root: f.site, ["--fail-rate", "0.5", "--fault-seed", "5"] + Self.packsOnly, executable: CLI.binary)
        defer { server.stop() }
        try await f.download(server)
        let account = f.account(server)
        let all = server.accessLog.filter { $0.target == f.target }
        let failures = all.filter { $0.status == 500 || $0.status == 503 }
        #expect(all.map(\.status) == [500, 503, 500, 200], "\(all)")
        #expect(failures.allSatisfy { $0.notes == ["fault=\($0.status)"] })
        #expect(account.responses.count == 1 && account.eachResumesWhereTheLastStopped && account.sent == f.size, "\(all)")
    }

    @Test func throttleDeliversTheWholeFileAtTheRate() async throws {
        let f = try Fixture()
        let server = try ServeHost(root: f.site, ["--throttle", "2M"] + Self.packsOnly, executable: CLI.binary)
        defer { server.stop() }
        let started = Date()
        try await f.download(server)
        // 1 MiB at 2 MiB/s.
        #expect(Date().timeIntervalSince(started) >= 0.45)
        let account = f.account(server)
        #expect(account.responses.count == 1 && account.sent == f.size, "\(account.responses)")
    }

    @Test func everyFaultAtOnceStillEndsWithThePublishedFile() async throws {
        let f = try Fixture()
        let server = try ServeHost(root: f.site, ["--throttle", "8M", "--drop-after", "250000", "--fail-rate", "0.3",
                                                  "--fault-seed", "11"] + Self.packsOnly, executable: CLI.binary)
        defer { server.stop() }
        try await f.download(server)
        let account = f.account(server)
        #expect(account.eachResumesWhereTheLastStopped, "\(account.responses)")
        #expect(account.sent == f.size)
        let all = server.accessLog.filter { $0.target == f.target }
        #expect(all.contains { $0.status == 500 || $0.status == 503 } && all.contains { $0.notes == ["fault=drop"] }, "\(all)")
    }

    @Test func ignoreRangeRestartsAKilledDownloadFromZeroAndInstallsIt() async throws {
        let f = try Fixture()
        let server = try ServeHost(root: f.site, ["--ignore-range", "--throttle", "1M"] + Self.packsOnly, executable: CLI.binary)
        defer { server.stop() }
        // A process downloading it is killed once part of the file is on disk…
        let journal = try Journal(container: f.container)
        let standing = try journal.killDownload(["fetch", "Big", "--catalog", server.baseURL + "/catalog.json", "--container", f.container],
                                                of: "Big", after: 100_000)
        #expect(standing >= 100_000 && standing < f.size)
        // …the next asks for the rest; the server sends the whole file, which the client takes from byte 0.
        try await f.download(server)
        let resumed = try #require(server.accessLog(count: 1) { $0.target == f.target && !$0.range.isEmpty }.first)
        #expect(resumed.status == 200 && resumed.range == "bytes=\(standing)-" && resumed.notes == ["fault=ignore-range"])
        #expect(resumed.bodyBytes == f.size)
    }

    @Test func theServeAccessLogNotesTheRangeAsked() throws {
        let f = try Fixture()
        let server = try ServeHost(root: f.site, executable: CLI.binary)
        defer { server.stop() }
        #expect(try Curl.fetch(server.baseURL + f.target, ["-r", "1000-"]).status == 206)
        #expect(try Curl.fetch(server.baseURL + "/catalog.json", ["-H", "Range: bytes=\"0 -1\""]).status == 200)
        #expect(try Curl.fetch(server.baseURL + f.target).status == 200)
        let log = server.accessLog(count: 3) { _ in true }
        #expect(log.map(\.range) == ["bytes=1000-", "bytes=?0?-1?", ""], "\(server.log)")
        #expect(log.map(\.bodyBytes) == [f.size - 1000, try f.dir.read("site/catalog.json").count, f.size])
        #expect(server.log.contains("\" 206 \(f.size - 1000) ") && server.log.contains(" range=bytes=1000-\n"), "\(server.log)")
    }
}
