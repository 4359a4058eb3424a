import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `assetpack serve` in its own process, with the real `curl` on 127.0.0.1:
/// files byte for byte, HEAD, ranges, conditional requests, keep-alive,
/// and the command's errors.
@Suite(.serialized) struct ServeCommandTests {
    /// A directory to serve: small files, a big one (9 MiB unless asked),
    /// a subdirectory, a name with a space.
    final class Site {
        let dir = TemporaryDirectory("assetpack-serve")
        let big: [UInt8]
        let text = Array("hello, assets\n".utf8)
        let catalog = Array("{\"packs\": []}\n".utf8)
        var root: String { dir.file("site") }

        /// `bigSize`: the size of `packs/big.zip`, random bytes.
        init(bigSize: Int = 9 << 20) throws {
            let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
            big = [UInt8](random.readData(ofLength: bigSize))
            try random.close()
            try dir.write("site/packs/big.zip", big)
            try dir.write("site/catalog.json", catalog)
            try dir.write("site/docs/a b.txt", text)
            try dir.write("site/empty.sig", [])
            try dir.write("outside.txt", "secret\n")
        }

        func file(_ relative: String) throws -> [UInt8] { try dir.read(relative) }
    }

    static let curlAvailable = Program.available("curl")

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(4)))
    func curlGetsEveryFileByteForByteAndHead() throws {
        let site = try Site()
        let server = try ServeProcess(site.root)
        #expect(server.url.hasPrefix("http://127.0.0.1:") && server.url.hasSuffix("/"))
        for (path, want) in [("/packs/big.zip", site.big), ("/catalog.json", site.catalog), ("/docs/a%20b.txt", site.text),
                             ("/empty.sig", [])] {
            let out = site.dir.file("got")
            #expect(try server.status(path, output: out) == "200", "\(path)")
            #expect(try site.file("got") == want, "\(path)")
        }
        let head = try server.curl(["-I"], "/catalog.json")
        #expect(head.status == 0 && head.out.hasPrefix("HTTP/1.1 200 OK\r\n"))
        for field in ["Content-Length: \(site.catalog.count)", "Content-Type: application/json", "Accept-Ranges: bytes",
                      "ETag: \"", "Last-Modified: ", "Date: "] {
            #expect(head.out.contains(field), "\(field) in \(head.out)")
        }
        let zipHead = try server.curl(["-I"], "/packs/big.zip").out
        #expect(zipHead.contains("Content-Type: application/zip") && zipHead.contains("Content-Length: \(9 << 20)"))
        #expect(try server.curl(["-I"], "/empty.sig").out.contains("Content-Type: application/octet-stream"))
        // The access log: one line per request, with status and bytes.
        server.stop()
        #expect(server.log.contains("\"GET /packs/big.zip HTTP/1.1\" 200 \(9 << 20) "))
        #expect(server.log.contains("\"HEAD /catalog.json HTTP/1.1\" 200 0 "))
        #expect(server.log.contains("fault seed "))
        #expect(server.host.standardOutput == server.url + "\n")
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func rangesGive206WithTheExactBytesAnd416PastTheEnd() throws {
        let site = try Site()
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        let out = site.dir.file("part")
        let n = site.big.count
        for (range, want) in [("0-99", site.big[0..<100]), ("4194304-4194403", site.big[4_194_304..<4_194_404]),
                              ("-100", site.big[(n - 100)...]), ("\(n - 10)-", site.big[(n - 10)...])] {
            let r = try server.curl(["-r", range, "-o", out, "-D", "-", "-w", "%{http_code}"], "/packs/big.zip")
            #expect(r.out.hasSuffix("206"), "\(range): \(r.out)")
            #expect(try site.file("part") == Array(want), "\(range)")
            #expect(r.out.contains("Content-Range: bytes \(want.startIndex)-\(want.endIndex - 1)/\(n)"), "\(range)")
        }
        let past = try server.curl(["-r", "\(n)-", "-D", "-", "-o", "/dev/null", "-w", "%{http_code}"], "/packs/big.zip")
        #expect(past.out.hasSuffix("416") && past.out.contains("Content-Range: bytes */\(n)"))
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func conditionalRequestsGive304AndAStaleIfRangeTheWholeFile() throws {
        let site = try Site()
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        let head = try server.curl(["-I"], "/catalog.json").out
        let etag = try #require(head.components(separatedBy: "\r\n").first { $0.hasPrefix("ETag: ") }).dropFirst(6)
        let modified = try #require(head.components(separatedBy: "\r\n").first { $0.hasPrefix("Last-Modified: ") }).dropFirst(15)
        #expect(try server.status("/catalog.json", ["-H", "If-None-Match: \(etag)"]) == "304")
        #expect(try server.status("/catalog.json", ["-H", "If-None-Match: \"x\", \(etag)"]) == "304")
        #expect(try server.status("/catalog.json", ["-H", "If-None-Match: *"]) == "304")
        #expect(try server.status("/catalog.json", ["-H", "If-None-Match: \"other\""]) == "200")
        #expect(try server.status("/catalog.json", ["-H", "If-Modified-Since: \(modified)"]) == "304")
        let out = site.dir.file("got")
        #expect(try server.status("/catalog.json", ["-r", "0-3", "-H", "If-Range: \(etag)"], output: out) == "206")
        #expect(try site.file("got") == Array(site.catalog[0..<4]))
        #expect(try server.status("/catalog.json", ["-r", "0-3", "-H", "If-Range: \"stale\""], output: out) == "200")
        #expect(try site.file("got") == site.catalog)
        #expect(try server.status("/catalog.json", ["-r", "0-3", "-H", "If-Range: Thu, 01 Jan 1970 00:00:00 GMT"], output: out) == "200")
        #expect(try site.file("got") == site.catalog)
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func oneCurlReusesTheConnectionForTwoURLs() throws {
        let site = try Site()
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        let r = try server.curl(["-o", "/dev/null", "-o", "/dev/null", "-w", "%{num_connects} %{http_code}\n"],
                                "/catalog.json", "/docs/a%20b.txt")
        #expect(r.out == "1 200\n0 200\n", "\(r.out) \(r.stderr)")
    }

    /// A file whose name holds ESC (an OSC that retitles a terminal) and a
    /// bidi override is listed spelled out (`\x1b`, `\u{202e}`), never
    /// raw, and linked by its exact name, which serves it.
    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func aListingShowsControlAndBidiCharactersEscaped() throws {
        let site = try Site(bigSize: 16)
        try site.dir.write("site/docs/title\u{1b}]0;pwned\u{07}.txt", "t")
        try site.dir.write("site/docs/invoice\u{202e}fdp.exe", "e")
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        let listing = try server.curl([], "/docs/")
        #expect(listing.status == 0)
        #expect(!listing.stdoutBytes.contains { $0 < 0x20 && $0 != 0x0a || $0 == 0x7f })
        #expect(!listing.out.unicodeScalars.contains { $0.value == 0x202e })
        #expect(listing.out.contains("<a href=\"title%1B%5D0%3Bpwned%07.txt\">title\\x1b]0;pwned\\x07.txt</a>"), "\(listing.out)")
        #expect(listing.out.contains("<a href=\"invoice%E2%80%AEfdp.exe\">invoice\\u{202e}fdp.exe</a>"))
        #expect(try server.curl([], "/docs/invoice%E2%80%AEfdp.exe").out == "e")
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func directoriesMissingFilesAndOtherMethods() throws {
        let site = try Site()
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        let listing = try server.curl([], "/docs/")
        #expect(listing.out.contains("<a href=\"a%20b.txt\">a b.txt</a>"))
        let redirect = try server.curl(["-D", "-", "-o", "/dev/null"], "/docs").out
        #expect(redirect.hasPrefix("HTTP/1.1 301") && redirect.contains("Location: /docs/\r\n"))
        try site.dir.write("site/docs/index.html", "<p>index</p>")
        #expect(try server.curl([], "/docs/").out == "<p>index</p>")
        #expect(try server.status("/nothing.zip") == "404")
        #expect(try server.status("/catalog.json/x") == "404")
        let post = try server.curl(["-X", "POST", "-D", "-", "-o", "/dev/null"], "/catalog.json").out
        #expect(post.hasPrefix("HTTP/1.1 405") && post.contains("Allow: GET, HEAD"))
        // A FIFO is not a file to serve, and opening it must not hang.
        #expect(mkfifo(site.dir.file("site/fifo"), 0o644) == 0)
        #expect(try server.status("/fifo") == "403")
        // Unreadable: 403 (root reads anything, so only checked as another user).
        if getuid() != 0 {
            #expect(chmod(site.dir.file("site/catalog.json"), 0) == 0)
            #expect(try server.status("/catalog.json") == "403")
        }
    }

    @Test(.enabled(if: curlAvailable), .timeLimit(.minutes(3)))
    func servesIPv6LoopbackAndStopsOnSIGINT() throws {
        let site = try Site()
        let probe = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        let bindable = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        } == 0
        close(probe)
        guard bindable else { return }  // no IPv6 loopback on this machine
        let server = try ServeProcess(site.root, ["--bind", "::1"])
        #expect(server.url.hasPrefix("http://[::1]:"))
        #expect(try server.status("/catalog.json") == "200")
        server.stop(SIGINT)
    }

    @Test(.timeLimit(.minutes(3)))
    func badDirectoriesPortsAndValuesAreOneLineErrors() throws {
        let site = try Site()
        let missing = try CLI.assetpack(["serve", site.dir.file("nope"), "--port", "0"])
        #expect(missing.status == 1 && missing.stderr == "assetpack serve: error: cannot serve '\(site.dir.file("nope"))': No such file or directory\n")
        let file = try CLI.assetpack(["serve", site.dir.file("outside.txt"), "--port", "0"])
        #expect(file.status == 1 && file.stderr.contains("Not a directory") && file.stderr.split(separator: "\n").count == 1)
        let server = try ServeProcess(site.root)
        defer { server.stop() }
        let taken = try CLI.assetpack(["serve", site.root, "--port", String(server.port)])
        #expect(taken.status == 1 && taken.stderr == "assetpack serve: error: cannot listen on 127.0.0.1:\(server.port): Address already in use\n")
        for (args, message) in [
            (["--bind", "localhost"], "'localhost' is not a numeric IPv4 or IPv6 address"),
            (["--port", "70000"], "'--port' needs a whole number from 0 to 65535"),
            (["--port", "8080.0"], "'--port' needs a whole number from 0 to 65535"),
            (["--port", "1e3"], "'--port' needs a whole number from 0 to 65535"),
            (["--port", "-1"], "'--port' needs a whole number from 0 to 65535"),
            (["--fail-rate", "1.5"], "'--fail-rate' needs a number from 0 to 1"),
            (["--throttle", "0"], "'--throttle' must be more than 0"),
            (["--drop-after", "lots"], "'--drop-after' needs a number of bytes"),
            (["--fault-seed", "-3"], "'--fault-seed' needs a whole number"),
            (["--request-timeout", "0"], "'--request-timeout' must be more than 0"),
            (["--max-connections", "0"], "'--max-connections' needs a whole number from 1 to 1000000"),
            (["--max-connections", "900000"], "needs more descriptors than the limit allows"),
        ] {
            let port = args.contains("--port") ? [] : ["--port", "0"]
            let r = try CLI.assetpack(["serve", site.root] + port + args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
            #expect(r.stderr.hasPrefix("Error: ") && r.stderr.contains(message), "\(args): \(r.stderr)")
        }
    }
}
