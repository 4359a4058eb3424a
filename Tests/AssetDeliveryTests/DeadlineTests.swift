import Foundation
import Testing
import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// A server that trickles a byte a second is cut off by the minimum-speed
/// deadline or the total deadline, each named in the error; a CA file that
/// is not a regular file is refused before libcurl could open it.
@Suite(.enabled(if: Program.available("python3")), .timeLimit(.minutes(2)))
struct DeadlineTests {
    /// Pack `P` published, its file served a byte a second.
    final class Trickle {
        let site: DownloaderTests.Site
        let entry: Catalog.Entry
        let server: HostileServer
        var request: DownloadRequest { DownloadRequest(entry, url: server.baseURL + "/" + entry.url) }

        init() throws {
            site = try DownloaderTests.Site()
            entry = try site.publish(version: 1, size: 4096)
            server = try HostileServer(routes: ["/" + entry.url: .init(body: try site.dir.read("site/" + entry.url), secondsPerByte: 1)])
        }

        func downloader(minimumSpeed: Int, seconds: Int, total: Double?) throws -> Downloader {
            var options = Downloader.Options()
            options.http.lowSpeedLimit = minimumSpeed
            options.http.lowSpeedTime = seconds
            options.maximumTime = total
            options.initialBackoff = 0.01
            return try Downloader(store: site.store, options: options)
        }
    }

    @Test func aTrickleIsCutOffByTheMinimumSpeedOnceAndTheFileKept() throws {
        let t = try Trickle()
        defer { t.server.stop() }
        #expect(throws: DeliveryError.downloadFailed(url: t.request.url, pack: "P",
                                                     problem: .timedOut(.minimumSpeed(bytesPerSecond: 100, seconds: 2)), detail: "")) {
            try t.downloader(minimumSpeed: 100, seconds: 2, total: nil).download(t.request)
        }
        // Not retried: one request; the bytes that came stay for a resume.
        #expect(t.server.requests().count == 1)
        #expect(try t.site.store.journalEntries().map(\.pack) == ["P"])
        #expect(try t.site.store.packRecord("P") == nil)
        let message = DeliveryError.downloadFailed(url: t.request.url, pack: "P",
                                                   problem: .timedOut(.minimumSpeed(bytesPerSecond: 100, seconds: 2)), detail: "").description
        #expect(message == "download of 'P' from \(t.request.url) failed: timed out: less than 100 bytes a second for 2 s (the minimum-speed deadline)")
    }

    @Test func aTrickleIsCutOffByTheTotalDeadline() throws {
        let t = try Trickle()
        defer { t.server.stop() }
        #expect(throws: DeliveryError.downloadFailed(url: t.request.url, pack: "P", problem: .timedOut(.total(seconds: 3)), detail: "")) {
            try t.downloader(minimumSpeed: 0, seconds: 60, total: 3).download(t.request)
        }
        #expect(t.server.requests().count == 1)
        #expect(try t.site.store.journalEntries().map(\.pack) == ["P"])
    }

    /// Under a receive cap, the minimum speed is at most half the cap.
    @Test func theMinimumSpeedStaysBelowAReceiveCap() {
        var c = HTTPClient.Configuration()
        #expect(c.effectiveLowSpeedLimit == 1024)
        c.maximumReceiveSpeed = 1000
        #expect(c.effectiveLowSpeedLimit == 500)
        c.maximumReceiveSpeed = 1 << 20
        #expect(c.effectiveLowSpeedLimit == 1024)
    }

    @Test func aCAFileThatIsNotARegularFileIsRefusedWithoutBlocking() throws {
        let dir = TemporaryDirectory("ca-files")
        let fifo = dir.file("ca.fifo")
        #expect(mkfifo(fifo, 0o644) == 0)
        try dir.write("big.pem", [UInt8](repeating: 0x41, count: HTTPClient.maximumCAFileSize + 1))
        let store = try AssetStore(container: GroupContainer(path: dir.file("container")))
        let cases: [(String, DeliveryError.CAFileProblem)] = [
            (fifo, .notRegularFile(type: "a FIFO")),
            (dir.path, .notRegularFile(type: "a directory")),
            ("/dev/zero", .notRegularFile(type: "a character device")),
            (dir.file("big.pem"), .tooLarge(size: UInt64(HTTPClient.maximumCAFileSize + 1), maximum: UInt64(HTTPClient.maximumCAFileSize))),
            (dir.file("missing.pem"), .unreadable(Errno(ENOENT, operation: "open", path: dir.file("missing.pem")))),
        ]
        for (path, problem) in cases {
            var options = Downloader.Options()
            options.http.caFile = path
            #expect(throws: DeliveryError.caFileRefused(path: path, problem: problem)) { try Downloader(store: store, options: options) }
            #expect(throws: DeliveryError.caFileRefused(path: path, problem: problem)) {
                try CatalogFetcher(catalogURL: "https://127.0.0.1:9/catalog.json", publicKey: nil, store: store, options: options)
            }
        }
        #expect(DeliveryError.caFileRefused(path: fifo, problem: .notRegularFile(type: "a FIFO")).description
                == "CA file \(fifo) is a FIFO, not a regular file: refused")
    }
}
