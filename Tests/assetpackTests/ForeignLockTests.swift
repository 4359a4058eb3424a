import Foundation
import Testing
import AssetSystem
import AssetStore
import TestSupport

/// Issue 33, item 2: another user who can read the container opens every
/// file the store ever locked and holds a shared lock on what it can open.
/// None of it may hold up the owner: lock files are 0600 (their directory
/// 0700), so the foreign open is refused, and the files it can read (the
/// index's `data.mdb`, the archives) the store never locks exclusively.
/// The other user is a real process under another uid (`setpriv`); every
/// command of the owner is bounded, so that a hang fails instead of
/// hanging the suite.
@Suite struct ForeignLockTests {
    static let stranger: UInt32 = 4242
    /// Root, with `setpriv` and a Python every user can run.
    static let canActAsAnotherUser = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    /// Runs `assetpack args…` under `umask`, waiting at most 60 s; `nil`
    /// when it was still running then (it is killed).
    static func owner(_ args: [String], umask: String) throws -> (status: Int32, stdout: String, stderr: String)? {
        let child = try Child("/bin/sh", ["-c", "umask \(umask) && exec \"$0\" \"$@\"", CLI.binary] + args)
        guard child.wait(timeout: 60), let status = child.exitStatus else { return nil }
        return (status, child.stdout, child.stderr)
    }

    /// Starts the daemon under `umask` and stops it; whether it served.
    static func daemonServes(_ container: String, umask: String) throws -> Bool {
        let child = try Child("/bin/sh", ["-c", "umask \(umask) && exec \"$0\" \"$@\"", CLI.binary, "daemon", "--container", container])
        let up = eventually(timeout: 60) { !child.process.isRunning || child.stderr.contains("serving") }
        let served = up && child.process.isRunning
        child.signal(SIGTERM)
        return child.wait(timeout: 20) && served && child.exitStatus == 0
    }

    /// Every file the store locks, or locked before this version (data.mdb,
    /// the archive), in a container the owner used under `umask`.
    static func lockableFiles(_ s: TemporaryDirectory, umask: String) throws -> [String] {
        let c = s.container
        #expect(try owner(["install", s.file("packs/v1.zip"), "--container", c], umask: umask)?.status == 0)
        #expect(try daemonServes(c, umask: umask))   // locks/daemon.lock
        // Nothing downloads: cancel takes the download lock to say so.
        #expect(try owner(["cancel", "stress", "--container", c], umask: umask)?.stderr.contains("no download") == true)
        let archive = try #require(FileSystem.names(in: c + "/packs").first)
        return ["index/data.mdb", "index/lock.mdb", "index/map.lock", "locks/container.lock", "locks/daemon.lock",
                "locks/packs/stress.lock", "downloads/stress.lock", "packs/" + archive].map { c + "/" + $0 }
    }

    @Test(.enabled(if: canActAsAnotherUser), .timeLimit(.minutes(5)),
          arguments: ["022", "077"], [LockPeer.Style.openFile, .process])
    func aReaderOfTheContainerCannotHoldUpItsOwner(umask: String, style: LockPeer.Style) throws {
        let s = TemporaryDirectory("assetpack-foreign-\(umask)")
        #expect(chmod(s.path, 0o755) == 0)   // mkdtemp's 0700 would keep the stranger out of everything
        try Helper.makePacks(s.file("packs"), versions: 2)
        let files = try Self.lockableFiles(s, umask: umask)
        let peer = try LockPeer(files, style: style, uid: Self.stranger)
        defer { peer.release() }
        let readable = umask == "022"
        // What the stranger can open, it locks; the rest the mode refuses.
        let expected: [LockPeer.Outcome] = files.map { path in
            readable && (path.hasSuffix("data.mdb") || path.hasSuffix(".zip")) ? .held : .refused("EACCES")
        }
        #expect(peer.outcomes == expected, "\(zip(files, peer.outcomes).map { "\($0.0): \($0.1)" })")

        let c = s.container
        for args in [["ls"], ["install", s.file("packs/v2.zip")], ["verify"], ["rm", "stress"],
                     ["install", s.file("packs/v1.zip")], ["verify", "--repair"]] {
            let r = try Self.owner(args + ["--container", c], umask: umask)
            #expect(r != nil, "assetpack \(args.joined(separator: " ")) was still waiting after 60 s")
            #expect(r?.status == 0, "assetpack \(args.joined(separator: " ")): \(r?.stderr ?? "")")
        }
        #expect(try Self.daemonServes(c, umask: umask))
    }

    /// A container a former version made: lock files 0644 in directories
    /// 0755, `lock.mdb` 0644. The owner's next writer narrows them, and the
    /// stranger's open is refused from then on.
    @Test(.enabled(if: canActAsAnotherUser), .timeLimit(.minutes(3)))
    func theOwnersNextWriterNarrowsAFormerVersionsModes() throws {
        let s = TemporaryDirectory("assetpack-foreign-old")
        #expect(chmod(s.path, 0o755) == 0)
        try Helper.makePacks(s.file("packs"), versions: 2)
        let c = s.container
        #expect(try Self.owner(["install", s.file("packs/v1.zip"), "--container", c], umask: "022")?.status == 0)
        let files = ["index/lock.mdb", "locks/container.lock", "locks/packs/stress.lock"].map { c + "/" + $0 }
        for dir in ["locks", "locks/packs"] { #expect(chmod(c + "/" + dir, 0o755) == 0) }
        for file in files { #expect(chmod(file, 0o644) == 0) }
        #expect(unlink(c + "/index/map.lock") == 0)
        let before = try LockPeer(files, uid: Self.stranger)
        #expect(before.outcomes == [.held, .held, .held])
        before.release()

        #expect(try Self.owner(["install", s.file("packs/v2.zip"), "--container", c], umask: "022")?.status == 0)
        func mode(_ path: String) -> UInt32? { (try? FileDescriptor.status(of: path))??.mode }
        #expect(mode(c + "/locks").map { $0 & 0o7777 } == 0o700)
        #expect(mode(c + "/locks/packs").map { $0 & 0o7777 } == 0o700)
        for file in files + [c + "/index/map.lock"] { #expect(mode(file).map { $0 & 0o7777 } == 0o600, "\(file)") }
        let after = try LockPeer(files + [c + "/index/map.lock"], uid: Self.stranger)
        #expect(after.outcomes == Array(repeating: .refused("EACCES"), count: 4))
    }
}
