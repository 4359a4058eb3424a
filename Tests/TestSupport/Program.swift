import Foundation

/// Runs another program to completion and captures what it printed: the
/// package's binaries, and the witnesses the tests compare against
/// (`unzip`, `zip`, `python3`, `sh`).
package enum Program {
    /// How a run ended and what it printed.
    package struct Result: Sendable {
        /// The exit status, or the number of the signal that ended it.
        package let status: Int32
        package let stdout: Data
        package let stderr: String

        /// Standard output as UTF-8 text.
        package var out: String { String(decoding: stdout, as: UTF8.self) }
        /// Standard output as bytes.
        package var stdoutBytes: [UInt8] { [UInt8](stdout) }
    }

    /// A run that had to succeed and did not.
    package struct Failure: Error, CustomStringConvertible {
        package let program: String
        package let status: Int32?
        package let stderr: String
        package var description: String {
            "\(program): " + (status.map { "exit status \($0): \(stderr)" } ?? "not found on PATH")
        }
    }

    /// The full path of `name` on `PATH`, or `nil`.
    package static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The path of this package's executable `name` (`assetpack`,
    /// `assetpack-testhelper`), built into the directory of the test bundle;
    /// `name` itself, to be looked up on `PATH`, when it is not there.
    package static func built(_ name: String) -> String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // swift-testing may run from inside the .xctest bundle directory.
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return name
    }

    /// Whether every one of `names` is on `PATH`.
    package static func available(_ names: String...) -> Bool { names.allSatisfy { find($0) != nil } }

    /// Runs `program` (an absolute path, or a name looked up on `PATH`) with
    /// `arguments`, feeding it `stdin` (or nothing), in `directory` (or this
    /// process's), with `environment` (or this process's).
    ///
    /// Standard error goes to a file read after the exit and standard output
    /// to a pipe read here, so a chatty child never blocks on a full pipe.
    ///
    /// - Throws: ``Failure`` when `program` is not found; what `Process` and
    ///   `FileHandle` throw.
    @discardableResult
    package static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil,
                            directory: String? = nil, stdin: Data? = nil) throws -> Result {
        guard let executable = program.hasPrefix("/") ? program : find(program) else {
            throw Failure(program: program, status: nil, stderr: "")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let errorPath = FileManager.default.temporaryDirectory.path + "/assetpacks-stderr-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errorPath) }
        let errorFile = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errorFile
        process.standardInput = input
        try process.run()
        try errorFile.close()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errors = (try? Data(contentsOf: URL(fileURLWithPath: errorPath))) ?? Data()
        return Result(status: process.terminationStatus, stdout: data, stderr: String(decoding: errors, as: UTF8.self))
    }

    /// Runs `program` as ``run(_:_:environment:directory:stdin:)`` does and
    /// returns its standard output.
    ///
    /// - Throws: ``Failure`` unless it exits with status 0.
    @discardableResult
    package static func output(_ program: String, _ arguments: [String], directory: String? = nil) throws -> [UInt8] {
        let result = try run(program, arguments, directory: directory)
        guard result.status == 0 else { throw Failure(program: program, status: result.status, stderr: result.stderr) }
        return result.stdoutBytes
    }
}
