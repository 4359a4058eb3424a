import Foundation
import Testing
@testable import AssetPacks
import TestSupport

/// `fetch` and the daemon against a hostile server on 127.0.0.1 that
/// trickles a pack a byte a second: the download ends with the deadline
/// named, and one peer's trickle or FIFO CA file does not stop the
/// daemon's other downloads.
@Suite(.serialized, .enabled(if: Program.available("python3")), .timeLimit(.minutes(3)))
struct DeadlineCommandTests {
    typealias Site = PublishCommandTests.Site
    typealias Daemon = DaemonTests.Daemon

    /// On-demand packs `Slow` (trickled, a byte a second) and `Fast`, and
    /// an unsigned catalog, served by a hostile server.
    final class Fixture {
        let site: Site
        let server: HostileServer
        var container: String { site.dir.file("container") }
        var catalog: String { server.baseURL + "/catalog.json" }
        let slowURL: String

        init() throws {
            let site = try Site(keys: false)
            let packs = [try site.pack("Slow", "slow", policy: DownloadCommandTests.onDemand),
                         try site.pack("Fast", "fast", policy: DownloadCommandTests.onDemand)]
            guard try site.publish(packs).status == 0 else { throw TestFailure("publish failed") }
            var routes: [String: HostileServer.Route] = ["/catalog.json": .init(body: try site.dir.read("out/catalog.json"))]
            var slow = ""
            for name in try site.files() where name.hasSuffix(".zip") {
                let trickled = name.hasPrefix("Slow-")
                if trickled { slow = "/" + name }
                routes["/" + name] = .init(body: try site.dir.read("out/" + name), secondsPerByte: trickled ? 1 : nil)
            }
            self.site = site
            server = try HostileServer(routes: routes)
            slowURL = server.baseURL + slow
        }

        deinit { server.stop() }

        func fetch(_ pack: String, _ extra: [String] = []) throws -> Program.Result {
            try CLI.assetpack(["fetch", pack, "--catalog", catalog] + extra, container: container)
        }
    }

    @Test func aTrickledDownloadEndsAtTheMinimumSpeedNamingPackURLAndDeadline() throws {
        let f = try Fixture()
        let r = try f.fetch("Slow", ["--min-rate", "100", "--min-rate-time", "2"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("download of 'Slow' from \(f.slowURL) failed: timed out: less than 100 bytes a second for 2 s (the minimum-speed deadline)"),
                "\(r.stderr)")
        #expect(!r.stderr.contains("attempts"))
        #expect(try f.fetch("Fast").status == 0)
    }

    @Test func aTrickledDownloadEndsAtTheTotalDeadline() throws {
        let f = try Fixture()
        let r = try f.fetch("Slow", ["--min-rate", "0", "--max-time", "3"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("download of 'Slow' from \(f.slowURL) failed: timed out: still running after 3 s (the total deadline)"),
                "\(r.stderr)")
    }

    /// Through one daemon with one download slot: a peer's FIFO as CA file
    /// is refused at once, a trickled download ends at the daemon's minimum
    /// speed, and a download after them proceeds.
    @Test func aFIFOCAFileAndATrickleDoNotStopTheDaemonsOtherDownloads() throws {
        let f = try Fixture()
        let fifo = f.site.dir.file("ca.fifo")
        #expect(mkfifo(fifo, 0o644) == 0)
        let daemon = try Daemon(f.container, ["--max-downloads", "1", "--min-rate", "100", "--min-rate-time", "2"])
        defer { daemon.stop() }
        // A peer's request naming the FIFO: the daemon refuses it without opening it for reading.
        let request = DaemonDownloadRequest(pack: "Fast", catalogURL: f.catalog, publicKey: nil, caFile: fifo, wait: true, discretionary: false)
        #expect {
            try AssetPackClient(socketPath: daemon.container.daemonSocketPath).download(request)
        } throws: { error in
            guard let error = error as? AssetPackError else { return false }
            return error.code == .invalidCAFile && error.reason == .caFileNotRegular && error.path == fifo
                && error.message == "CA file \(fifo) is a FIFO, not a regular file: refused"
        }
        // The same refusal, in the caller, from the command line.
        let refused = try f.fetch("Fast", ["--ca-file", fifo])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("CA file \(fifo) is a FIFO, not a regular file: refused"), "\(refused.stderr)")
        // The caller waits on the daemon: the trickle is the daemon's and ends at its minimum speed.
        let slow = try f.fetch("Slow")
        #expect(slow.status == 1)
        #expect(slow.stderr.contains("download of 'Slow' from \(f.slowURL) failed: timed out: less than 100 bytes a second for 2 s"),
                "\(slow.stderr)")
        let fast = try f.fetch("Fast")
        #expect(fast.status == 0, "\(fast.stderr)")
        #expect(try CLI.assetpack(["cat", "files/data.txt", "--pack", "Fast"], container: f.container).out == "fast")
        for pack in ["Fast", "Slow"] {
            #expect(daemon.child.stderr.contains("download of '\(pack)' requested by uid"), "\(daemon.child.stderr)")
        }
    }

    @Test(arguments: [
        (["--min-rate", "slow"], "'--min-rate' needs a number of bytes (with K, M, G or T), not 'slow'"),
        (["--min-rate-time", "0"], "'--min-rate-time' needs a whole number from 1 to 86400"),
        (["--max-time", "-1"], "'--max-time' needs a non-negative number, not '-1'"),
    ])
    func badDeadlinesAreUsageErrors(args: [String], message: String) throws {
        let dir = TemporaryDirectory("deadline-options")
        for command in [["fetch", "P", "--catalog", "http://127.0.0.1:9/catalog.json"], ["daemon"]] {
            let r = try CLI.assetpack(command + args, container: dir.container)
            #expect(r.status == 64 && r.stderr.contains(message), "\(command) \(r.stderr)")
        }
    }
}
