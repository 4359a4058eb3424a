import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Standard output and error without buffering surprises: data goes to
/// stdout in full (EPIPE ends quietly), diagnostics to stderr.
enum Output {
    /// Writes raw bytes to standard output. Returns false if the reader went
    /// away (EPIPE).
    @discardableResult
    static func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(1, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += n
        }
        return true
    }

    static func write(_ data: Data) {
        data.withUnsafeBytes { _ = write($0) }
    }

    /// Writes text to standard output as it is.
    static func write(_ text: String) {
        var s = text
        s.withUTF8 { _ = write(UnsafeRawBufferPointer($0)) }
    }

    /// Prints a line to standard output.
    static func line(_ text: String = "") {
        var s = text
        s.append("\n")
        s.withUTF8 { _ = write(UnsafeRawBufferPointer($0)) }
    }

    /// Prints a line to standard error.
    static func error(_ text: String) {
        var s = text
        s.append("\n")
        s.withUTF8 { b in _ = Glibc.write(2, b.baseAddress, b.count) }
    }

    /// Writes to standard error without a newline (progress bars).
    static func errorPartial(_ text: String) {
        var s = text
        s.withUTF8 { b in _ = Glibc.write(2, b.baseAddress, b.count) }
    }

    /// Whether standard error is a terminal (for progress bars).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// The one JSON configuration of `--json`: pretty, keys sorted, slashes
    /// not escaped, dates in ISO 8601.
    static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    /// Prints `value` as JSON, then a newline.
    static func json(_ value: some Encodable) throws(CLIError) {
        do {
            write(try jsonEncoder().encode(value))
            line()
        } catch {
            throw .failure("cannot encode the JSON output: \(error)")
        }
    }

    /// Prints `value` as one line of JSON (keys sorted), for commands that
    /// report as they go (`sync --json`: a line per pack).
    static func jsonLine(_ value: some Encodable) throws(CLIError) {
        let encoder = jsonEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            write(try encoder.encode(value))
            line()
        } catch {
            throw .failure("cannot encode the JSON output: \(error)")
        }
    }
}
