import Foundation
import TestSupport

/// The test helper executable, built beside `assetpack`.
enum Helper {
    static let binary = Program.built("assetpack-testhelper")

    /// Runs the helper to completion.
    @discardableResult
    static func run(_ args: [String]) throws -> Program.Result { try Program.run(binary, args) }

    /// Writes `dir/v1.zip` … `dir/v<versions>.zip` of the stress pack `id`.
    static func makePacks(_ dir: String, id: String = "stress", versions: Int) throws {
        let r = try run(["make-packs", "--dir", dir, "--id", id, "--versions", String(versions)])
        guard r.status == 0 else { throw TestFailure("make-packs: \(r.stderr)") }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A process running in the background, its output going to files.
final class Child: @unchecked Sendable {
    // Process is thread-safe for the calls made here (isRunning, terminate,
    // processIdentifier), and the paths are immutable.
    let process = Process()
    private let outPath: String
    private let errPath: String

    init(_ program: String, _ args: [String], environment: [String: String] = [:]) throws {
        let base = FileManager.default.temporaryDirectory.path + "/assetpack-child-\(UUID().uuidString.prefix(8))"
        outPath = base + ".out"
        errPath = base + ".err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = args
        var env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        // Prefetch downloads defer on battery and load: not the test machine's.
        if env["ASSETPACKS_SYSTEM_ROOT"] == nil { env["ASSETPACKS_SYSTEM_ROOT"] = CLI.neutralSystemRoot }
        process.environment = env
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
    }

    var pid: Int32 { process.processIdentifier }
    var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits up to `timeout` seconds for the process to end; whether it did.
    @discardableResult
    func wait(timeout: Double) -> Bool {
        eventually(timeout: timeout) { !process.isRunning }
    }

    /// Whether it ended by `SIGKILL`.
    var wasKilled: Bool { !process.isRunning && process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL }
    /// Its exit status, once it exited normally.
    var exitStatus: Int32? {
        guard !process.isRunning, process.terminationReason == .exit else { return nil }
        return process.terminationStatus
    }
}

/// Parses one line of JSON printed by the helper.
func jsonObject(_ text: String) -> [String: Any] {
    let line = text.split(separator: "\n").last.map(String.init) ?? ""
    return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
}

/// Another local user for the multi-user tests: uid (and gid) 4242, which
/// needs no passwd entry, reached with `setpriv`.
enum OtherUser {
    static let uid = 4242

    /// Whether root can run the built binary as uid 4242 (the tests that
    /// need it are skipped otherwise).
    static let isAvailable: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
        let r = try? Program.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", CLI.binary, "--version"])
        return r?.status == 0
    }()

    /// `args` run as uid 4242, to completion.
    static func run(_ args: [String]) throws -> Program.Result {
        try Program.run("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + args)
    }
}
