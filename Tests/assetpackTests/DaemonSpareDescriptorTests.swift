import Foundation
import Synchronization
import Testing
@testable import AssetPacks
import AssetStore
import AssetSystem
import TestSupport

/// The daemon answers a stored member asked for with `.ownOffset` with a
/// spare open description of its archive, opened ahead by a worker
/// (``DescriptorDaemon/Spares``): never a
/// stale one after an update, never one shared by two clients, none kept
/// past what the pool holds, and none left once the daemon stops.
@Suite(.serialized) struct DaemonSpareDescriptorTests {
    typealias Daemon = DaemonTests.Daemon

    /// How many spares of an archive the pool keeps once handouts stop:
    /// refilled to ``DescriptorDaemon/Spares/depth`` when it ran low.
    static let kept = DescriptorDaemon.Spares.refillBelow ... DescriptorDaemon.Spares.depth

    /// Whether `spares` hands out nothing for `archive` (closing what it does).
    static func none(_ spares: DescriptorDaemon.Spares, _ archive: ArchiveID, refill: inout Bool) -> Bool {
        guard let fd = spares.take(archive, refill: &refill) else { return true }
        try? fd.close()
        return false
    }

    /// Where descriptor `fd` of process `pid` points (`/proc/PID/fd/FD`).
    static func target(_ fd: Int32, of pid: Int32 = getpid()) -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")) ?? ""
    }

    /// The descriptors of `pid` that point into `directory`.
    static func descriptors(of pid: Int32, into directory: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return fds.compactMap { Int32($0) }.map { target($0, of: pid) }.filter { $0.hasPrefix(directory + "/") }
    }

    @Test(.timeLimit(.minutes(3))) func aHandoutAfterAnUpdateIsOfTheNewArchiveNeverASpare() throws {
        let s = TemporaryDirectory("assetpack-daemon-spares-update")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let packs = try realPath(s.container + "/packs")
        let client = try AssetPackClient.connect(container: manager.container)
        // Enough handouts that spares of v1's archive are taken and refilled.
        var old = ""
        for _ in 0 ..< 3 * DescriptorDaemon.Spares.depth {
            let d = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress", options: .ownOffset)
            old = Self.target(d.fileDescriptor)
        }
        #expect(old.hasPrefix(packs + "/stress."), "\(old)")
        #expect(eventually(timeout: 20) { Self.descriptors(of: daemon.child.pid, into: packs).contains(old) }, "no spare of v1's archive")
        try manager.installPack(at: s.path + "/packs/v2.zip")
        let want = try manager.contents(at: "media/big.bin", searchingInAssetPackWithID: "stress")
        for _ in 0 ..< 2 * DescriptorDaemon.Spares.depth {
            let d = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress", options: .ownOffset)
            let now = Self.target(d.fileDescriptor)
            #expect(now != old && !now.hasSuffix(" (deleted)") && FileManager.default.fileExists(atPath: now), "\(now)")
            #expect(try d.data() == want)
        }
        // v1's spares are closed once v2's archive is handed out.
        #expect(eventually(timeout: 20) { !Self.descriptors(of: daemon.child.pid, into: packs).contains(old) },
                "\(Self.descriptors(of: daemon.child.pid, into: packs))")
    }

    /// An idle daemon lets go of a removed pack's archive — its spares, its
    /// mapping and the connection's shared description — within a few
    /// seconds of the removal by another process, without a request: it
    /// would otherwise hold the unlinked file, and its disk space, until
    /// it stopped.
    @Test(.timeLimit(.minutes(3))) func anIdleDaemonLetsGoOfAnArchiveAnotherProcessRemoved() throws {
        let s = TemporaryDirectory("assetpack-daemon-unlinked")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let packs = try realPath(s.container + "/packs")
        var archive = ""
        do {
            let client = try AssetPackClient.connect(container: manager.container)
            for _ in 0 ..< 2 * DescriptorDaemon.Spares.depth {
                let d = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress", options: .ownOffset)
                archive = Self.target(d.fileDescriptor)
            }
            // And a shared one, which the connection keeps a description for.
            _ = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress")
            #expect(archive.hasPrefix(packs + "/stress."), "\(archive)")
            #expect(eventually(timeout: 20) { Self.descriptors(of: daemon.child.pid, into: packs).contains(archive) }, "no spare")
            try manager.remove(assetPackWithID: "stress")
            #expect(!FileManager.default.fileExists(atPath: archive))
            // No request after the removal: the connection stays open, idle.
            #expect(eventually(timeout: 20) {
                !Self.descriptors(of: daemon.child.pid, into: packs).contains { $0.hasPrefix(archive) }
                    && !Self.mapped(by: daemon.child.pid).contains(archive)
            }, "\(Self.descriptors(of: daemon.child.pid, into: packs)) \(Self.mapped(by: daemon.child.pid).contains(archive))")
            withExtendedLifetime(client) {}
        }
    }

    /// The contents of `/proc/PID/maps` (read to the end: stat calls it empty).
    static func mapped(by pid: Int32) -> String {
        String(decoding: (try? FileDescriptor.open("/proc/\(pid)/maps").readToEnd()) ?? [], as: UTF8.self)
    }

    @Test(.timeLimit(.minutes(3))) func everyHandoutIsAnOpenDescriptionOfItsOwn() throws {
        let s = TemporaryDirectory("assetpack-daemon-spares-own")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let clients = try (0 ..< 2).map { _ in try AssetPackClient.connect(container: manager.container) }
        // More than the pool holds, so spares and descriptors opened at once both come.
        let held = try (0 ..< 3 * DescriptorDaemon.Spares.depth).map { i in
            try clients[i % 2].descriptor(for: "tiny/t007", searchingInAssetPackWithID: "stress", options: .ownOffset)
        }
        for (i, d) in held.enumerated() {
            #expect(lseek(d.fileDescriptor, 0, SEEK_CUR) == d.offset)
            #expect(lseek(d.fileDescriptor, off_t(d.offset) + off_t(i), SEEK_SET) == d.offset + Int64(i))
        }
        // Had two shared a description, the later seek would have moved the earlier.
        for (i, d) in held.enumerated() { #expect(lseek(d.fileDescriptor, 0, SEEK_CUR) == d.offset + Int64(i), "handout \(i)") }
        let want = try manager.contents(at: "tiny/t007", searchingInAssetPackWithID: "stress")
        for d in held { #expect(try d.data() == want) }
    }

    @Test(.timeLimit(.minutes(3))) func sparesDoNotAccumulate() throws {
        let s = TemporaryDirectory("assetpack-daemon-spares-leak")
        let manager = try DaemonTests().setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let packs = try realPath(s.container + "/packs")
        let client = try AssetPackClient.connect(container: manager.container)
        let paths = ["media/big.bin", "text/a.txt", "tiny/t001", "tiny/t007"]
        for i in 0 ..< 600 {
            let d = try client.descriptor(for: paths[i % paths.count], searchingInAssetPackWithID: "stress", options: .ownOffset)
            #expect(d.length > 0)
        }
        // Of stress's archive the daemon holds its spares and nothing more,
        // however many handouts; other's (never asked for) none.
        #expect(eventually(timeout: 20) { Self.kept.contains(Self.descriptors(of: daemon.child.pid, into: packs).count) },
                "\(Self.descriptors(of: daemon.child.pid, into: packs))")
        #expect(Set(Self.descriptors(of: daemon.child.pid, into: packs)).count == 1)
    }

    @Test(.timeLimit(.minutes(3))) func sparesCloseWhenTheDaemonStops() throws {
        let s = TemporaryDirectory("assetpack-daemon-spares-stop")
        let manager = try DaemonTests().setUp(s)
        let packs = try realPath(s.container + "/packs")
        let daemon = try DescriptorDaemon(manager: manager)
        let ended = Mutex(false)
        let thread = Thread {
            daemon.run()
            ended.withLock { $0 = true }
        }
        thread.start()
        let client = AssetPackClient(socketPath: daemon.socketPath)
        var served = false
        defer {
            daemon.stop()
            _ = eventually(timeout: 30) { ended.withLock { $0 } }
        }
        // The socket is bound at init; the loop answers once it runs.
        for _ in 0 ..< 2 * DescriptorDaemon.Spares.depth {
            let d = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress", options: .ownOffset)
            served = served || d.length > 0
        }
        #expect(served)
        // Only the daemon in this process holds the archive now (the
        // descriptors handed out are closed): its spares.
        // (A refill may be between its open and putting the spare in the pool.)
        var open = -1
        #expect(eventually(timeout: 20) {
            open = Self.descriptors(of: getpid(), into: packs).count
            return Self.kept.contains(daemon.spares.count) && open == daemon.spares.count
        }, "\(open) open, \(daemon.spares.count) spares")
        daemon.stop()
        #expect(eventually(timeout: 30) { ended.withLock { $0 } }, "run() did not return")
        #expect(daemon.spares.count == 0)
        #expect(Self.descriptors(of: getpid(), into: packs).isEmpty, "\(Self.descriptors(of: getpid(), into: packs))")
    }

    @Test func aStoppedPoolHandsOutNothingAndKeepsNothing() throws {
        let s = TemporaryDirectory("assetpack-daemon-spares-pool")
        let file = s.path + "/archive"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("bytes".utf8)))
        let spares = DescriptorDaemon.Spares(capacity: DescriptorDaemon.Spares.maximum)
        let a = ArchiveID(pack: "p", archiveKey: 1)
        var refill = false
        #expect(Self.none(spares, a, refill: &refill) && refill)
        spares.refill(a) { try? FileDescriptor.open(file) }
        #expect(spares.count == DescriptorDaemon.Spares.depth)
        // A new archive of the pack retires the old one's spares.
        refill = false
        #expect(Self.none(spares, ArchiveID(pack: "p", archiveKey: 2), refill: &refill) && refill)
        #expect(spares.count == 0)
        spares.refill(a) { try? FileDescriptor.open(file) }
        #expect(spares.count == 0, "a refill of an archive the pool no longer keeps")
        spares.refill(ArchiveID(pack: "p", archiveKey: 2)) { try? FileDescriptor.open(file) }
        #expect(spares.count == DescriptorDaemon.Spares.depth)
        spares.closeAll()
        #expect(spares.count == 0)
        #expect(Self.none(spares, ArchiveID(pack: "p", archiveKey: 2), refill: &refill))
        spares.refill(ArchiveID(pack: "p", archiveKey: 2)) { try? FileDescriptor.open(file) }
        #expect(spares.count == 0)
        // No room: no pool.
        #expect(DescriptorDaemon.Spares.capacity(room: DescriptorDaemon.Spares.depth - 1) == 0)
        #expect(Self.none(DescriptorDaemon.Spares(capacity: 0), a, refill: &refill))
    }

    func realPath(_ path: String) throws -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }
}
