/// One HTTP/1.x request head, as ``HTTPRequest/parse(_:limit:)`` read it from
/// the bytes of a connection.
package struct HTTPRequest: Sendable, Equatable {
    /// The method, as sent (methods are case-sensitive): `GET`, `HEAD`, …
    package var method: String
    /// The request target, as sent: `/a/b.zip?x`, or `http://host/a` (absolute form).
    package var target: String
    /// The protocol version.
    package var version: HTTPVersion
    /// The header fields in order, names lowercased, values without the
    /// surrounding whitespace.
    package var fields: [(name: String, value: String)]

    package static func == (a: HTTPRequest, b: HTTPRequest) -> Bool {
        a.method == b.method && a.target == b.target && a.version == b.version
            && a.fields.elementsEqual(b.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The value of the field `name` (lowercase); several fields of that name
    /// joined by `", "`, as RFC 9110 §5.3 combines list fields; `nil` when absent.
    package func field(_ name: String) -> String? {
        let values = fields.filter { $0.name == name }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Whether the connection stays open after the response: HTTP/1.1 unless
    /// `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    package var keepsAlive: Bool {
        let options = HTTPList.elements(field("connection") ?? "").map { $0.lowercased() }
        switch version {
        case .http11: return !options.contains("close")
        case .http10: return options.contains("keep-alive") && !options.contains("close")
        }
    }
}

/// The HTTP versions the server speaks.
package enum HTTPVersion: String, Sendable, Equatable {
    case http10 = "HTTP/1.0"
    case http11 = "HTTP/1.1"
}

/// What reading the start of a connection's bytes gave.
package enum HTTPParseResult: Sendable, Equatable {
    /// The head is not complete yet: read more (the bytes are within the limit).
    case incomplete
    /// A whole head: the request, and how many bytes it took (the next
    /// pipelined request starts there).
    case request(HTTPRequest, consumed: Int)
    /// A head the server refuses; the connection is answered and closed.
    case refused(HTTPRefusal)
}

/// Why a request is refused, each with its status.
package enum HTTPRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request line is not `method SP target SP HTTP/x.y` (400).
    case malformedRequestLine
    /// A version other than HTTP/1.0 and HTTP/1.1 (505).
    case unsupportedVersion(String)
    /// The request line and fields exceed the limit (431).
    case headTooLarge(limit: Int)
    /// A header line that is not `name: value`, a folded line, a control
    /// character in a value (400).
    case malformedField
    /// HTTP/1.1 without a Host field, or with several (400).
    case badHost
    /// A Content-Length that is not one number (400).
    case badContentLength
    /// A request with a body (Content-Length > 0 or Transfer-Encoding); the
    /// server accepts none (413 for a length, 400 for a transfer coding).
    case bodyNotAccepted(chunked: Bool)
    /// A method other than GET and HEAD (405, with Allow).
    case methodNotAllowed(String)
    /// The target is not a path the server can map to a file (400).
    case badTarget(TargetProblem)

    /// The response status.
    package var status: Int {
        switch self {
        case .malformedRequestLine, .malformedField, .badHost, .badContentLength, .badTarget: 400
        case .unsupportedVersion: 505
        case .headTooLarge: 431
        case .bodyNotAccepted(let chunked): chunked ? 400 : 413
        case .methodNotAllowed: 405
        }
    }

    package var description: String {
        switch self {
        case .malformedRequestLine: "malformed request line"
        case .unsupportedVersion(let v): "unsupported version '\(v)'"
        case .headTooLarge(let limit): "request head larger than \(limit) bytes"
        case .malformedField: "malformed header field"
        case .badHost: "missing or repeated Host"
        case .badContentLength: "invalid Content-Length"
        case .bodyNotAccepted(let chunked): chunked ? "request body (Transfer-Encoding) not accepted" : "request body not accepted"
        case .methodNotAllowed(let m): "method '\(m)' not allowed"
        case .badTarget(let problem): "bad target: \(problem)"
        }
    }
}

extension HTTPRequest {
    /// The default limit on the request line and fields together, in bytes.
    package static let defaultHeadLimit = 16 * 1024

    /// Reads one request head from the start of `bytes`.
    ///
    /// Lines end with CRLF (a bare LF is accepted too, RFC 9112 §2.2); empty
    /// lines before the request line are skipped. Methods other than GET and
    /// HEAD, bodies and targets are checked by ``check()``, not here.
    ///
    /// - Returns: `.incomplete` while no empty line ends the head within
    ///   `limit` bytes; `.refused(.headTooLarge)` once `limit` bytes hold no
    ///   whole head; else the request or why it is refused.
    package static func parse(_ bytes: UnsafeRawBufferPointer, limit: Int = defaultHeadLimit) -> HTTPParseResult {
        var start = 0
        while start < bytes.count, bytes[start] == 0x0D || bytes[start] == 0x0A, start < 64 { start += 1 }
        guard let (end, consumed) = headEnd(bytes, from: start, limit: limit) else {
            return bytes.count - start >= limit ? .refused(.headTooLarge(limit: limit)) : .incomplete
        }
        var lines = splitLines(bytes, from: start, to: end)
        guard !lines.isEmpty else { return .refused(.malformedRequestLine) }
        let requestLine = lines.removeFirst()
        let version: HTTPVersion, method: String, target: String
        switch parseRequestLine(requestLine) {
        case .failure(let refusal): return .refused(refusal)
        case .success(let parts): (method, target, version) = parts
        }
        var fields: [(name: String, value: String)] = []
        for line in lines {
            guard let field = parseField(line) else { return .refused(.malformedField) }
            fields.append(field)
        }
        return .request(HTTPRequest(method: method, target: target, version: version, fields: fields), consumed: consumed)
    }

    /// Where the head's last line ends (before its empty line) and where the
    /// bytes after the empty line start, if an empty line comes within `limit`.
    private static func headEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, limit: Int) -> (Int, Int)? {
        var i = start
        let stop = min(bytes.count, start + limit)
        while i < stop {
            if bytes[i] == 0x0A {
                // LF LF or LF CR LF ends the head.
                if i + 1 < bytes.count, bytes[i + 1] == 0x0A { return (i, i + 2) }
                if i + 2 < bytes.count, bytes[i + 1] == 0x0D, bytes[i + 2] == 0x0A { return (i, i + 3) }
            }
            i += 1
        }
        return nil
    }

    /// The lines of `bytes[start..<end]`, each without its CR LF.
    private static func splitLines(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> [ArraySlice<UInt8>] {
        let head = Array(bytes[start..<end])
        return head.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) -> Result<(String, String, HTTPVersion), HTTPRefusal> {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(HTTPList.isTokenByte),
              !parts[1].isEmpty, parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(.malformedRequestLine)
        }
        let versionText = String(decoding: parts[2], as: UTF8.self)
        guard let version = HTTPVersion(rawValue: versionText) else {
            // HTTP/d.d is a version we do not speak; anything else is not HTTP.
            let shape = Array(parts[2])
            let isVersion = shape.count == 8 && shape.starts(with: Array("HTTP/".utf8))
                && isDigit(shape[5]) && shape[6] == 0x2E && isDigit(shape[7])
            return .failure(isVersion ? .unsupportedVersion(versionText) : .malformedRequestLine)
        }
        return .success((String(decoding: parts[0], as: UTF8.self), String(decoding: parts[1], as: UTF8.self), version))
    }

    /// `name: value`: a token, a colon right after it, the value with its
    /// surrounding spaces and tabs removed; `nil` for anything else.
    private static func parseField(_ line: ArraySlice<UInt8>) -> (name: String, value: String)? {
        guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex,
              line[line.startIndex..<colon].allSatisfy(HTTPList.isTokenByte) else { return nil }
        let value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
        let trimmed = value.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        guard trimmed.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else { return nil }
        let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased()
        return (name, String(decoding: trimmed, as: UTF8.self))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// Checks what ``parse(_:limit:)`` leaves to the server: Host, a body,
    /// the method. Returns the refusal, or `nil` for a request to answer.
    package func check() -> HTTPRefusal? {
        let hosts = fields.filter { $0.name == "host" }
        if version == .http11 && hosts.count != 1 || hosts.count > 1 { return .badHost }
        if fields.contains(where: { $0.name == "transfer-encoding" }) { return .bodyNotAccepted(chunked: true) }
        let lengths = fields.filter { $0.name == "content-length" }
            .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() } }
        if !lengths.isEmpty {
            guard lengths.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(Self.isDigit) }),
                  Set(lengths).count == 1 else { return .badContentLength }
            if lengths[0].utf8.contains(where: { $0 != 0x30 }) { return .bodyNotAccepted(chunked: false) }
        }
        guard method == "GET" || method == "HEAD" else { return .methodNotAllowed(method) }
        return nil
    }
}

/// Comma-separated field values (RFC 9110 §5.6.1) and tokens.
package enum HTTPList {
    /// The non-empty elements of a list, trimmed of spaces and tabs.
    package static func elements(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    /// Whether `byte` may appear in a token (RFC 9110 §5.6.2).
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default: return false
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    /// (On the hot path of every request: it walks UTF-8 bytes, and cuts at
    /// indices that are scalar boundaries because space and tab are ASCII.)
    func trimmingWhitespace() -> String {
        let text = Substring(self)
        let isBlank = { (b: UInt8) in b == 0x20 || b == 0x09 }
        guard let start = text.utf8.firstIndex(where: { !isBlank($0) }),
              let last = text.utf8.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(text[start...last])
    }
}
