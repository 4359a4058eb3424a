import Foundation
import Testing
import AssetArchive
import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// Downloads from a real nginx (and `assetpack serve` for its faults) on
/// 127.0.0.1 into a container: byte-exact, resumed, verified, refused.
@Suite struct DownloaderTests {
    /// A published directory with one pack of several MiB, and a container.
    final class Site {
        let dir = TemporaryDirectory("downloader")
        var root: String { dir.file("site") }
        let store: AssetStore
        /// The stored member's bytes, by pack version.
        private(set) var payload: [UInt64: [UInt8]] = [:]

        init() throws {
            store = try AssetStore(container: GroupContainer(path: dir.file("container")))
        }

        /// Publishes version `version` of pack `P` (3 MiB of noise in `big.bin`); returns its entry.
        @discardableResult
        func publish(version: UInt64, size: Int = 3 << 20) throws -> Catalog.Entry {
            let bytes = noise(size, seed: version)
            payload[version] = bytes
            let path = dir.file("P-\(version).zip")
            try ArchiveWriter.write([ArchiveWriter.Member(path: "big.bin", source: .bytes(bytes), compression: .stored)],
                                    comment: PackDescription(id: "P", downloadPolicy: .onDemand, platforms: [.linux], version: version).archiveComment,
                                    to: path)
            _ = try Publisher.publish([path], to: root, options: .init(now: CatalogTime(seconds: 1_796_117_400 + Int64(version))))
            let catalog = try Catalog.parse(try dir.read("site/catalog.json"), path: root + "/catalog.json")
            return try #require(catalog.entry(withID: "P"))
        }

        func request(_ entry: Catalog.Entry, base: String, prefix: String = "") -> DownloadRequest {
            DownloadRequest(entry, url: base + "/" + prefix + entry.url)
        }

        func downloader(attempts: Int = 6, stallSeconds: Int = 30) throws -> Downloader {
            var options = Downloader.Options()
            options.http.stallTimeout = Double(stallSeconds)
            options.maximumAttempts = attempts
            options.initialBackoff = 0.01
            options.maximumBackoff = 0.05
            return try Downloader(store: store, options: options)
        }

        /// Leaves what a downloader killed after `count` bytes leaves: the
        /// journal entry and the first bytes of the file in `staging/`.
        func leavePartial(_ request: DownloadRequest, count: Int, etag: String? = nil) throws {
            let file = try dir.read("site/" + request.url.split(separator: "/").last!)
            let name = "P-1234abcd.download"
            try dir.write("container/staging/" + name, Array(file.prefix(count)))
            try store.putJournalEntry(JournalEntry(
                pack: "P", state: .downloading, url: request.url, catalogVersion: String(request.version), stagingName: name,
                expectedSize: request.size, sha256: hexBytes(request.sha256), etag: etag))
        }

        func big() throws -> [UInt8] { Array(try store.contents(at: "big.bin", inPack: "P")) }

        /// The `.download` files in `staging/`.
        func partialFiles() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: dir.file("container/staging")).filter { $0.hasSuffix(".download") }
        }
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        let d = Array(hex.utf8)
        return stride(from: 0, to: d.count, by: 2).map { UInt8(String(decoding: d[$0...$0 + 1], as: UTF8.self), radix: 16)! }
    }

    @Test func aPublishedPackArrivesByteExact() throws {
        let s = try Site()
        let entry = try s.publish(version: 1)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        var reported: [UInt64] = []
        let outcome = try s.downloader().download(s.request(entry, base: nginx.baseURL)) { done, total in
            #expect(total == entry.size)
            reported.append(done)
        }
        #expect(outcome.change == .installed)
        #expect(outcome.record.catalogVersion == "1")
        #expect(try s.big() == s.payload[1])
        #expect(reported.last == entry.size)
        #expect(try s.store.journalEntries().isEmpty)
        #expect(try s.partialFiles().isEmpty)
        let gets = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 1 && gets.first?.status == 200 && gets.first?.range == "")
    }

    @Test func aPartialFileIsResumedWithRangeAndOnlyTheRestIsSent() throws {
        let s = try Site()
        let entry = try s.publish(version: 1)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let request = s.request(entry, base: nginx.baseURL)
        let half = Int(entry.size / 2)
        try s.leavePartial(request, count: half)
        try s.downloader().download(request)
        #expect(try s.big() == s.payload[1])
        let gets = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 1)
        let get = try #require(gets.first)
        #expect(get.status == 206)
        #expect(get.range == "bytes=\(half)-")
        let rest = Int(entry.size) - half
        // The body is the remainder; the rest of bytes_sent is headers.
        #expect(get.bytesSent >= rest && get.bytesSent < rest + 1024)
        #expect(try s.store.journalEntries().isEmpty)
        #expect(try s.partialFiles().isEmpty)
    }

    @Test func damagedBytesInThePartialFileAreCaughtByTheRehash() throws {
        let s = try Site()
        let entry = try s.publish(version: 1)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let request = s.request(entry, base: nginx.baseURL)
        try s.leavePartial(request, count: 4096)
        var partial = try s.dir.read("container/staging/P-1234abcd.download")
        partial[100] ^= 1
        try s.dir.write("container/staging/P-1234abcd.download", partial)
        #expect {
            try s.downloader().download(request)
        } throws: { error in
            guard case .downloadFailed(_, "P", .checksumMismatch, _) = error as? DeliveryError else { return false }
            return true
        }
        #expect(try s.store.packRecord("P") == nil)
        #expect(try s.partialFiles().isEmpty)
        // The next download starts from zero and succeeds.
        try s.downloader().download(request)
        #expect(try s.big() == s.payload[1])
    }

    @Test func aSHA256MismatchInstallsNothingAndKeepsThePreviousVersion() throws {
        let s = try Site()
        let v1 = try s.publish(version: 1)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        try s.downloader().download(s.request(v1, base: nginx.baseURL))
        var v2 = try s.publish(version: 2)
        let genuine = v2.sha256
        v2.sha256 = String(repeating: "0", count: 64)
        #expect(throws: DeliveryError.downloadFailed(url: s.request(v2, base: nginx.baseURL).url, pack: "P",
                                                     problem: .checksumMismatch(expected: v2.sha256, found: genuine), detail: "")) {
            try s.downloader().download(s.request(v2, base: nginx.baseURL))
        }
        #expect(try s.store.packRecord("P")?.catalogVersion == "1")
        #expect(try s.big() == s.payload[1])
        #expect(try s.store.journalEntries().isEmpty)
        #expect(try s.partialFiles().isEmpty)
    }

    @Test func aMissingFileIsNotFoundAtOnce() throws {
        let s = try Site()
        var entry = try s.publish(version: 1)
        entry.url = "P-000000000000.zip"
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let request = s.request(entry, base: nginx.baseURL)
        #expect(throws: DeliveryError.downloadFailed(url: request.url, pack: "P", problem: .notFound(status: 404), detail: "")) {
            try s.downloader().download(request)
        }
        // Not retried.
        #expect(nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }.count == 1)
        #expect(try s.store.packRecord("P") == nil)
        #expect(try s.store.journalEntries().isEmpty)
        #expect(try s.partialFiles().isEmpty)
    }

    @Test func aServerThatIgnoresRangeGetsACorrectRestartFromZero() throws {
        let s = try Site()
        let entry = try s.publish(version: 1)
        let nginx = try NginxHost(root: s.root, extra: "location ^~ /norange/ { alias \(s.root)/; max_ranges 0; }")
        defer { nginx.stop() }
        let request = s.request(entry, base: nginx.baseURL, prefix: "norange/")
        try s.leavePartial(request, count: Int(entry.size / 3))
        try s.downloader().download(request)
        #expect(try s.big() == s.payload[1])
        let gets = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 1 && gets.first?.status == 200 && gets.first?.range == "bytes=\(entry.size / 3)-")
        #expect(try s.partialFiles().isEmpty)
    }

    @Test func aChangedFileFailsIfRangeAndRestartsFromZero() throws {
        let s = try Site()
        let entry = try s.publish(version: 1)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let request = s.request(entry, base: nginx.baseURL)
        try s.leavePartial(request, count: 5000, etag: "\"not-the-file-any-more\"")
        try s.downloader().download(request)
        #expect(try s.big() == s.payload[1])
        let gets = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 1)
        #expect(gets.first?.status == 200 && gets.first?.range == "bytes=5000-" && gets.first?.ifRange == "\"not-the-file-any-more\"")
    }

    @Test func aStalledBodyIsATransientFailureAndResumes() throws {
        let s = try Site()
        let entry = try s.publish(version: 1, size: 256 << 10)
        // Every response stalls after 100 KB; each retry resumes where it stopped.
        let serve = try ServeHost(root: s.root, ["--stall-after", "100000"])
        defer { _ = serve.stop() }
        try s.downloader(attempts: 6, stallSeconds: 1).download(s.request(entry, base: serve.baseURL))
        #expect(try s.big() == s.payload[1])
    }

    @Test func aJournalNameOutsideStagingIsNeitherReadNorDeleted() throws {
        let s = try Site()
        let entry = try s.publish(version: 1)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let request = s.request(entry, base: nginx.baseURL)
        try s.dir.write("bystander.download", Array("keep me".utf8))
        try s.store.putJournalEntry(JournalEntry(
            pack: "P", state: .downloading, url: request.url, catalogVersion: "1", stagingName: "../../bystander.download",
            expectedSize: request.size, sha256: Self.hexBytes(request.sha256)))
        try s.downloader().download(request)
        #expect(try s.big() == s.payload[1])
        #expect(try s.dir.read("bystander.download") == Array("keep me".utf8))
        #expect(nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }.first?.range == "")
    }

    @Test func aNewerCatalogEntryDiscardsTheOldPartialFile() throws {
        let s = try Site()
        let v1 = try s.publish(version: 1)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        try s.leavePartial(s.request(v1, base: nginx.baseURL), count: 1000)
        let v2 = try s.publish(version: 2)
        try s.downloader().download(s.request(v2, base: nginx.baseURL))
        #expect(try s.big() == s.payload[2])
        let gets = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 1 && gets.first?.status == 200 && gets.first?.range == "")
        #expect(try s.partialFiles().isEmpty)
    }

    @Test func moreBytesThanTheCatalogSaysStopTheDownload() throws {
        let s = try Site()
        var entry = try s.publish(version: 1)
        entry.size -= 1
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        #expect {
            try s.downloader().download(s.request(entry, base: nginx.baseURL))
        } throws: { error in
            guard case .downloadFailed(_, "P", .sizeMismatch(let expected, let received), _) = error as? DeliveryError else { return false }
            return expected == entry.size && received > expected
        }
        #expect(try s.store.packRecord("P") == nil)
        #expect(try s.store.journalEntries().isEmpty)
        #expect(try s.partialFiles().isEmpty)
    }

    @Test func fewerBytesThanTheCatalogSaysAreASizeMismatch() throws {
        let s = try Site()
        var entry = try s.publish(version: 1)
        entry.size += 10
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        #expect(throws: DeliveryError.downloadFailed(url: s.request(entry, base: nginx.baseURL).url, pack: "P",
                                                     problem: .sizeMismatch(expected: entry.size, received: entry.size - 10), detail: "")) {
            try s.downloader().download(s.request(entry, base: nginx.baseURL))
        }
        #expect(try s.store.packRecord("P") == nil)
    }

    @Test func aRefusedConnectionIsRetriedThenGivesUpResumably() throws {
        let s = try Site()
        let entry = try s.publish(version: 1)
        let port = try freeLoopbackPort()
        let request = s.request(entry, base: "http://127.0.0.1:\(port)")
        let started = Date()
        #expect {
            try s.downloader(attempts: 3).download(request)
        } throws: { error in
            guard case .downloadFailed(request.url, "P", .retriesExhausted(attempts: 3), let detail) = error as? DeliveryError else { return false }
            return !detail.isEmpty
        }
        #expect(Date().timeIntervalSince(started) < 30)
        // The journal keeps the download for whoever comes next.
        let journal = try s.store.journalEntries()
        #expect(journal.count == 1 && journal.first?.url == request.url && journal.first?.expectedSize == entry.size)
        #expect(try s.partialFiles().count == 1)
        #expect(try s.store.packRecord("P") == nil)
    }

    @Test func serversFaultsAreRetriedUntilTheFileIsWhole() throws {
        let s = try Site()
        let entry = try s.publish(version: 1)
        // Every connection drops after 1 MiB of body: four resumed requests at least.
        let serve = try ServeHost(root: s.root, ["--drop-after", "1048576"])
        defer { _ = serve.stop() }
        try s.downloader(attempts: 10).download(s.request(entry, base: serve.baseURL))
        #expect(try s.big() == s.payload[1])
        #expect(try s.partialFiles().isEmpty)
    }

    @Test func aServerErrorIsTransient() throws {
        let s = try Site()
        let entry = try s.publish(version: 1, size: 64 << 10)
        let serve = try ServeHost(root: s.root, ["--fail-rate", "1"])
        defer { _ = serve.stop() }
        #expect {
            try s.downloader(attempts: 2).download(s.request(entry, base: serve.baseURL))
        } throws: { error in
            guard case .downloadFailed(_, "P", .retriesExhausted(attempts: 2), let detail) = error as? DeliveryError else { return false }
            return detail == "HTTP 500" || detail == "HTTP 503"
        }
    }

    @Test func aDownloaderKilledMidwayIsResumedByTheNextProcess() throws {
        let s = try Site()
        let entry = try s.publish(version: 1, size: 2 << 20)
        let nginx = try NginxHost(root: s.root, extra: "location ^~ /slow/ { alias \(s.root)/; limit_rate 2m; }")
        defer { nginx.stop() }
        let request = s.request(entry, base: nginx.baseURL, prefix: "slow/")
        let helper = Process()
        helper.executableURL = URL(fileURLWithPath: Program.built("assetpack-testhelper"))
        helper.arguments = ["download", "--container", s.store.container.path, "--id", "P", "--url", request.url,
                            "--version", String(request.version), "--size", String(request.size), "--sha256", request.sha256]
        helper.standardOutput = FileHandle.nullDevice
        try helper.run()
        // Wait (bounded) until some bytes are on disk, then kill it.
        let deadline = Date().addingTimeInterval(30)
        var written = 0
        while Date() < deadline && helper.isRunning {
            if let name = try s.partialFiles().first,
               let size = try? FileManager.default.attributesOfItem(atPath: s.dir.file("container/staging/" + name))[.size] as? Int,
               size >= 300_000 {
                written = size
                break
            }
            usleep(10_000)
        }
        kill(helper.processIdentifier, SIGKILL)
        helper.waitUntilExit()
        #expect(written > 0 && written < Int(entry.size))
        #expect(try s.store.journalEntries().count == 1)
        try s.downloader().download(request)
        #expect(try s.big() == s.payload[1])
        let resumed = try #require(nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") && $0.status == 206 }.first)
        #expect(resumed.range.hasPrefix("bytes=") && resumed.range != "bytes=0-")
        #expect(resumed.ifRange.hasPrefix("\""))
        #expect(try s.store.journalEntries().isEmpty)
    }
}
