import Foundation
import Testing
import TestSupport
import AssetStore
import AssetSystem

/// Pack IDs that spell names the container uses itself, and lock files of
/// the layout before pack locks had `locks/packs/` to themselves.
@Suite struct ReservedNameTests {
    /// Every name under the container root and under `locks/` that is also a
    /// valid pack ID. (`daemon.sock` is one: dots are allowed.)
    static let reserved = ["container", "daemon", "index", "packs", "staging", "cache", "locks", "quarantine",
                           "daemon.sock", "container.lock", "daemon.lock"]

    @Test func everyReservedNameIsAValidPackID() throws {
        for id in Self.reserved { try PackID.validate(id) }
    }

    /// Install, read, update, verify, remove, verify — with a lock timeout,
    /// so that a pack lock that is the container lock fails instead of hanging.
    @Test(.timeLimit(.minutes(3)), arguments: reserved)
    func aPackWithAReservedNameIsAnOrdinaryPack(id: String) throws {
        let f = StoreFixture("reserved")
        var options = AssetStore.Options()
        options.lockWait = .seconds(2)
        let store = try f.store(options)
        let container = f.container
        #expect(![container.containerLockPath, container.daemonLockPath].contains(container.lockPath(forPack: id)))

        let v1 = try f.pack("v1.zip", id: id, ["notes.txt": text(3000), "media/a.bin": noise(9000, seed: 1)])
        #expect(try store.install(packAt: v1).change == .installed)
        #expect(Array(try store.contents(at: "notes.txt", inPack: id)) == text(3000))
        #expect(try store.verify(options: .init(deep: true)).findings.isEmpty)

        let v2 = try f.pack("v2.zip", id: id, ["notes.txt": text(4000, "again "), "media/b.bin": noise(100, seed: 2)])
        #expect(try store.install(packAt: v2).change == .replaced)
        #expect(Array(try store.contents(at: "media/b.bin", inPack: id)) == noise(100, seed: 2))
        #expect(try store.verify(options: .init(deep: true)).findings.isEmpty)

        try store.remove(pack: id)
        #expect(try store.packRecord(id) == nil)
        #expect(try store.verify().findings.isEmpty)
        // The removal took only the pack's own lock file with it.
        #expect(FileManager.default.fileExists(atPath: container.containerLockPath))
        #expect(Set(FileSystem.names(in: container.locksPath)) == ["container.lock", "packs"])
        #expect(FileSystem.names(in: container.packLocksPath).isEmpty)
    }

    /// A stopped daemon leaves `locks/daemon.lock`: it is the daemon's, not a
    /// lock of a pack named `daemon`.
    @Test func theDaemonsLockIsNoPacksOrphan() throws {
        let f = StoreFixture("daemon-lock")
        let store = try f.store()
        try FileDescriptor.open(f.container.daemonLockPath, [.writeOnly, .create]).write([])
        #expect(try store.verify().findings.isEmpty)
        try store.install(packAt: try f.pack("d.zip", id: "daemon", ["x": [1]]))
        try store.remove(pack: "daemon")
        #expect(FileManager.default.fileExists(atPath: f.container.daemonLockPath))
        #expect(try store.verify().findings.isEmpty)
    }

    @Test func aLockOfAPackThatIsNotInstalledIsAnOrphan() throws {
        let f = StoreFixture("orphan-lock")
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "a", ["x": [1]]))
        try FileDescriptor.open(f.container.lockPath(forPack: "ghost"), [.writeOnly, .create]).write([])
        try FileDescriptor.open(f.container.lockPath(forPack: "busy"), [.writeOnly, .create]).write([])
        let held = try FileLock(path: f.container.lockPath(forPack: "busy"))   // a writer at work: not a finding
        let report = try store.verify()
        #expect(report.findings.map(\.code) == [.lockOrphan])
        #expect(report.findings.first?.pack == "ghost" && report.findings.first?.object == "ghost.lock")
        #expect(!report.hasErrors)
        let repaired = try store.verify(options: .init(repair: true))
        #expect(repaired.repairs.map(\.action) == ["delete locks/packs/ghost.lock"])
        #expect(repaired.remaining.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: f.container.lockPath(forPack: "ghost")))
        #expect(FileManager.default.fileExists(atPath: f.container.lockPath(forPack: "busy")))
        _ = consume held
    }

    /// What the old layout left: `locks/<pack>.lock` beside `container.lock`
    /// and `daemon.lock`. Nothing takes those any more; verify reports them
    /// as reclaimable, repair deletes the ones nobody holds, and the
    /// container's and the daemon's own locks are never among them.
    @Test func packLocksOfTheOldLayoutAreReclaimed() throws {
        let f = StoreFixture("old-locks")
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "a", ["x": [1]]))
        for name in ["a.lock", "gone.lock", "daemon.lock", "held.lock", "notes.txt"] {
            try FileDescriptor.open(f.container.locksPath + "/" + name, [.writeOnly, .create]).write([])
        }
        let held = try FileLock(path: f.container.locksPath + "/held.lock")   // a writer of the old version at work
        let report = try store.verify()
        #expect(report.findings.map(\.code) == [.lockOldLayout, .lockOldLayout])
        #expect(report.findings.map(\.object) == ["a.lock", "gone.lock"])
        #expect(!report.hasErrors)
        let dry = try store.verify(options: .init(repair: true, dryRun: true))
        #expect(dry.repairs.map(\.action) == ["delete locks/a.lock", "delete locks/gone.lock"])
        #expect(FileManager.default.fileExists(atPath: f.container.locksPath + "/a.lock"))

        let repaired = try store.verify(options: .init(repair: true))
        #expect(repaired.remaining.isEmpty)
        #expect(Set(FileSystem.names(in: f.container.locksPath)) == ["container.lock", "daemon.lock", "held.lock", "notes.txt", "packs"])
        _ = consume held
        #expect(try store.verify().findings.map(\.object) == ["held.lock"])
        // The pack itself is untouched.
        #expect(Array(try store.contents(at: "x", inPack: "a")) == [1])
    }
}
