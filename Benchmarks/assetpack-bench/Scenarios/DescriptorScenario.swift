import Foundation
import AssetPacks
import AssetSystem
import AssetStore

/// `descriptor`: descriptor handouts per second, each descriptor closed at
/// once, on the `small-read` members.
///
/// - `descriptor/stored`: a new descriptor of the archive positioned at a
///   stored member; against `open` of the extracted file, and against a bare
///   Unix-socket round trip (what a handout through the daemon adds at least).
/// - `descriptor/memfd`: a deflated member inflated into a sealed `memfd`;
///   against `open` of the extracted plain file.
/// - `descriptor/standalone`: a stored member copied into a sealed `memfd`
///   (offset 0, exactly the member); against `open` of the extracted file.
///   With 100,000 members in random order and the manager's default cache
///   (128 files), nearly every handout of these two makes a new file: they
///   measure the first handout of a member.
/// - `descriptor/memfd-repeat`, `descriptor/standalone-repeat`: the same
///   handouts of 64 members that stay in the cache: each a `dup` of the
///   kept file; against `open` of the same 64 files.
/// - `descriptor/stored-own`: `descriptor/stored` with `.ownOffset` (a new
///   open description by name, as the daemon and the C API ask for).
/// - `descriptor/daemon`: a stored member's descriptor from `assetpack
///   daemon` (another process) over its socket, `SCM_RIGHTS`; against the
///   bare one-byte Unix-socket round trip. Needs `assetpack` built beside
///   this executable (`swift build -c release`).
enum DescriptorScenario {
    static let scenario = Scenario(
        "descriptor", "descriptor handouts per second: stored (archive range), deflated (sealed memfd), standalone"
    ) { ctx in try run(ctx) }

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let stored = try SmallDataset.prepare(ctx.workspace, deflated: false)
        let text = try SmallDataset.prepare(ctx.workspace, deflated: true)
        let storedManager = try AssetPackManager(container: .init(path: stored.container.path))
        let textManager = try AssetPackManager(container: .init(path: text.container.path))
        let plan = ctx.scale.plan
        let range = try Competition.run([
            Contender("assetpacks", DescriptorHandout(manager: storedManager, pack: stored.packID, paths: stored.members.paths, options: [])),
            Contender("files", FilesOpen(paths: stored.filePaths)),
            Contender("unix-socket", UnixSocketRoundTrip(socket: try EchoSocket())),
        ], items: stored.members.count, plan: plan, seed: 0xD1)
        let memfd = try Competition.run([
            Contender("assetpacks", bytes: text.members.sizes,
                      DescriptorHandout(manager: textManager, pack: text.packID, paths: text.members.paths, options: [])),
            Contender("files", bytes: text.members.sizes, FilesOpen(paths: text.filePaths)),
        ], items: text.members.count, plan: plan, seed: 0xD2)
        let standalone = try Competition.run([
            Contender("assetpacks", bytes: stored.members.sizes,
                      DescriptorHandout(manager: storedManager, pack: stored.packID, paths: stored.members.paths, options: .standalone)),
            Contender("files", bytes: stored.members.sizes, FilesOpen(paths: stored.filePaths)),
        ], items: stored.members.count, plan: plan, seed: 0xD3)
        let hot = 64
        let memfdRepeat = try Competition.run([
            Contender("assetpacks", bytes: Array(text.members.sizes.prefix(hot)),
                      DescriptorHandout(manager: textManager, pack: text.packID, paths: Array(text.members.paths.prefix(hot)), options: [])),
            Contender("files", bytes: Array(text.members.sizes.prefix(hot)), FilesOpen(paths: Array(text.filePaths.prefix(hot)))),
        ], items: hot, plan: plan, seed: 0xD5)
        let standaloneRepeat = try Competition.run([
            Contender("assetpacks", bytes: Array(stored.members.sizes.prefix(hot)),
                      DescriptorHandout(manager: storedManager, pack: stored.packID, paths: Array(stored.members.paths.prefix(hot)), options: .standalone)),
            Contender("files", bytes: Array(stored.members.sizes.prefix(hot)), FilesOpen(paths: Array(stored.filePaths.prefix(hot)))),
        ], items: hot, plan: plan, seed: 0xD6)
        let own = try Competition.run([
            Contender("assetpacks", DescriptorHandout(manager: storedManager, pack: stored.packID, paths: stored.members.paths, options: .ownOffset)),
            Contender("files", FilesOpen(paths: stored.filePaths)),
        ], items: stored.members.count, plan: plan, seed: 0xD7)
        var results = [
            ScenarioResult(name: "descriptor/stored",
                           summary: "descriptor of the archive at a stored member (1–16 KiB), a `dup` of the one kept open; files: `open`; unix-socket: one-byte round trip to an echo thread",
                           measurements: range),
            ScenarioResult(name: "descriptor/stored-own",
                           summary: "as `descriptor/stored` with `.ownOffset`: a new open description of the archive (`openat` by name) at the member; files: `open`",
                           measurements: own),
            ScenarioResult(name: "descriptor/memfd",
                           summary: "deflated text member (1–16 KiB) inflated into a sealed `memfd`; files: `open` of the plain file",
                           measurements: memfd),
            ScenarioResult(name: "descriptor/standalone",
                           summary: "stored member (1–16 KiB) copied into a sealed `memfd`; files: `open`",
                           measurements: standalone),
            ScenarioResult(name: "descriptor/memfd-repeat",
                           summary: "deflated text members (1–16 KiB) handed out again: 64 members kept in the cache, each handout a `dup` of the sealed `memfd`; files: `open` of the same 64 plain files",
                           measurements: memfdRepeat),
            ScenarioResult(name: "descriptor/standalone-repeat",
                           summary: "stored members (1–16 KiB) asked for standalone again: 64 kept sealed `memfd`s, each handout a `dup`; files: `open` of the same 64 files",
                           measurements: standaloneRepeat),
        ]
        if let daemon = try DaemonProcess.start(executable: ctx.executable, container: stored.container) {
            defer { daemon.stop() }
            let client = AssetPackClient(socketPath: stored.container.daemonSocketPath)
            let viaDaemon = try Competition.run([
                Contender("assetpacks", DaemonHandout(client: client, pack: stored.packID, paths: stored.members.paths)),
                Contender("unix-socket", UnixSocketRoundTrip(socket: try EchoSocket())),
            ], items: stored.members.count, plan: plan, seed: 0xD4)
            results.append(ScenarioResult(
                name: "descriptor/daemon",
                summary: "descriptor of a stored member from `assetpack daemon` over its socket (request, SO_PEERCRED-checked lookup, SCM_RIGHTS reply); "
                    + "unix-socket: one-byte round trip to an echo thread",
                measurements: viaDaemon))
        } else {
            Log.info("  descriptor/daemon skipped: no assetpack binary beside \(ctx.executable)")
        }
        return results
    }
}

/// A descriptor from the daemon, closed at once.
struct DaemonHandout: Operation {
    let client: AssetPackClient
    let pack: String
    let paths: [String]

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let d = try client.descriptor(for: paths[item], searchingInAssetPackWithID: pack)
        return Int(d.length)
    }
}

/// `assetpack daemon` on a container, as a child process.
final class DaemonProcess {
    private let process: Process

    private init(_ process: Process) { self.process = process }

    /// Starts the daemon and waits for its "serving" line; `nil` when no
    /// `assetpack` binary sits beside `executable`.
    static func start(executable: String, container: GroupContainer) throws -> DaemonProcess? {
        let binary = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("assetpack").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["daemon", "--container", container.path]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        var line: [UInt8] = []
        while true {
            let byte = err.fileHandleForReading.readData(ofLength: 1)
            guard let b = byte.first else { throw BenchError.failed("assetpack daemon exited: \(String(decoding: line, as: UTF8.self))") }
            if b == 0x0a { break }
            line.append(b)
        }
        guard String(decoding: line, as: UTF8.self).contains("serving") else {
            p.terminate()
            throw BenchError.failed("assetpack daemon: \(String(decoding: line, as: UTF8.self))")
        }
        return DaemonProcess(p)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
