import Foundation
import Testing
import TestSupport

/// Packs whose IDs spell names the container uses itself, through the real
/// `assetpack` binary. Every writer gets `--lock-timeout`, so a pack lock
/// that is the container's or the daemon's lock fails instead of hanging.
@Suite struct ReservedNameCommandTests {
    /// Every name under the container root and under `locks/` that is also a
    /// valid pack ID.
    static let reserved = ["container", "daemon", "index", "packs", "staging", "cache", "locks", "quarantine",
                           "daemon.sock", "container.lock", "daemon.lock"]

    /// Packages version `version` of pack `id`; returns the pack's path.
    func package(_ s: TemporaryDirectory, id: String, version: Int) throws -> String {
        let dir = "src-\(version)"
        try s.write("\(dir)/manifest.json", """
            { "assetPackID": "\(id)", "downloadPolicy": { "onDemand": {} },
              "fileSelectors": [ { "file": "notes.txt" }, { "directory": "media" } ], "platforms": ["linux"] }
            """)
        try s.write("\(dir)/notes.txt", String(repeating: "version \(version) ", count: 400))
        try s.write("\(dir)/media/clip.bin", noise(20_000, seed: UInt64(version)))
        let out = s.path + "/\(id)-\(version).zip"
        let r = try CLI.assetpack(["package", s.path + "/\(dir)/manifest.json", "-o", out])
        guard r.status == 0 else { throw TestFailure("package: \(r.stderr)") }
        return out
    }

    /// `assetpack verify --deep --json` exits 0 with no findings at all (not
    /// even reclaimable ones).
    func expectClean(_ s: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let r = try CLI.assetpack(["verify", "--deep", "--json"], container: s.container)
        let json = (try? JSONSerialization.jsonObject(with: r.stdout)) as? [String: Any]
        let findings = (json?["findings"] as? [[String: Any]] ?? []).map { "\($0["code"] ?? "") \($0["object"] ?? "")" }
        #expect(r.status == 0 && findings.isEmpty, "verify exited \(r.status): \(findings) \(r.stderr)", sourceLocation: sourceLocation)
    }

    func install(_ s: TemporaryDirectory, _ path: String) throws -> Program.Result {
        try CLI.assetpack(["install", path, "--lock-timeout", "2"], container: s.container)
    }

    @Test(.timeLimit(.minutes(3)), arguments: reserved)
    func installReadUpdateVerifyRemove(id: String) throws {
        let s = TemporaryDirectory("reserved")
        let v1 = try package(s, id: id, version: 1), v2 = try package(s, id: id, version: 2)
        let first = try install(s, v1)
        #expect(first.status == 0, "\(first.stderr)")
        let cat = try CLI.assetpack(["cat", "notes.txt", "--pack", id], container: s.container)
        let notes = try s.read("src-1/notes.txt")
        #expect(cat.status == 0 && cat.stdoutBytes == notes)
        try expectClean(s)

        let update = try install(s, v2)
        #expect(update.status == 0, "\(update.stderr)")
        let clip = try CLI.assetpack(["cat", "media/clip.bin", "--pack", id, "--descriptor"], container: s.container)
        let clipBytes = try s.read("src-2/media/clip.bin")
        #expect(clip.status == 0 && clip.stdoutBytes == clipBytes)
        try expectClean(s)

        let rm = try CLI.assetpack(["rm", id, "--lock-timeout", "2"], container: s.container)
        #expect(rm.status == 0, "\(rm.stderr)")
        try expectClean(s)
        #expect(FileManager.default.fileExists(atPath: s.container + "/locks/container.lock"))
    }

    /// A running `assetpack daemon` on the scratch container.
    func startDaemon(_ s: TemporaryDirectory) throws -> Child {
        let daemon = try Child(CLI.binary, ["daemon", "--container", s.container])
        let up = eventually(timeout: 30) { !daemon.process.isRunning || daemon.stderr.contains("serving") }
        guard up, daemon.process.isRunning else { throw TestFailure("the daemon did not start: \(daemon.stderr)") }
        return daemon
    }

    /// A pack named `daemon` next to a running daemon: installing it does not
    /// wait for the daemon's lock, removing it does not take that lock's file
    /// away (a second daemon is still refused), and once the daemon has
    /// stopped, its lock is no pack's orphan.
    @Test(.timeLimit(.minutes(3))) func aPackNamedDaemonBesideARunningDaemon() throws {
        let s = TemporaryDirectory("reserved-daemon")
        let pack = try package(s, id: "daemon", version: 1)
        #expect(try CLI.assetpack(["install", try package(s, id: "other", version: 3)], container: s.container).status == 0)
        let daemon = try startDaemon(s)

        let installed = try install(s, pack)
        #expect(installed.status == 0, "\(installed.stderr)")
        let cat = try CLI.assetpack(["cat", "media/clip.bin", "--pack", "daemon", "--daemon"], container: s.container)
        let clip = try s.read("src-1/media/clip.bin")
        #expect(cat.status == 0 && cat.stdoutBytes == clip, "\(cat.stderr)")
        let rm = try CLI.assetpack(["rm", "daemon", "--lock-timeout", "2"], container: s.container)
        #expect(rm.status == 0, "\(rm.stderr)")
        #expect(FileManager.default.fileExists(atPath: s.container + "/locks/daemon.lock"))

        let second = try Child(CLI.binary, ["daemon", "--container", s.container])
        #expect(second.wait(timeout: 20), "a second daemon started beside the first")
        #expect(second.exitStatus == 1 && second.stderr.contains("another descriptor daemon (pid \(daemon.pid)) serves"), "\(second.stderr)")

        daemon.signal(SIGTERM)
        #expect(daemon.wait(timeout: 20) && daemon.exitStatus == 0, "\(daemon.stderr)")
        try expectClean(s)
        #expect(try install(s, pack).status == 0)
        try expectClean(s)
        #expect(try CLI.assetpack(["rm", "daemon", "--lock-timeout", "2"], container: s.container).status == 0)
        try expectClean(s)
    }
}
