import Foundation

/// Runs programs found on PATH (unzip, zip, python3, sh) for witness tests.
enum ExternalTool {
    /// The full path of `name` on PATH, or `nil`.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static func available(_ names: String...) -> Bool { names.allSatisfy { find($0) != nil } }

    struct Output {
        var status: Int32
        var stdout: [UInt8]
        var stderr: String
    }

    /// Runs `name` with `arguments` in `directory`. Standard input is
    /// empty; standard error goes to a file, read after the exit, so only
    /// one pipe needs draining.
    static func run(_ name: String, _ arguments: [String], in directory: String) throws -> Output {
        guard let executable = find(name) else { throw ToolMissing(name: name) }
        let errorPath = directory + "/.stderr-\(UInt32.random(in: 0 ... .max))"
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errorPath) }
        let errorFile = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = errorFile
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try errorFile.close()
        let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return Output(status: process.terminationStatus, stdout: [UInt8](data), stderr: errors)
    }

    /// Runs `command` with `sh -c` in `directory`, which must succeed.
    @discardableResult
    static func shell(_ command: String, in directory: String) throws -> [UInt8] {
        let output = try run("sh", ["-c", command], in: directory)
        guard output.status == 0 else { throw Failed(command: command, status: output.status, stderr: output.stderr) }
        return output.stdout
    }

    /// Runs a Python 3 script in `directory`, which must succeed.
    @discardableResult
    static func python(_ script: String, in directory: String) throws -> [UInt8] {
        let output = try run("python3", ["-c", script], in: directory)
        guard output.status == 0 else { throw Failed(command: "python3", status: output.status, stderr: output.stderr) }
        return output.stdout
    }

    struct ToolMissing: Error { var name: String }
    struct Failed: Error { var command: String; var status: Int32; var stderr: String }
}
