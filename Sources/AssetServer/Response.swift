import AssetSystem

/// A response to send: status, fields, and a body from memory or a file.
struct Response {
    enum Body {
        case none
        case bytes([UInt8])
        /// `length` bytes of the file from `offset`, sent with `sendfile`.
        case file(OpenFile, offset: Int64, length: Int64)

        var length: Int64 {
            switch self {
            case .none: 0
            case .bytes(let b): Int64(b.count)
            case .file(_, _, let length): length
            }
        }
    }

    var status: Int
    var fields: [(name: String, value: String)] = []
    var body: Body = .none
    /// Whether the connection closes after it.
    var closes = false
    /// Whether body faults (throttle, drop, stall) apply to it.
    var faultable = false
    /// What the access log notes about it besides the status (`fault=500`, …).
    var note: String?

    /// A short text body saying what the status means, for errors.
    static func error(_ status: Int, closes: Bool = false, fields: [(name: String, value: String)] = []) -> Response {
        var r = Response(status: status, fields: [("Content-Type", "text/plain; charset=utf-8")] + fields,
                         body: .bytes(Array("\(status) \(reason(status))\n".utf8)))
        r.closes = closes
        return r
    }

    /// The head: status line and fields, with Date, Server, Content-Length
    /// and Connection added, then the empty line.
    func head(date: Int64, keepAlive: Bool) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        text += "Date: \(HTTPDate.format(date))\r\nServer: assetpack-serve\r\n"
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        if status != 304 { text += "Content-Length: \(body.length)\r\n" }
        text += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        text += "\r\n"
        return Array(text.utf8)
    }

    /// The head and an in-memory body together, for the answers sent in one
    /// go without a connection's state (503 at the limit, 408 on a timeout).
    func wholeBytes(date: Int64, keepAlive: Bool) -> [UInt8] {
        guard case .bytes(let body) = body else { return head(date: date, keepAlive: keepAlive) }
        return head(date: date, keepAlive: keepAlive) + body
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 416: "Range Not Satisfiable"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }

    /// The Content-Type for a file name, by its extension.
    static func contentType(_ name: [UInt8]) -> String {
        let text = String(decoding: name, as: UTF8.self).lowercased()
        let ext = text.split(separator: ".", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        guard text.contains(".") else { return "application/octet-stream" }
        switch ext {
        case "json": return "application/json"
        case "zip": return "application/zip"
        case "html", "htm": return "text/html; charset=utf-8"
        case "txt", "md": return "text/plain; charset=utf-8"
        case "css": return "text/css"
        case "js": return "text/javascript"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "svg": return "image/svg+xml"
        default: return "application/octet-stream"
        }
    }
}
