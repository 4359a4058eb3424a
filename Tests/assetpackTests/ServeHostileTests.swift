import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Hostile and malformed requests to `assetpack serve`, on raw sockets
/// (curl would normalize them): each gets its status or a closed
/// connection, nothing outside the directory is ever sent, and the server
/// keeps serving others.
@Suite(.serialized) struct ServeHostileTests {
    typealias Site = ServeCommandTests.Site

    /// One request on a new connection; its response (`nil`: closed without one).
    func exchange(_ server: ServeProcess, _ request: String) throws -> RawResponse? {
        let c = try server.connect()
        c.send(request)
        return c.response()
    }

    func get(_ target: String, fields: String = "") -> String {
        "GET \(target) HTTP/1.1\r\nHost: x\r\n\(fields)\r\n"
    }

    /// The server still answers a plain request.
    func stillServes(_ server: ServeProcess, _ site: Site) throws {
        let r = try exchange(server, get("/catalog.json"))
        #expect(r?.status == 200 && r?.body == site.catalog)
    }

    @Test(.timeLimit(.minutes(3)))
    func pathsOutsideTheDirectoryAreNeverServed() throws {
        let site = try Site(bigSize: 1000)
        #expect(symlink(site.dir.file("outside.txt"), site.dir.file("site/escape")) == 0)
        #expect(symlink("../outside.txt", site.dir.file("site/relative-escape")) == 0)
        #expect(symlink("/etc", site.dir.file("site/etc-link")) == 0)
        #expect(symlink("catalog.json", site.dir.file("site/inside-link")) == 0)
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        for (target, status) in [
            ("/../outside.txt", 400), ("/docs/../../outside.txt", 400), ("/%2e%2e/outside.txt", 400), ("/%2E%2e/outside.txt", 400),
            ("/..%2foutside.txt", 400), ("/docs%2f..%2f..%2foutside.txt", 400), ("/..%5coutside.txt", 400),
            ("/catalog.json%00.zip", 400), ("/%zz", 400), ("http://x/../outside.txt", 400), ("*", 400),
            ("/escape", 404), ("/relative-escape", 404), ("/etc-link/passwd", 404), ("/etc/passwd", 404),
            (site.dir.file("outside.txt"), 404), ("http://x" + site.dir.file("outside.txt"), 404),
        ] {
            let r = try exchange(server, get(target))
            #expect(r?.status == status, "\(target): \(r.map { "\($0.status)" } ?? "closed")")
            #expect(r.map { !String(decoding: $0.body, as: UTF8.self).contains("secret") } ?? true)
        }
        // Absolute form is accepted, its path used; a symlink that stays inside is followed.
        #expect(try exchange(server, get("http://example.com/catalog.json"))?.body == site.catalog)
        #expect(try exchange(server, get("/inside-link"))?.body == site.catalog)
        try stillServes(server, site)
    }

    @Test(.timeLimit(.minutes(3)))
    func malformedRequestsGetTheirStatusAndTheServerGoesOn() throws {
        let site = try Site(bigSize: 1000)
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        for (request, status) in [
            ("garbage\r\n\r\n", 400), ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505), ("GET /\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\n\r\n", 400), ("DELETE /catalog.json HTTP/1.1\r\nHost: x\r\n\r\n", 405),
            ("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody", 413),
            ("GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400),
        ] {
            let c = try server.connect()
            c.send(request)
            let r = c.response()
            #expect(r?.status == status, "\(request.debugDescription): \(r.map { "\($0.status)" } ?? "closed")")
            #expect(r?.fields["connection"] == "close")
            if status == 405 { #expect(r?.fields["allow"] == "GET, HEAD") }
            // A refusal closes the connection.
            #expect(c.read(timeout: 10).closed)
        }
        try stillServes(server, site)
    }

    @Test(.timeLimit(.minutes(3)))
    func malformedRangesAreIgnoredOrUnsatisfiable() throws {
        let site = try Site(bigSize: 1000)
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        for (range, status, length) in [
            ("bytes=5-2", 200, 1000), ("bytes=-0", 416, 0), ("bytes=0-1,3-4", 200, 1000), ("bytes=99999999999999999999999-", 416, 0),
            ("bytes=0-99999999999999999999999", 206, 1000), ("bytes=abc", 200, 1000), ("bytes=-99999999999999999999", 206, 1000),
            ("lines=1-2", 200, 1000), ("bytes=10-19", 206, 10),
        ] {
            let r = try exchange(server, get("/packs/big.zip", fields: "Range: \(range)\r\n"))
            #expect(r?.status == status, "\(range): \(r.map { "\($0.status)" } ?? "closed")")
            if status == 416 { #expect(r?.fields["content-range"] == "bytes */1000") } else { #expect(r?.body.count == length, "\(range)") }
        }
        let r = try exchange(server, get("/packs/big.zip", fields: "Range: bytes=10-19\r\n"))
        #expect(r?.body == Array(site.big[10..<20]) && r?.fields["content-range"] == "bytes 10-19/1000")
        try stillServes(server, site)
    }

    @Test(.timeLimit(.minutes(3)))
    func pipelinedRequestsAreAnsweredInOrderAndHTTP10Closes() throws {
        let site = try Site(bigSize: 1000)
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        let c = try server.connect()
        c.send(get("/catalog.json") + "HEAD /packs/big.zip HTTP/1.1\r\nHost: x\r\n\r\n" + get("/docs/a%20b.txt") + get("/nothing"))
        var bytes = c.read(timeout: 20) { RawResponse.sequence($0, heads: [false, true, false, false]).count == 4 }.bytes
        let responses = RawResponse.sequence(bytes, heads: [false, true, false, false])
        #expect(responses.map(\.status) == [200, 200, 200, 404])
        #expect(responses.first?.body == site.catalog && responses.dropFirst(2).first?.body == site.text)
        #expect(responses.dropFirst().first?.fields["content-length"] == "1000")
        // HTTP/1.0 closes after the response unless it asks to keep alive.
        let old = try server.connect()
        old.send("GET /catalog.json HTTP/1.0\r\n\r\n")
        let read = old.read(timeout: 20)
        #expect(read.closed && RawResponse(read.bytes)?.fields["connection"] == "close")
        let kept = try server.connect()
        kept.send("GET /catalog.json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(kept.response()?.fields["connection"] == "keep-alive")
        kept.send("GET /catalog.json HTTP/1.0\r\n\r\n")
        bytes = kept.read(timeout: 20).bytes
        #expect(RawResponse(bytes)?.body == site.catalog)
    }

    @Test(.timeLimit(.minutes(3)))
    func headersOverTheLimitGet431OrAClosedConnection() throws {
        let site = try Site(bigSize: 1000)
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        let c = try server.connect()
        let filler = String(repeating: "X-Filler: " + String(repeating: "a", count: 1000) + "\r\n", count: 64)
        c.send("GET /catalog.json HTTP/1.1\r\nHost: x\r\n" + filler + "\r\n")
        let read = c.read(timeout: 20)
        #expect(read.closed)
        if let r = RawResponse(read.bytes) { #expect(r.status == 431) }
        #expect(server.log.contains("\" 431 "))
        try stillServes(server, site)
    }

    @Test(.timeLimit(.minutes(4)))
    func aThousandIdleConnectionsDoNotStopOthersBeingServed() throws {
        let site = try Site(bigSize: 1000)
        // The default limit (512): the oldest idle connections give way.
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        var idle: [RawConnection] = []
        for _ in 0..<1000 { idle.append(try server.connect()) }
        try stillServes(server, site)
        // The newest idle connections are still open and can still be served.
        let last = try #require(idle.last)
        last.send(get("/catalog.json"))
        #expect(last.response()?.status == 200)
        idle.removeAll()
    }

    @Test(.timeLimit(.minutes(3)))
    func pastTheLimitWithEveryConnectionBusyANewOneGets503() throws {
        let site = try Site(bigSize: 100_000)
        let server = try ServeProcess(site.root, ["--max-connections", "2", "--stall-after", "10", "--fault-path", "/packs/*"])
        defer { server.stop() }
        var busy: [RawConnection] = []
        for _ in 0..<2 {
            let c = try server.connect()
            c.send(get("/packs/big.zip"))
            #expect(c.read(timeout: 20) { RawResponse($0, head: true) != nil }.bytes.count > 0)
            busy.append(c)
        }
        let r = try exchange(server, get("/catalog.json"))
        #expect(r?.status == 503 && r?.fields["retry-after"] == "1")
        busy.removeAll()
        // Once they are gone, it serves again.
        #expect(eventually(timeout: 20) { (try? exchange(server, get("/catalog.json")))??.status == 200 }, "\(server.log)")
    }

    @Test(.timeLimit(.minutes(3)))
    func aKeptAliveConnectionIsClosedAfterTheIdleTimeout() throws {
        let site = try Site(bigSize: 1000)
        let server = try ServeProcess(site.root, ["--idle-timeout", "1"])
        defer { server.stop() }
        let c = try server.connect()
        // Before the request: the idle time starts when the response has gone out, later.
        let started = Date()
        c.send(get("/catalog.json"))
        #expect(c.response()?.fields["connection"] == "keep-alive")
        let rest = c.read(timeout: 20)
        #expect(rest.closed && rest.bytes.isEmpty)
        #expect(Date().timeIntervalSince(started) >= 0.9)
        try stillServes(server, site)
    }

    @Test(.timeLimit(.minutes(3)))
    func hugeTimeoutsAndRatesAreNoTimeoutsNotACrash() throws {
        let site = try Site(bigSize: 1000)
        let server = try ServeProcess(site.root, ["--request-timeout", "1e300", "--idle-timeout", "1e300", "--throttle", "8000000T"])
        defer { server.stop() }
        try stillServes(server, site)
        let r = try exchange(server, get("/packs/big.zip"))
        #expect(r?.body == site.big)
    }

    @Test(.timeLimit(.minutes(3)))
    func aSlowSenderIsClosedAfterTheRequestTimeoutWhileOthersAreServed() throws {
        let site = try Site(bigSize: 1000)
        let server = try ServeProcess(site.root, ["--request-timeout", "1"])
        defer { server.stop() }
        let slow = try server.connect()
        let started = Date()
        var closed = false
        var servedMeanwhile = false
        let bytes = Array(("GET /catalog.json HTTP/1.1\r\nHost: x\r\nX-Slow: " + String(repeating: "s", count: 200)).utf8)
        for byte in bytes {
            // One byte each 200 ms: the pace of the attack, not a wait for the server.
            if !slow.send([byte]) { closed = true; break }
            let read = slow.read(timeout: 0.2)
            if read.closed || !read.bytes.isEmpty { closed = true; break }
            if !servedMeanwhile { servedMeanwhile = (try? exchange(server, get("/catalog.json")))??.status == 200 }
            if Date().timeIntervalSince(started) > 15 { break }
        }
        let took = Date().timeIntervalSince(started)
        #expect(closed, "the slow sender was not closed in \(took) s")
        #expect(took >= 0.9 && took < 15, "closed after \(took) s")
        #expect(servedMeanwhile)
        #expect(server.log.contains("request timeout"))
        try stillServes(server, site)
    }
}

extension RawResponse {
    /// The responses at the start of `bytes`, one after the other, while whole.
    static func sequence(_ bytes: [UInt8], heads: [Bool]) -> [RawResponse] {
        var out: [RawResponse] = []
        var rest = bytes
        while out.count < heads.count, let r = RawResponse(rest, head: heads[out.count]) {
            out.append(r)
            rest = r.rest
        }
        return out
    }
}
