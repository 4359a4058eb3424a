/// Why a request target does not name a file beneath the served directory.
package enum TargetProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not origin form (`/path`) nor absolute form (`http://host/path`).
    case notAPath
    /// A `%` not followed by two hexadecimal digits.
    case invalidEscape
    /// `%00`: a NUL byte.
    case nulByte
    /// A segment that decodes to something holding `/` or `\` (`%2F`, `%5C`).
    case encodedSeparator
    /// A `..` segment, literal or encoded (`%2e%2e`).
    case dotDot
    /// A `#` fragment, which clients never send.
    case fragment

    package var description: String {
        switch self {
        case .notAPath: "not a path"
        case .invalidEscape: "invalid percent escape"
        case .nulByte: "NUL byte"
        case .encodedSeparator: "encoded '/' or '\\' in a segment"
        case .dotDot: "'..' segment"
        case .fragment: "fragment"
        }
    }
}

/// A request target reduced to what the server looks up: the decoded path
/// segments under the root, and whether it ended in `/`.
package struct RequestTarget: Sendable, Equatable {
    /// The decoded segments, none empty, `.`, or `..`, none holding `/`,
    /// `\` or NUL. Empty for the root.
    package let segments: [[UInt8]]
    /// Whether the path ended with `/` (a directory was asked for).
    package let trailingSlash: Bool
    /// The path as sent (still percent-encoded), without the query: for
    /// redirects and the log.
    package let rawPath: String

    /// The segments joined with `/`, relative to the root (`.` for the root).
    package var relativePath: [UInt8] {
        segments.isEmpty ? Array(".".utf8) : Array(segments.joined(separator: [0x2F]))
    }

    /// The decoded path from the root, `/a/b`, for `--fault-path` matching.
    package var decodedPath: String {
        "/" + segments.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/")
    }

    /// Reads the target of a GET or HEAD request: origin form `/path?query`
    /// or absolute form `http://host[:port]/path?query` (RFC 9112 §3.2, whose
    /// host is not checked: the server has one directory). The query is
    /// dropped; empty and `.` segments are skipped.
    ///
    /// - Throws: ``TargetProblem`` for every other target.
    package init(parsing target: String) throws(TargetProblem) {
        var path = Substring(target)
        if !path.hasPrefix("/") {
            let lower = path.lowercased()
            let scheme = lower.hasPrefix("http://") ? 7 : lower.hasPrefix("https://") ? 8 : 0
            guard scheme > 0 else { throw .notAPath }
            let afterScheme = path.dropFirst(scheme)
            guard let slash = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) else {
                self.init(segments: [], trailingSlash: true, rawPath: "/")
                return
            }
            path = afterScheme[slash...]
            if !path.hasPrefix("/") { path = Substring("/" + path) }
        }
        if path.contains("#") { throw .fragment }
        if let query = path.firstIndex(of: "?") { path = path[..<query] }
        var segments: [[UInt8]] = []
        for raw in path.utf8.split(separator: 0x2F, omittingEmptySubsequences: true) {
            let decoded = try Self.percentDecoded(raw)
            if decoded.contains(0x2F) || decoded.contains(0x5C) { throw .encodedSeparator }
            if decoded == [0x2E] { continue }
            if decoded == [0x2E, 0x2E] { throw .dotDot }
            segments.append(decoded)
        }
        self.init(segments: segments, trailingSlash: path.hasSuffix("/"), rawPath: String(path))
    }

    private init(segments: [[UInt8]], trailingSlash: Bool, rawPath: String) {
        self.segments = segments
        self.trailingSlash = trailingSlash
        self.rawPath = rawPath
    }

    /// `bytes` with every `%XX` replaced by its byte.
    static func percentDecoded(_ bytes: some Collection<UInt8>) throws(TargetProblem) -> [UInt8] {
        var out: [UInt8] = []
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let byte = bytes[i]
            i = bytes.index(after: i)
            guard byte == 0x25 else {
                out.append(byte)
                continue
            }
            guard i != bytes.endIndex, let high = hexValue(bytes[i]) else { throw .invalidEscape }
            i = bytes.index(after: i)
            guard i != bytes.endIndex, let low = hexValue(bytes[i]) else { throw .invalidEscape }
            i = bytes.index(after: i)
            let decoded = high << 4 | low
            if decoded == 0 { throw .nulByte }
            out.append(decoded)
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// `bytes` percent-encoded for a URL path segment: everything but
    /// unreserved characters (RFC 3986 §2.3) becomes `%XX`.
    package static func percentEncoded(_ bytes: [UInt8]) -> String {
        var out = ""
        for byte in bytes {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
            }
        }
        return out
    }
}
