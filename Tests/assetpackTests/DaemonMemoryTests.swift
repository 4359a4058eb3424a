import Foundation
import Testing
import Synchronization
@testable import AssetPacks
import AssetSystem
import TestSupport

/// Memory files from the daemon: one per member, shared; a bounded cache;
/// a per-user budget. And whom the socket lets in, and how refusals are logged.
@Suite(.serialized) struct DaemonMemoryTests {
    typealias Daemon = DaemonTests.Daemon

    func setUp(_ s: TemporaryDirectory) throws -> AssetPackManager { try DaemonTests().setUp(s) }

    /// The memory files process `pid` holds open: inode → size; but for
    /// empty ones (the store's pool of files made ahead, docs/descriptors.md).
    static func memoryFiles(of pid: Int32) -> [UInt64: Int64] {
        let dir = "/proc/\(pid)/fd"
        var found: [UInt64: Int64] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + name),
                  target.hasPrefix("/memfd:") else { continue }
            var st = stat()
            guard stat(dir + "/" + name, &st) == 0, st.st_size > 0 else { continue }
            found[UInt64(st.st_ino)] = Int64(st.st_size)
        }
        return found
    }

    static func inode(_ d: AssetDescriptor) -> UInt64 {
        var st = stat()
        _ = fstat(d.fileDescriptor, &st)
        return UInt64(st.st_ino)
    }

    @Test(.timeLimit(.minutes(3))) func sixteenRequestsForADeflatedMemberShareOneMemoryFile() throws {
        let s = TemporaryDirectory("assetpack-daemon-shared-memfd")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container)
        let want = try manager.contents(at: "text/a.txt", searchingInAssetPackWithID: "stress")
        // Sixteen clients at once.
        let clients = try (0..<16).map { _ in try AssetPackClient.connect(container: manager.container) }
        let got = Mutex<[Int: AssetDescriptor]>([:])
        let done = DispatchGroup()
        for (i, client) in clients.enumerated() {
            done.enter()
            Thread {
                defer { done.leave() }
                if let d = try? client.descriptor(for: "text/a.txt", searchingInAssetPackWithID: "stress") {
                    got.withLock { $0[i] = d }
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let descriptors = got.withLock { $0 }
        #expect(descriptors.count == 16)
        #expect(Set(descriptors.values.map(Self.inode)).count == 1)
        for d in descriptors.values { #expect(d.source == .memory && d.length == 50_000) }
        // Each has its own file position: reading one moves no other.
        let first = descriptors[0]!, second = descriptors[1]!
        var buffer = [UInt8](repeating: 0, count: 100)
        #expect(read(first.fileDescriptor, &buffer, 100) == 100)
        #expect(lseek(second.fileDescriptor, 0, SEEK_CUR) == 0)
        for d in descriptors.values { #expect(try d.data() == want) }
        // The daemon keeps the one file, no more.
        let held = Self.memoryFiles(of: daemon.child.pid)
        #expect(held.count == 1 && held.values.first == 50_000, "\(held)")
        // After an update the member is another file.
        try manager.installPack(at: s.path + "/packs/v2.zip")
        let updated = try clients[0].descriptor(for: "text/a.txt", searchingInAssetPackWithID: "stress")
        #expect(Self.inode(updated) != Self.inode(first))
        #expect(try updated.data() == manager.contents(at: "text/a.txt", searchingInAssetPackWithID: "stress"))
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(3))) func theDaemonsMemoryFilesStayWithinTheCache() throws {
        let s = TemporaryDirectory("assetpack-daemon-memfd-cache")
        let manager = try setUp(s)
        let cap: Int64 = 60 << 10
        let daemon = try Daemon(s.container, ["--memory-cache", "60K"])
        let client = try AssetPackClient.connect(container: manager.container)
        let requests: [(String, AssetDescriptor.Options)] = [
            ("text/a.txt", []), ("text/b.json", []), ("only/v1.txt", []), ("media/big.bin", .standalone),
            ("text/a.txt", .standalone), ("media/mid.bin", .standalone), ("tiny/t003", .standalone), ("text/b.json", []),
        ]
        var inodes: [String: Set<UInt64>] = [:]
        for (path, options) in requests {
            let d = try client.descriptor(for: path, searchingInAssetPackWithID: "stress", options: options)
            #expect(try d.data() == manager.contents(at: path, searchingInAssetPackWithID: "stress"), "\(path)")
            inodes["\(path) \(options.rawValue)", default: []].insert(Self.inode(d))
            // The daemon closes the copy it sent just after sending it.
            var held: [UInt64: Int64] = [:]
            let bounded = eventually(timeout: 5) {
                held = Self.memoryFiles(of: daemon.child.pid)
                return held.values.reduce(0, +) <= cap
            }
            #expect(bounded, "after \(path): \(held)")
            #expect(!held.isEmpty)
        }
        // b.json, used again before anything pushed it out, is the same file.
        #expect(inodes["text/b.json 0"]?.count == 1)
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(3))) func memoryFilesPastAUsersBudgetAreRefused() throws {
        let s = TemporaryDirectory("assetpack-daemon-memfd-budget")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container, ["--memory-budget", "60K"])
        var client: AssetPackClient? = try AssetPackClient.connect(container: manager.container)
        // 50 000 + 5 000 bytes; a.txt again costs nothing, it is the same file.
        for path in ["text/a.txt", "text/b.json", "text/a.txt"] {
            #expect(try client!.descriptor(for: path, searchingInAssetPackWithID: "stress").source == .memory)
        }
        let other = try AssetPackClient.connect(container: manager.container)
        #expect(try other.descriptor(for: "text/a.txt", searchingInAssetPackWithID: "stress").length == 50_000)
        // 50 000 more: refused, on either connection of the user.
        for c in [client!, other] {
            do {
                _ = try c.descriptor(for: "text/a.txt", searchingInAssetPackWithID: "stress", options: .standalone)
                Issue.record("served past the budget")
            } catch {
                #expect(error.code == .daemonBusy && error.message.contains("budget of 61440 bytes"), "\(error)")
            }
        }
        // Archive descriptors cost nothing.
        #expect(try other.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress").source == .archive)
        // Once both connections are gone, the user's budget is free again.
        client = nil
        _ = consume other
        let fresh = try AssetPackClient.connect(container: manager.container)
        let freed = eventually(timeout: 10) {
            (try? fresh.descriptor(for: "text/a.txt", searchingInAssetPackWithID: "stress", options: .standalone)) != nil
        }
        #expect(freed)
        daemon.stop()
    }

    /// `--allow-uid` without `--socket-group`: the socket is 0666 and
    /// `SO_PEERCRED` decides; refused peers are logged once per interval.
    @Test(.enabled(if: DaemonTests.canSwitchUser), .timeLimit(.minutes(3))) func allowUIDAloneLetsThatUserInAndLogsRefusalsOnce() throws {
        let s = TemporaryDirectory("assetpack-daemon-allow-uid")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: s.path)
        let manager = try setUp(s)
        let daemon = try Daemon(s.container, ["--allow-uid", "nobody"])
        let mode = try FileManager.default.attributesOfItem(atPath: manager.container.daemonSocketPath)[.posixPermissions] as? Int
        #expect(mode == 0o666)
        let args = [CLI.binary, "cat", "text/b.json", "--pack", "stress", "--container", s.container, "--daemon"]
        let served = try Program.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + args)
        #expect(served.status == 0, "\(served.stderr)")
        #expect(served.stdout == (try manager.contents(at: "text/b.json", searchingInAssetPackWithID: "stress")))
        for _ in 0..<5 {
            let refused = try Program.run("/usr/bin/setpriv", ["--reuid=12345", "--regid=12345", "--clear-groups"] + args)
            #expect(refused.status == 1 && refused.stderr.contains("uid 12345 (gid 12345) is not allowed"), "\(refused.stderr)")
        }
        #expect(daemon.child.stderr.components(separatedBy: "is not allowed").count == 2, "\(daemon.child.stderr)")
        daemon.stop()
    }
}
