import Foundation

/// Runs the real `assetpack` binary (built next to the test bundle) and
/// other programs, capturing their output.
enum CLI {
    struct Result {
        let status: Int32
        let stdout: Data
        let stderr: String
        var out: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// The built `assetpack` executable.
    static let binary: String = {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // swift-testing may run from inside the .xctest bundle directory.
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("assetpack").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return "assetpack"
    }()

    /// Runs `assetpack args…` with the container in the environment.
    @discardableResult
    static func assetpack(_ args: [String], container: String? = nil, stdin: Data? = nil) throws -> Result {
        var env = ProcessInfo.processInfo.environment
        if let container { env["ASSETPACKS_CONTAINER"] = container }
        return try run(binary, args, environment: env, stdin: stdin)
    }

    /// Runs a program found on PATH (or by absolute path).
    @discardableResult
    static func run(_ program: String, _ args: [String], environment: [String: String]? = nil,
                    directory: String? = nil, stdin: Data? = nil) throws -> Result {
        let p = Process()
        if program.hasPrefix("/") {
            p.executableURL = URL(fileURLWithPath: program)
            p.arguments = args
        } else {
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = [program] + args
        }
        if let environment { p.environment = environment }
        if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
        // stderr goes to a file, stdout to a pipe read here: a chatty child
        // never blocks on a full pipe nobody drains.
        let errPath = FileManager.default.temporaryDirectory.path + "/assetpack-stderr-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        let errFile = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let out = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = errFile
        p.standardInput = input
        try p.run()
        try errFile.close()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let errData = (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data()
        return Result(status: p.terminationStatus, stdout: outData, stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// A temporary directory removed at deinit.
final class Scratch {
    let path: String
    init(_ label: String) {
        path = FileManager.default.temporaryDirectory.path + "/assetpack-cli-\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    var container: String { path + "/container" }

    func write(_ relative: String, _ bytes: [UInt8]) throws {
        let full = path + "/" + relative
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
    }

    func write(_ relative: String, _ text: String) throws { try write(relative, Array(text.utf8)) }

    func read(_ relative: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path + "/" + relative)) }

    /// Files under the container except the index and locks, with sizes.
    func containerFiles() -> [String: Int] {
        var result: [String: Int] = [:]
        guard let e = FileManager.default.enumerator(atPath: container) else { return [:] }
        while let name = e.nextObject() as? String {
            if name.hasPrefix("index/") || name.hasPrefix("locks/") { continue }
            let attrs = try? FileManager.default.attributesOfItem(atPath: container + "/" + name)
            result[name] = (attrs?[.size] as? Int) ?? -1
        }
        return result
    }
}

func noise(_ count: Int, seed: UInt64) -> [UInt8] {
    var x = seed | 1
    return (0..<count).map { _ in
        x ^= x << 13; x ^= x >> 7; x ^= x << 17
        return UInt8(truncatingIfNeeded: x)
    }
}
