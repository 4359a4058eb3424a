import Foundation

/// `assetpack serve DIR --port 0 [flags]` run as a real process: the URL it
/// prints once listening, its access log (standard error, in a file), and
/// SIGTERM when stopped or when the value goes away.
package final class ServeHost: @unchecked Sendable {
    /// `http://127.0.0.1:PORT` (no trailing slash).
    package let baseURL: String
    package let port: UInt16
    private let process: Process
    private let logDirectory: TemporaryDirectory
    private let output: Pipe
    private let firstOutput: [UInt8]

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts `executable` (default: this package's built `assetpack`)
    /// serving `root` with `arguments` added after the directory.
    package init(root: String, _ arguments: [String] = [], executable: String = Program.built("assetpack")) throws {
        logDirectory = TemporaryDirectory("assetpacks-serve-log")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["serve", root, "--port", "0"] + arguments
        let output = Pipe()
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: logDirectory.file("log"), contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logDirectory.file("log")))
        try process.run()
        self.process = process
        self.output = output
        // The first line on standard output is the URL, once it listens.
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        firstOutput = line
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let url = URL(string: text), let port = url.port, text.hasPrefix("http://") else {
            Self.end(process)
            throw Failure(description: "assetpack serve did not print its URL (got '\(text)'): \(Self.read(logDirectory.file("log")))")
        }
        self.port = UInt16(port)
        self.baseURL = text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    /// What the server logged so far (its standard error).
    package var log: String { Self.read(logDirectory.file("log")) }

    /// One line of the access log: a response, logged when it ended.
    package struct Access: Sendable, Equatable {
        package var method: String
        /// The request target as sent (`/Big-0123456789ab.zip`).
        package var target: String
        package var status: Int
        /// Body bytes the server handed to the socket (not headers).
        package var bodyBytes: Int
        /// The `Range` asked for (`bytes=100-`), "" without one.
        package var range: String
        /// When the server took the request, to the second, by its clock.
        package var started: Date
        /// The words of the notes after the duration (`fault=drop`,
        /// `client`, `closed`, …), without the range.
        package var notes: [String]

        /// The first byte the `Range` asked for; 0 without one.
        package var rangeStart: Int {
            guard range.hasPrefix("bytes=") else { return 0 }
            return Int(range.dropFirst(6).prefix { $0 != "-" }) ?? 0
        }
    }

    /// The responses logged so far, in the order they ended.
    package var accessLog: [Access] {
        log.split(separator: "\n").compactMap { line in
            // remote - - [time] "METHOD target HTTP/1.1" status bytes seconds notes…
            let quoted = line.split(separator: "\"", omittingEmptySubsequences: false)
            guard quoted.count == 3 else { return nil }
            let request = quoted[1].split(separator: " ")
            let after = quoted[2].split(separator: " ")
            guard request.count == 3, after.count >= 3, let status = Int(after[0]), let bytes = Int(after[1]),
                  let open = quoted[0].firstIndex(of: "["), let close = quoted[0].lastIndex(of: "]"),
                  let started = Self.logTime.date(from: String(quoted[0][quoted[0].index(after: open)..<close])) else { return nil }
            let notes = after.dropFirst(3).map(String.init)
            let range = notes.first { $0.hasPrefix("range=") }.map { String($0.dropFirst(6)) } ?? ""
            return Access(method: String(request[0]), target: String(request[1]), status: status, bodyBytes: bytes,
                          range: range, started: started, notes: notes.filter { !$0.hasPrefix("range=") })
        }
    }

    /// The access log's time (`05/Dec/2026:12:07:09 +0000`, common log format).
    private static let logTime: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "dd/MMM/yyyy:HH:mm:ss Z"
        return formatter
    }()

    /// The logged responses that `matching` selects, once there are at
    /// least `count` (a response is logged after its last byte, or when
    /// the client went away, so a client may finish first), or what there
    /// is after 20 s.
    package func accessLog(count: Int, where matching: (Access) -> Bool) -> [Access] {
        awaitEntries(count: count, { accessLog }, where: matching)
    }

    /// Whether the server process is still running.
    package var isRunning: Bool { process.isRunning }

    /// Everything the server wrote to standard output; call after ``stop(_:)``.
    package var standardOutput: String {
        String(decoding: firstOutput + output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Stops the server (`signal`, then SIGKILL if it is still there after
    /// 20 s) and returns its exit status.
    @discardableResult
    package func stop(_ signal: Int32 = SIGTERM) -> Int32 { Self.end(process, signal) }

    @discardableResult
    static func end(_ process: Process, _ signal: Int32 = SIGTERM) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    private static func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    deinit { stop() }
}
