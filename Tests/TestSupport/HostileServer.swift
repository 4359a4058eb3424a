import Foundation

/// A small HTTP/1.1 server on 127.0.0.1 that misbehaves as a test tells it
/// to — written for the tests of the download path, in Python (the
/// standard library's `socketserver`, one thread per connection) so that it
/// writes exactly the bytes it is given: header values with control
/// characters, weak ETags, a body trickled a byte at a time.
///
/// Each route answers one path (the request target without its query). A
/// request for another path is answered 404. Every request is logged before
/// it is answered — its target and header fields — and ``requests()``
/// reads the log. The server stops (SIGKILL, waited for) in ``stop()`` or
/// when the value goes away.
package final class HostileServer: @unchecked Sendable {
    /// What one path answers.
    package struct Route: Sendable {
        /// The status of an answer to a request without `Range`.
        package var status: Int
        /// Header fields sent as they are (a value may hold any byte but CR and LF).
        package var headers: [(String, String)]
        /// The representation's bytes.
        package var body: [UInt8]
        /// Answer `Range: bytes=N-` (and `N-M`) with a `206` of those bytes.
        package var honorsRange: Bool
        /// Answer a range request with `If-Range` whose value is not one of
        /// these with a `200` of the whole body (`nil`: ignore `If-Range`).
        package var currentValidators: [String]?
        /// Send the body a byte at a time, this many seconds apart (`nil`: at once).
        package var secondsPerByte: Double?
        /// Send only this many bytes of a whole-body answer (not of a `206`),
        /// then close the connection: a transfer cut short.
        package var cutAfter: Int?

        package init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8], honorsRange: Bool = false,
                     currentValidators: [String]? = nil, secondsPerByte: Double? = nil, cutAfter: Int? = nil) {
            self.status = status
            self.headers = headers
            self.body = body
            self.honorsRange = honorsRange
            self.currentValidators = currentValidators
            self.secondsPerByte = secondsPerByte
            self.cutAfter = cutAfter
        }
    }

    /// A request as the server received it.
    package struct Request: Sendable {
        /// The request target, query included (`/catalog.json.sig?v=1`).
        package var target: String
        /// Header fields in order, names lowercased.
        package var headers: [(String, String)]

        /// The first field named `name` (any case), or `nil`.
        package func header(_ name: String) -> String? {
            headers.first { $0.0 == name.lowercased() }?.1
        }
    }

    package let port: Int
    /// `http://127.0.0.1:PORT` (no trailing slash).
    package var baseURL: String { "http://127.0.0.1:\(port)" }
    private let process = Process()
    private let directory = TemporaryDirectory("hostile-server")

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts the server with `routes`, keyed by path (`/catalog.json`).
    package init(routes: [String: Route]) throws {
        var configuration: [String: Any] = [:]
        for (path, route) in routes {
            let bodyPath = try directory.write("body-\(configuration.count)", route.body)
            var entry: [String: Any] = [
                "status": route.status, "headers": route.headers.map { [$0.0, $0.1] }, "body": bodyPath,
                "range": route.honorsRange,
            ]
            if let validators = route.currentValidators { entry["validators"] = validators }
            if let delay = route.secondsPerByte { entry["delay"] = delay }
            if let cut = route.cutAfter { entry["cut"] = cut }
            configuration[path] = entry
        }
        let configurationPath = directory.file("routes.json")
        try JSONSerialization.data(withJSONObject: configuration).write(to: URL(fileURLWithPath: configurationPath))
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, configurationPath, directory.file("requests.log")]
        process.standardOutput = output
        try process.run()
        let line = output.firstLine()
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw Failure(description: "the hostile server did not start (python3 printed '\(line)')")
        }
        self.port = port
    }

    deinit { stop() }

    /// Every request received so far, in order.
    package func requests() -> [Request] {
        guard let text = try? String(contentsOfFile: directory.file("requests.log"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let target = object["target"] as? String, let headers = object["headers"] as? [[String]] else { return nil }
            return Request(target: target, headers: headers.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil })
        }
    }

    /// SIGKILL (a child of the test process may inherit a mask that blocks
    /// SIGTERM), then waits for it.
    package func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private static let script = #"""
        import json, socketserver, sys, time
        routes = json.load(open(sys.argv[1]))
        log = open(sys.argv[2], "a")
        class H(socketserver.StreamRequestHandler):
            def handle(self):
                while True:
                    line = self.rfile.readline(65536)
                    if not line: return
                    parts = line.decode("latin-1").split()
                    if len(parts) < 2: return
                    target, headers = parts[1], []
                    while True:
                        h = self.rfile.readline(65536)
                        if h in (b"\r\n", b"\n", b""): break
                        name, _, value = h.decode("latin-1").partition(":")
                        headers.append([name.strip().lower(), value.strip()])
                    log.write(json.dumps({"target": target, "headers": headers}) + "\n")
                    log.flush()
                    if not self.answer(target.split("?")[0], dict(headers)): return
            def answer(self, path, headers):
                route = routes.get(path)
                if route is None:
                    self.wfile.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    return True
                body = open(route["body"], "rb").read()
                status, extra = route["status"], []
                rng = headers.get("range", "")
                validators = route.get("validators")
                fresh = validators is None or "if-range" not in headers or headers["if-range"] in validators
                if route["range"] and rng.startswith("bytes=") and fresh:
                    first, _, last = rng[6:].partition("-")
                    first = int(first)
                    last = int(last) if last else len(body) - 1
                    extra.append("Content-Range: bytes %d-%d/%d" % (first, last, len(body)))
                    body, status = body[first:last + 1], 206
                head = "HTTP/1.1 %d X\r\n" % status
                for name, value in route["headers"]: head += "%s: %s\r\n" % (name, value)
                for field in extra: head += field + "\r\n"
                head += "Content-Length: %d\r\n\r\n" % len(body)
                try:
                    self.wfile.write(head.encode("latin-1"))
                    delay = route.get("delay")
                    if status != 206 and route.get("cut") is not None:
                        self.wfile.write(body[:route["cut"]])
                        self.wfile.flush()
                        return False
                    if delay is None:
                        self.wfile.write(body)
                    else:
                        for i in range(len(body)):
                            self.wfile.write(body[i:i + 1])
                            self.wfile.flush()
                            time.sleep(delay)
                except OSError:
                    return False
                return True
        class S(socketserver.ThreadingMixIn, socketserver.TCPServer):
            daemon_threads = True
            allow_reuse_address = True
        s = S(("127.0.0.1", 0), H)
        print(s.server_address[1], flush=True)
        s.serve_forever()
        """#
}
