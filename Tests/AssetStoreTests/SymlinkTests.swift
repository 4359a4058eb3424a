import Foundation
import Testing
import AssetStore
import AssetSystem
import TestSupport

/// Issue 9, finding 3: nothing in the container is opened through a
/// symlink. A link where a lock file or a directory of the layout belongs is
/// refused with `.symlinkInContainer` naming it, and nothing is created where
/// it points (these tests run as root in CI, where that matters most).
@Suite struct SymlinkTests {
    /// `target` is outside the container; `link` is made to point at it.
    func symlink(_ link: String, to target: String) throws {
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    }

    func isSymlink(_ path: String) -> Bool {
        (try? FileDescriptor.status(of: path, followingLinks: false))??.isSymbolicLink == true
    }

    @Test(arguments: ["a.lock", "container.lock"])
    func aSymlinkedLockFileIsRefusedAndNothingIsCreatedWhereItPoints(lock: String) throws {
        let f = StoreFixture("symlink-lock")
        let store = try f.store()
        let outside = f.root + "/outside.lock"
        let link = lock == "container.lock" ? f.container.containerLockPath : f.container.lockPath(forPack: "a")
        try symlink(link, to: outside)
        let pack = try f.pack("a.zip", id: "a", ["x": text(100)])
        #expect(throws: StoreError.symlinkInContainer(path: link)) { try store.install(packAt: pack) }
        #expect(StoreError.symlinkInContainer(path: link).description.hasPrefix(link + " is a symbolic link"))
        #expect(!FileManager.default.fileExists(atPath: outside), "the lock's target was created (uid \(getuid()))")
        #expect(isSymlink(link))
        #expect(try store.packRecord("a") == nil)
    }

    /// A fresh container whose directory `name` is a link to a directory
    /// outside: a writer's store refuses to open, and makes nothing there.
    @Test(arguments: ["index", "packs", "staging", "cache", "locks", "locks/packs"])
    func aSymlinkedDirectoryIsRefused(name: String) throws {
        let f = StoreFixture("symlink-dir")
        let outside = f.root + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let link = f.container.path + "/" + name
        try FileManager.default.createDirectory(atPath: (link as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try symlink(link, to: outside)
        #expect(throws: StoreError.symlinkInContainer(path: link)) { _ = try f.store() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
    }
}
