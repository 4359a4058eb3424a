import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A running `assetpack serve DIR --port 0 …` (TestSupport's ``ServeHost``)
/// with what the serve tests ask of it: curl against its URLs, raw
/// connections, and a stop that checks it ended cleanly.
final class ServeProcess {
    let host: ServeHost
    /// The URL it printed, with its trailing slash.
    let url: String
    var port: UInt16 { host.port }
    /// Its access log and messages (standard error) so far.
    var log: String { host.log }

    init(_ directory: String, _ extra: [String] = []) throws {
        host = try ServeHost(root: directory, extra, executable: CLI.binary)
        url = host.baseURL + "/"
    }

    /// SIGTERM (or `signal`), then checks that it exited 0 and said so.
    func stop(_ signal: Int32 = SIGTERM) {
        #expect(host.stop(signal) == 0, "\(log)")
        #expect(log.contains("assetpack serve: stopped"))
    }

    /// Runs the real `curl` with `args`, then the URLs of `paths` on the server.
    func curl(_ args: [String], _ paths: String...) throws -> Program.Result {
        try Program.run("curl", ["-sS", "--http1.1", "--max-time", "30"] + args + paths.map(absolute))
    }

    func absolute(_ path: String) -> String { url + path.dropFirst() }

    /// `curl -w '%{http_code}'` of one path, with the body written to `output`.
    func status(_ path: String, _ extra: [String] = [], output: String = "/dev/null") throws -> String {
        try curl(extra + ["-o", output, "-w", "%{http_code}"], path).out
    }

    /// A raw connection to the server, for what curl would normalize.
    func connect() throws -> RawConnection { try RawConnection(port: port) }
}

/// A TCP connection to 127.0.0.1 from this process, speaking bytes.
final class RawConnection {
    let fd: Int32

    init(port: UInt16) throws {
        fd = connectToLoopback(port: port)
        guard fd >= 0 else { throw TestFailure("connect to 127.0.0.1:\(port): errno \(-fd)") }
    }

    deinit { Glibc.close(fd) }

    /// Sends all of `bytes`; false if the server closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            done += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Bytes until the server closes, or `timeout` seconds pass, or `until` holds.
    func read(timeout: Double, until: ([UInt8]) -> Bool = { _ in false }) -> (bytes: [UInt8], closed: Bool) {
        var out: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            if ready <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return (out, true) }
            out += buffer[0..<n]
            if until(out) { return (out, false) }
        }
        return (out, false)
    }

    /// Reads one response: status, fields (names lowercased), body by Content-Length.
    func response(timeout: Double = 20, head: Bool = false) -> RawResponse? {
        var parsed: RawResponse?
        _ = read(timeout: timeout) { bytes in
            parsed = RawResponse(bytes, head: head)
            return parsed != nil
        }
        return parsed
    }
}

/// A response read off a raw connection.
struct RawResponse {
    let status: Int
    let fields: [String: String]
    let body: [UInt8]
    /// Bytes after this response (the next pipelined one).
    let rest: [UInt8]

    init?(_ bytes: [UInt8], head: Bool = false) {
        guard let end = bytes.indices.dropLast(3).first(where: {
            bytes[$0] == 0x0D && bytes[$0 + 1] == 0x0A && bytes[$0 + 2] == 0x0D && bytes[$0 + 3] == 0x0A
        }) else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = head || status == 304 ? 0 : Int(fields["content-length"] ?? "0") ?? 0
        guard bytes.count >= end + 4 + length else { return nil }
        self.status = status
        self.fields = fields
        body = Array(bytes[(end + 4)..<(end + 4 + length)])
        rest = Array(bytes[(end + 4 + length)...])
    }
}
