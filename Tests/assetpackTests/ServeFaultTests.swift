import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Every fault `assetpack serve` injects, as the real `curl` sees it on
/// 127.0.0.1.
@Suite(.serialized) struct ServeFaultTests {
    typealias Site = ServeCommandTests.Site
    static let curlAvailable = Program.available("curl")

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func throttleCapsTheBodyRate() throws {
        let site = try Site(bigSize: 200 << 10)
        let server = try ServeProcess(site.root, ["--throttle", "100K"])
        defer { server.stop() }
        let out = site.dir.file("got")
        let started = Date()
        #expect(try server.status("/packs/big.zip", output: out) == "200")
        let took = Date().timeIntervalSince(started)
        #expect(took >= 1.5, "200 KiB at 100 KiB/s took \(took) s")
        #expect(try site.file("got") == site.big)
        #expect(server.log.contains("faults: throttle 102400 B/s"))
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func dropAfterClosesTheConnectionAfterThatManyBodyBytes() throws {
        let site = try Site(bigSize: 100_000)
        let server = try ServeProcess(site.root, ["--drop-after", "30000"])
        defer { server.stop() }
        let out = site.dir.file("got")
        let r = try server.curl(["-o", out], "/packs/big.zip")
        #expect(r.status == 18, "curl: \(r.status) \(r.stderr)")  // CURLE_PARTIAL_FILE
        #expect(try site.file("got") == Array(site.big[0..<30000]))
        // A body no longer than the limit is whole.
        #expect(try server.status("/catalog.json", output: out) == "200")
        #expect(try site.file("got") == site.catalog)
        // So is a range that ends before it.
        let range = try server.curl(["-r", "0-999", "-o", out], "/packs/big.zip")
        #expect(range.status == 0)
        #expect(try site.file("got") == Array(site.big[0..<1000]))
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func failRateOneFailsEveryRequest() throws {
        let site = try Site(bigSize: 1000)
        let server = try ServeProcess(site.root, ["--fail-rate", "1", "--fault-seed", "1"])
        defer { server.stop() }
        let codes = try codes(server, count: 12)
        #expect(codes.count == 12 && codes.allSatisfy { $0 == "500" || $0 == "503" }, "\(codes)")
        #expect(Set(codes).count == 2, "both statuses are drawn: \(codes)")
        let unavailable = try server.curl(["-D", "-", "-o", "/dev/null"], "/catalog.json").out
        if unavailable.hasPrefix("HTTP/1.1 503") { #expect(unavailable.contains("Retry-After: 1\r\n")) }
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func failRateWithASeedReplaysTheSameSequence() throws {
        let site = try Site(bigSize: 1000)
        var runs: [[String]] = []
        for seed in ["7", "7", "8"] {
            let server = try ServeProcess(site.root, ["--fail-rate", "0.5", "--fault-seed", seed])
            runs.append(try codes(server, count: 24))
            server.stop()
            #expect(server.log.contains("fault seed \(seed);"))
        }
        #expect(runs[0] == runs[1], "seed 7 twice: \(runs[0]) vs \(runs[1])")
        #expect(runs[0] != runs[2], "seeds 7 and 8 give the same 24 draws")
        #expect(runs[0].contains("200") && runs[0].contains { $0 != "200" }, "\(runs[0])")
    }

    /// The statuses of `count` sequential GETs, from one curl on one connection.
    func codes(_ server: ServeProcess, count: Int) throws -> [String] {
        let paths = Array(repeating: "/catalog.json", count: count)
        let args = paths.flatMap { _ in ["-o", "/dev/null"] } + ["-w", "%{http_code}\n"] + paths.map(server.absolute)
        return try server.curl(args).out.split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func stallAfterSendsThatManyBytesThenNothingUntilTheClientGivesUp() throws {
        let site = try Site(bigSize: 100_000)
        let server = try ServeProcess(site.root, ["--stall-after", "20000"])
        defer { server.stop() }
        let out = site.dir.file("got")
        let started = Date()
        let r = try server.curl(["--max-time", "2", "-o", out], "/packs/big.zip")
        #expect(r.status == 28, "curl: \(r.status) \(r.stderr)")  // CURLE_OPERATION_TIMEDOUT
        #expect(Date().timeIntervalSince(started) >= 1.5)
        #expect(try site.file("got") == Array(site.big[0..<20000]))
        // The server still serves others meanwhile and after.
        #expect(try server.status("/catalog.json", output: out) == "200")
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func ignoreRangeAlwaysSendsTheWholeFile() throws {
        let site = try Site(bigSize: 5000)
        let server = try ServeProcess(site.root, ["--ignore-range"])
        defer { server.stop() }
        let out = site.dir.file("got")
        #expect(try server.status("/packs/big.zip", ["-r", "100-199"], output: out) == "200")
        #expect(try site.file("got") == site.big)
        #expect(try server.status("/packs/big.zip", ["-r", "99999-"], output: out) == "200")
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func faultPathLimitsFaultsToMatchingPaths() throws {
        let site = try Site(bigSize: 5000)
        let server = try ServeProcess(site.root, ["--fail-rate", "1", "--ignore-range", "--fault-path", "/packs/*"])
        defer { server.stop() }
        #expect(try server.status("/catalog.json") == "200")
        #expect(try server.status("/catalog.json", ["-r", "0-1"]) == "206")
        #expect(["500", "503"].contains(try server.status("/packs/big.zip")))
    }
}
