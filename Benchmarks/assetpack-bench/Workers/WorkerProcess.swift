import Foundation

/// A worker: this executable started again with `--worker KIND …`, a real
/// separate process. It prepares, writes `ready` on its standard output,
/// waits for a line on its standard input, works, and writes one JSON
/// object on its standard output before exiting.
final class WorkerProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--worker"] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// The worker's process ID.
    var pid: Int32 { process.processIdentifier }

    /// Waits for the worker's `ready` line.
    func waitUntilReady() throws {
        let fd = output.fileHandleForReading.fileDescriptor
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { throw BenchError.failed("worker \(process.arguments ?? []) exited before it was ready") }
            if byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        guard line == Array("ready".utf8) else {
            throw BenchError.failed("worker said \(String(decoding: line, as: UTF8.self)) instead of ready")
        }
    }

    /// Tells the worker to start.
    func go() {
        input.fileHandleForWriting.write(Data("go\n".utf8))
    }

    /// Writes `text` to the worker's standard input.
    func send(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Waits for the worker to finish and decodes what it reported.
    func result<T: Decodable>(_ type: T.Type) throws -> T {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError.failed("worker \(process.arguments ?? []) exited with status \(process.terminationStatus)")
        }
        return try JSONDecoder().decode(T.self, from: data)
    }
}

/// The path of this executable, for starting workers.
func currentExecutable() -> String {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let n = buffer.withUnsafeMutableBufferPointer { b in
        b.withMemoryRebound(to: CChar.self) { readlink("/proc/self/exe", $0.baseAddress!, $0.count - 1) }
    }
    return n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : CommandLine.arguments[0]
}
