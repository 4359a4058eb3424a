import Foundation
import Testing
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

/// What writers killed mid-way leave behind is reclaimed by the next writer
/// of the same pack and by `collectGarbage`; never by merely opening the
/// container, and never while a writer that might own it is running.
@Suite struct RecoveryTests {
    /// Installs pack `a` in a store that is closed again, then plants what a
    /// crashed update leaves: another archive of `a` no record names, and an
    /// unlocked staging file. Returns the installed archive's name.
    func crashedUpdate(_ f: StoreFixture) throws -> (installed: String, orphan: String, staging: String) {
        let installed: String
        do {
            let store = try f.store()
            installed = try store.install(packAt: try f.pack("a.zip", id: "a", ["x": text(3000), "y": noise(5000, seed: 2)])).record.archiveName
        }
        let orphan = "a.00000000000000aa.zip"
        try FileManager.default.copyItem(atPath: f.container.packsPath + "/" + installed, toPath: f.container.packsPath + "/" + orphan)
        let staging = "a.0123456789abcdef.install"
        _ = FileManager.default.createFile(atPath: f.container.stagingPath + "/" + staging, contents: Data(noise(100, seed: 1)))
        return (installed, orphan, staging)
    }

    @Test func openingChangesNothing() throws {
        let f = StoreFixture("recover-open")
        let left = try crashedUpdate(f)
        let store = try f.store()
        #expect(Set(FileSystem.names(in: f.container.packsPath)) == [left.installed, left.orphan])
        #expect(FileSystem.names(in: f.container.stagingPath) == [left.staging])
        #expect(try store.contents(at: "x", inPack: "a") == Data(text(3000)))
    }

    @Test func theNextWriterOfThePackReclaims() throws {
        let f = StoreFixture("recover-busy")
        let left = try crashedUpdate(f)
        let writer = try FileLock(path: f.container.containerLockPath, kind: .shared)
        var options = AssetStore.Options()
        options.lockWait = .none   // verify cannot confirm under the writer's lock: its first pass stands
        let store = try f.store(options)
        #expect(Set(FileSystem.names(in: f.container.packsPath)) == [left.installed, left.orphan])
        #expect(FileSystem.names(in: f.container.stagingPath) == [left.staging])
        #expect(Set(try store.verify().findings.map(\.code.rawValue)) == ["archive.orphan", "staging.leftover"])
        _ = consume writer
        // The next writer of the pack reclaims both, under its own locks.
        try store.install(packAt: try f.pack("a2.zip", id: "a", ["x": [2]]))
        #expect(FileSystem.names(in: f.container.packsPath).count == 1)
        #expect(FileSystem.names(in: f.container.stagingPath).isEmpty)
        #expect(try store.verify(options: .init(deep: true)).findings.isEmpty)
    }

    @Test func removingReclaimsThePacksOrphans() throws {
        let f = StoreFixture("recover-remove")
        let left = try crashedUpdate(f)
        let writer = try FileLock(path: f.container.containerLockPath, kind: .shared)
        let store = try f.store()
        _ = consume writer
        try store.remove(pack: "a")
        #expect(FileSystem.names(in: f.container.packsPath).isEmpty)
        #expect(FileSystem.names(in: f.container.stagingPath) == [left.staging])
    }

    @Test func collectGarbageTakesTheContainerLockAndReportsWhatItRemoved() throws {
        let f = StoreFixture("recover-gc")
        let left = try crashedUpdate(f)
        let writer = try FileLock(path: f.container.containerLockPath, kind: .shared)
        var options = AssetStore.Options()
        options.lockWait = .seconds(0.1)
        let store = try f.store(options)
        #expect(throws: StoreError.self) { try store.collectGarbage() }
        _ = consume writer
        #expect(try store.collectGarbage() == ["staging/" + left.staging, "packs/" + left.orphan])
        #expect(try store.collectGarbage().isEmpty)
        #expect(try store.verify(options: .init(deep: true)).findings.isEmpty)
    }

    @Test func aLiveStagingFileIsNeverReclaimed() throws {
        let f = StoreFixture("recover-live")
        let store = try f.store()
        // A staging file whose lock another description holds belongs to a
        // writer that is alive.
        let path = f.container.stagingPath + "/b.00000000000000bb.install"
        _ = FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3]))
        let owner = try FileDescriptor.open(path, .readWrite)
        #expect(try FileLock.tryLock(owner))
        #expect(try store.collectGarbage().isEmpty)
        #expect(FileManager.default.fileExists(atPath: path))
        _ = consume owner
        #expect(try store.collectGarbage() == ["staging/b.00000000000000bb.install"])
    }
}
