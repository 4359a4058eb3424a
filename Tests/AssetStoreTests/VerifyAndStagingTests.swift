import Foundation
import Testing
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

@Suite struct VerifyAndStagingTests {
    @Test func cleanContainerHasNoFindings() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "a", ["x": text(5000), "y.png": noise(70_000, seed: 1)]))
        try store.install(packAt: try f.pack("b.zip", id: "b", ["x": [1]]))
        let report = try store.verify(options: .init(deep: true))
        #expect(report.findings.isEmpty)
        #expect(report.packsChecked == 2 && report.membersChecked == 3)
        #expect(report.bytesChecked > 70_000)
    }

    @Test func flippedByteInAnInstalledArchiveIsFoundByDeepVerify() throws {
        let f = StoreFixture()
        let store = try f.store()
        let record = try store.install(packAt: try f.pack("a.zip", id: "a", ["y.png": noise(70_000, seed: 1)])).record
        let path = f.container.packsPath + "/" + record.archiveName
        let fd = try FileDescriptor.open(path, .readWrite)
        var byte = try fd.read(count: 1, at: 8192)
        byte[0] ^= 0x55
        try fd.write(byte, at: 8192)
        #expect(try store.verify().findings.isEmpty)   // shallow: structure only
        let codes = Set(try store.verify(options: .init(deep: true)).findings.map(\.code))
        #expect(codes == [.archiveSHA256, .memberCRC])
    }

    @Test func deletedArchiveAndOrphanAreFound() throws {
        let f = StoreFixture()
        let store = try f.store()
        let record = try store.install(packAt: try f.pack("a.zip", id: "a", ["x": [1]])).record
        try FileSystem.unlink(f.container.packsPath + "/" + record.archiveName)
        _ = FileManager.default.createFile(atPath: f.container.packsPath + "/stray.zip", contents: Data([1]))
        let codes = Set(try store.verify().findings.map(\.code))
        #expect(codes == [.archiveOrphan, .archiveMissing])
    }

    @Test func leftoverStagingFileIsReclaimableAndReclaimed() throws {
        let f = StoreFixture()
        let store = try f.store()
        // What a writer killed mid-copy leaves: a named, unlocked staging file.
        let leftover = f.container.stagingPath + "/pack.0123456789abcdef.install"
        _ = FileManager.default.createFile(atPath: leftover, contents: Data(noise(1000, seed: 1)))
        let report = try store.verify()
        #expect(report.findings.map(\.code) == [.stagingLeftover])
        #expect(!report.hasErrors)
        try store.install(packAt: try f.pack("a.zip", id: "a", ["x": [1]]))
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(FileSystem.names(in: f.container.stagingPath).isEmpty)
    }

    @Test func aDirectoryInStagingDoesNotStopInstallsAndIsLeftAlone() throws {
        let f = StoreFixture()
        let store = try f.store()
        // Named as a download or an install twin would be: reclaim opens neither.
        for name in ["x-0123456789abcdef.download", "pack.0123456789abcdef.install"] {
            try FileManager.default.createDirectory(atPath: f.container.stagingPath + "/" + name, withIntermediateDirectories: false)
        }
        let outcome = try store.install(packAt: try f.pack("a.zip", id: "a", ["x": [1]]))
        #expect(outcome.change == .installed)
        #expect(try store.contents(at: "x", inPack: "a") == Data([1]))
        #expect(Set(FileSystem.names(in: f.container.stagingPath)) == ["x-0123456789abcdef.download", "pack.0123456789abcdef.install"])
    }

    @Test func lockTimeoutIsReported() throws {
        let f = StoreFixture()
        var options = AssetStore.Options()
        options.lockWait = .seconds(0.2)
        let store = try f.store(options)
        let held = try FileLock(path: f.container.lockPath(forPack: "a"))
        do {
            try store.install(packAt: try f.pack("a.zip", id: "a", ["x": [1]]))
            Issue.record("installed while the lock was held")
        } catch StoreError.lockTimeout(let t) {
            #expect(t == LockTimeout(lock: "the pack lock of 'a'", path: f.container.lockPath(forPack: "a"), seconds: 0.2,
                                     holder: LockHolder(pids: [getpid()])))
            #expect(t.description == "timed out after 0.2 s waiting for the pack lock of 'a' (\(f.container.lockPath(forPack: "a"))), held by pid \(getpid())")
        }
        _ = consume held
        #expect(try store.install(packAt: f.root + "/a.zip").change == .installed)
    }
}
