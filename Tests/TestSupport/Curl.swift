import Foundation

/// The `curl` command line as the tests' HTTP client: an independent
/// witness of what a server sends.
package enum Curl {
    /// One response as curl saw it.
    package struct Response: Sendable {
        package let status: Int
        /// Header names lowercased; the last response's headers only.
        package let headers: [String: String]
        package let body: [UInt8]
        /// curl's exit status (0, or e.g. 18 for a body cut short, 28 for a timeout).
        package let exitStatus: Int32
    }

    /// Fetches `url` with `arguments` added (e.g. `["-r", "0-99"]`,
    /// `["-I"]`, `["-H", "If-None-Match: …"]`).
    package static func fetch(_ url: String, _ arguments: [String] = []) throws -> Response {
        let scratch = TemporaryDirectory("assetpacks-curl")
        let headerFile = scratch.file("headers"), bodyFile = scratch.file("body")
        let result = try Program.run("curl", ["-sS", "--http1.1", "--max-time", "60", "-D", headerFile, "-o", bodyFile,
                                              "-w", "%{http_code}"] + arguments + [url])
        let rawHeaders = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        // With redirects or 100-continue there are several blocks: keep the last.
        let block = rawHeaders.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }.last ?? ""
        var headers: [String: String] = [:]
        for line in block.components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = FileManager.default.contents(atPath: bodyFile).map { [UInt8]($0) } ?? []
        return Response(status: Int(result.out) ?? 0, headers: headers, body: body, exitStatus: result.status)
    }
}
