import Foundation
import Testing
import AssetPacks
import AssetSystem
import AssetStore
import TestSupport

/// Two processes installing the same pack at the same moment: one installs,
/// the other waits on the pack's lock and finds it installed; both succeed.
@Suite struct ConcurrentInstallTests {
    /// Whether process `pid` has the file at `path` open: a writer that
    /// opened a lock file is at that lock, trying it until it is free
    /// (waits poll, so the kernel lists no waiter).
    static func hasOpen(_ pid: Int32, _ path: String) -> Bool {
        guard let target = try? FileDescriptor.status(of: path) else { return false }
        return FileSystem.names(in: "/proc/\(pid)/fd").contains { fd in
            guard let s = try? FileDescriptor.status(of: "/proc/\(pid)/fd/\(fd)") else { return false }
            return s.inode == target.inode && s.device == target.device
        }
    }

    /// Both installs are started while the test holds the pack lock, and
    /// let go only once the kernel shows both of them waiting on it.
    @Test(.timeLimit(.minutes(3))) func twoInstallersMeetAtThePackLock() throws {
        let s = TemporaryDirectory("assetpack-same-pack")
        try Helper.makePacks(s.path + "/packs", versions: 1)
        let container = GroupContainer(path: s.container)
        try container.createLayout()
        let lockPath = container.lockPath(forPack: "stress")
        let held = try FileLock(path: lockPath)
        let installers = try (0..<2).map { _ in
            try Child(CLI.binary, ["install", s.path + "/packs/v1.zip", "--json", "--container", s.container])
        }
        #expect(eventually(timeout: 30) { installers.allSatisfy { Self.hasOpen($0.pid, lockPath) } }, "both installers wait on the pack lock")
        _ = consume held
        var changes: [String] = []
        for installer in installers {
            #expect(installer.wait(timeout: 30))
            #expect(installer.exitStatus == 0, "\(installer.stderr)")
            changes.append(jsonObject(installer.stdout.split(separator: "\n").joined())["change"] as? String ?? "?")
        }
        #expect(changes.sorted() == ["installed", "unchanged"])
        try expectOneInstall(s)
    }

    /// Two installs started together, with nothing to line them up: run a
    /// few times, each time one installs and the other finds it installed.
    @Test(.timeLimit(.minutes(3))) func twoInstallersRacingFreely() throws {
        for round in 0..<3 {
            let s = TemporaryDirectory("assetpack-race-\(round)")
            try Helper.makePacks(s.path + "/packs", versions: 1)
            let installers = try (0..<2).map { _ in
                try Child(CLI.binary, ["install", s.path + "/packs/v1.zip", "--json", "--container", s.container])
            }
            var changes: [String] = []
            for installer in installers {
                #expect(installer.wait(timeout: 30))
                #expect(installer.exitStatus == 0, "\(installer.stderr)")
                changes.append(jsonObject(installer.stdout.split(separator: "\n").joined())["change"] as? String ?? "?")
            }
            #expect(changes.sorted() == ["installed", "unchanged"], "round \(round)")
            try expectOneInstall(s)
        }
    }

    func expectOneInstall(_ s: TemporaryDirectory) throws {
        let manager = try AssetPackManager(container: .init(path: s.container))
        #expect(try manager.assetPack(withID: "stress").version == "1")   // generation 1: one install
        #expect(FileSystem.names(in: s.container + "/packs").count == 1)
        #expect(FileSystem.names(in: s.container + "/staging").isEmpty)
        #expect(try CLI.assetpack(["verify", "--deep"], container: s.container).status == 0)
    }

    /// With `--lock-timeout`, an install gives up when another process
    /// holds the pack's lock longer, and says which lock and how long.
    @Test(.timeLimit(.minutes(3))) func lockTimeoutExpiresWithAClearError() throws {
        let s = TemporaryDirectory("assetpack-lock-timeout")
        try Helper.makePacks(s.path + "/packs", versions: 1)
        let container = GroupContainer(path: s.container)
        try container.createLayout()
        let holder = try FileLock(path: container.lockPath(forPack: "stress"))
        let start = Date()
        let r = try CLI.assetpack(["install", s.path + "/packs/v1.zip", "--lock-timeout", "0.3"], container: s.container)
        #expect(Date().timeIntervalSince(start) >= 0.3)
        #expect(r.status == 1)
        #expect(r.stderr == "assetpack install: error: timed out after 0.3 s waiting for the pack lock of 'stress' (\(container.lockPath(forPack: "stress"))), held by pid \(getpid())\n")
        let rm = try CLI.assetpack(["rm", "stress", "--lock-timeout", "0.1"], container: s.container)
        #expect(rm.status == 1 && rm.stderr.contains("timed out after 0.1 s"))
        _ = consume holder
        #expect(try CLI.assetpack(["install", s.path + "/packs/v1.zip", "--lock-timeout", "0.3"], container: s.container).status == 0)
    }
}
