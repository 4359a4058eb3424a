import Foundation
import Testing
import Synchronization
@testable import AssetDelivery
import TestSupport

/// Every request of the process goes through one libcurl multi handle: the
/// clients share its connections, and concurrent requests run side by side.
/// The server is Python's `http.server` (HTTP/1.1, keep-alive) on 127.0.0.1,
/// which prints a line for each connection it accepts.
@Suite(.serialized) struct TransferLoopTests {
    /// A keep-alive server whose `/slow` answers after `delay` seconds.
    final class PythonServer {
        let process = Process()
        let output = Pipe()
        let port: Int
        static let script = """
            import http.server, socketserver, sys, time
            class H(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def do_GET(self):
                    if self.path == "/slow": time.sleep(float(sys.argv[1]))
                    body = b"x" * 100000
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *a): pass
            class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
                daemon_threads = True
                def get_request(self):
                    r = super().get_request()
                    print("connection", flush=True)
                    return r
            s = S(("127.0.0.1", 0), H)
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """

        init(delay: Double = 0) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", "-c", Self.script, String(delay)]
            process.standardOutput = output
            try process.run()
            port = Int(output.firstLine().trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        }

        /// The connections accepted so far; call after `stop()`.
        func connections() -> Int {
            String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .split(separator: "\n").filter { $0 == "connection" }.count
        }

        /// SIGKILL: a child of the test process may inherit a mask that blocks SIGTERM.
        func stop() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    func get(_ client: HTTPClient, _ url: String) throws -> Int {
        var bytes = 0
        try client.get(url) { _, body in
            bytes += body.count
            return true
        }
        return bytes
    }

    @Test func twoClientsOneAfterTheOtherShareOneConnection() throws {
        let server = try PythonServer()
        #expect(server.port > 0)
        let url = "http://127.0.0.1:\(server.port)/file"
        #expect(try get(HTTPClient(), url) == 100_000)
        #expect(try get(HTTPClient(), url) == 100_000)
        server.stop()
        #expect(server.connections() == 1, "the second client reused the first one's connection")
    }

    @Test func concurrentRequestsRunSideBySide() throws {
        let server = try PythonServer(delay: 1)
        let url = "http://127.0.0.1:\(server.port)/slow"
        let start = Date()
        let results = Mutex<[Int]>([])
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                let n = (try? get(HTTPClient(), url)) ?? -1
                results.withLock { $0.append(n) }
                group.leave()
            }.start()
        }
        group.wait()
        let elapsed = Date().timeIntervalSince(start)
        server.stop()
        #expect(results.withLock { $0 } == [100_000, 100_000, 100_000, 100_000])
        // One after the other they would take 4 s.
        #expect(elapsed < 3.5, "\(elapsed) s")
        #expect(server.connections() == 4)
    }
}
