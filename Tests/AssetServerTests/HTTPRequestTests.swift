import Testing
@testable import AssetServer

/// The request-head parser and the checks the server makes after it: every
/// refusal with its status.
@Suite struct HTTPRequestTests {
    func parse(_ text: String, limit: Int = HTTPRequest.defaultHeadLimit) -> HTTPParseResult {
        Array(text.utf8).withUnsafeBytes { HTTPRequest.parse($0, limit: limit) }
    }

    func request(_ text: String) throws -> HTTPRequest {
        guard case .request(let r, _) = parse(text) else {
            Issue.record("not parsed: \(text.debugDescription)")
            throw HTTPRefusal.malformedRequestLine
        }
        return r
    }

    @Test func parsesARequestAndReportsWhatItConsumed() throws {
        let text = "GET /a/b.zip?x=1 HTTP/1.1\r\nHost: h\r\nRange:  bytes=0-1 \r\nX-A: 1\r\nx-a: 2\r\n\r\nGET /next"
        guard case .request(let r, let consumed) = parse(text) else {
            Issue.record("not parsed")
            return
        }
        #expect(r.method == "GET" && r.target == "/a/b.zip?x=1" && r.version == .http11)
        #expect(r.field("range") == "bytes=0-1")
        #expect(r.field("x-a") == "1, 2")
        #expect(r.field("missing") == nil)
        #expect(Array(text.utf8)[consumed...].elementsEqual("GET /next".utf8))
        #expect(r.check() == nil)
    }

    @Test func acceptsBareLineFeedsAndLeadingEmptyLines() throws {
        let r = try request("\r\n\nHEAD / HTTP/1.0\nUser-Agent: x\n\n")
        #expect(r.method == "HEAD" && r.version == .http10 && r.field("user-agent") == "x")
        #expect(r.check() == nil)  // HTTP/1.0 needs no Host
    }

    @Test func anIncompleteHeadAsksForMore() {
        #expect(parse("") == .incomplete)
        #expect(parse("GET / HTTP/1.1\r\nHost: h\r\n") == .incomplete)
        #expect(parse("GET / HTTP/1.1\r\nHost: h\r\n\r") == .incomplete)
    }

    @Test(arguments: [
        "GET /\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 x\r\n\r\n", "GE(T / HTTP/1.1\r\n\r\n",
        "GET / http/1.1\r\n\r\n", "GET / HTTP/1.1\rX\r\n\r\n", "GET /\u{7F} HTTP/1.1\r\n\r\n", " GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/11\r\n\r\n", "\r\n\r\nGET\r\n\r\n",
    ])
    func refusesAMalformedRequestLine(_ text: String) {
        #expect(parse(text) == .refused(.malformedRequestLine))
        #expect(HTTPRefusal.malformedRequestLine.status == 400)
    }

    @Test(arguments: ["HTTP/2.0", "HTTP/0.9", "HTTP/1.2", "HTTP/3.0"])
    func refusesOtherVersionsWith505(_ version: String) {
        #expect(parse("GET / \(version)\r\nHost: h\r\n\r\n") == .refused(.unsupportedVersion(version)))
        #expect(HTTPRefusal.unsupportedVersion(version).status == 505)
    }

    @Test(arguments: [
        "Host h", "Host : h", " folded: line", "\tfolded: line", ": empty-name", "Bad\u{1}Name: v", "X: a\u{1}b", "X: a\rb",
    ])
    func refusesAMalformedField(_ field: String) {
        #expect(parse("GET / HTTP/1.1\r\nHost: h\r\n\(field)\r\n\r\n") == .refused(.malformedField))
        #expect(HTTPRefusal.malformedField.status == 400)
    }

    @Test func refusesAHeadOverTheLimitWith431() {
        let big = "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "a", count: 200) + "\r\n\r\n"
        #expect(parse(big, limit: 100) == .refused(.headTooLarge(limit: 100)))
        // Not yet over: more may come.
        #expect(parse(String(decoding: big.utf8.prefix(99), as: UTF8.self), limit: 100) == .incomplete)
        #expect(HTTPRefusal.headTooLarge(limit: 100).status == 431)
        if case .request = parse(big, limit: 4096) {} else { Issue.record("refused under the limit") }
    }

    @Test func http11NeedsExactlyOneHost() throws {
        #expect(try request("GET / HTTP/1.1\r\n\r\n").check() == .badHost)
        #expect(try request("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n").check() == .badHost)
        #expect(try request("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n").check() == .badHost)
        #expect(HTTPRefusal.badHost.status == 400)
    }

    @Test func refusesRequestBodies() throws {
        let base = "GET / HTTP/1.1\r\nHost: h\r\n"
        #expect(try request(base + "Content-Length: 5\r\n\r\n").check() == .bodyNotAccepted(chunked: false))
        #expect(HTTPRefusal.bodyNotAccepted(chunked: false).status == 413)
        #expect(try request(base + "Transfer-Encoding: chunked\r\n\r\n").check() == .bodyNotAccepted(chunked: true))
        #expect(HTTPRefusal.bodyNotAccepted(chunked: true).status == 400)
        #expect(try request(base + "Content-Length: 0\r\n\r\n").check() == nil)
        #expect(try request(base + "Content-Length: 000\r\n\r\n").check() == nil)
        for bad in ["-1", "1x", "", "1, 2", "0x10"] {
            #expect(try request(base + "Content-Length: \(bad)\r\n\r\n").check() == .badContentLength, "\(bad)")
        }
        #expect(try request(base + "Content-Length: 0\r\nContent-Length: 1\r\n\r\n").check() == .badContentLength)
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "OPTIONS", "get", "CONNECT", "PATCH"])
    func refusesOtherMethodsWith405(_ method: String) throws {
        #expect(try request("\(method) / HTTP/1.1\r\nHost: h\r\n\r\n").check() == .methodNotAllowed(method))
        #expect(HTTPRefusal.methodNotAllowed(method).status == 405)
    }

    @Test func keepAliveFollowsTheVersionAndConnection() throws {
        #expect(try request("GET / HTTP/1.1\r\nHost: h\r\n\r\n").keepsAlive)
        #expect(try !request("GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n").keepsAlive)
        #expect(try !request("GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade, close\r\n\r\n").keepsAlive)
        #expect(try !request("GET / HTTP/1.0\r\n\r\n").keepsAlive)
        #expect(try request("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepsAlive)
    }
}
