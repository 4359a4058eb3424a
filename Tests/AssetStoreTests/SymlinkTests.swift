import Foundation
import Testing
import AssetStore
import AssetSystem
import TestSupport

/// Issue 9, finding 3: nothing in the container is opened through a
/// symlink. A link where a lock file or a directory of the layout belongs is
/// refused with `.symlinkInContainer` naming it, and nothing is created where
/// it points (these tests run as root in CI, where that matters most);
/// verify reports every link as `layout.symlink`, and repair moves the link
/// itself to quarantine without touching its target.
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
    @Test(arguments: ["index", "packs", "staging", "cache", "locks", "locks/packs", "downloads", "downloads/slots", "catalog"])
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

    @Test func aSymlinkInStagingIsReportedAndQuarantinedWithoutTouchingItsTarget() throws {
        let f = StoreFixture("symlink-staging")
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "a", ["x": text(100)]))
        let secret = f.root + "/secret"
        _ = FileManager.default.createFile(atPath: secret, contents: Data("keep me".utf8))
        try symlink(f.container.stagingPath + "/pack.0123456789abcdef.install", to: secret)

        let report = try store.verify()
        #expect(report.findings.map(\.code) == [.layoutSymlink], "\(report.findings)")
        #expect(report.findings.first?.object == "staging/pack.0123456789abcdef.install")
        #expect(report.hasErrors)

        let repaired = try store.verify(options: .init(repair: true))
        #expect(repaired.repairs.map(\.codes) == [[.layoutSymlink]] && repaired.repairs.allSatisfy(\.done))
        #expect(repaired.remaining.isEmpty, "\(repaired.remaining)")
        #expect(FileSystem.names(in: f.container.stagingPath).isEmpty)
        let quarantined = FileSystem.names(in: f.container.path + "/quarantine")
        #expect(quarantined.count == 1 && quarantined.allSatisfy { isSymlink(f.container.path + "/quarantine/" + $0) })
        #expect(try String(contentsOfFile: secret, encoding: .utf8) == "keep me")
        #expect(try store.verify().findings.isEmpty)
    }

    /// A read-only store (as verify opens) opens a container with a
    /// symlinked directory, reports it, and repair puts a real one back.
    @Test(arguments: ["packs", "staging", "cache", "locks", "locks/packs", "downloads", "downloads/slots", "catalog"])
    func aSymlinkedDirectoryIsReportedAndReplacedByRepair(name: String) throws {
        let f = StoreFixture("symlink-verify")
        do { _ = try f.store() }
        let outside = f.root + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: outside + "/theirs", contents: Data([1, 2, 3]))
        let link = f.container.path + "/" + name
        try FileManager.default.removeItem(atPath: link)
        try symlink(link, to: outside)

        var options = AssetStore.Options()
        options.createsContainer = false
        options.clearsStaleReaders = false
        let store = try f.store(options)
        let report = try store.verify()
        #expect(report.findings.map(\.code) == [.layoutSymlink] && report.findings.first?.object == name, "\(report.findings)")

        let repaired = try store.verify(options: .init(repair: true))
        #expect(repaired.repairs.allSatisfy(\.done) && repaired.remaining.isEmpty, "\(repaired.repairs) \(repaired.remaining)")
        #expect(try !isSymlink(link) && FileDescriptor.status(of: link)?.isDirectory == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == ["theirs"])
        #expect(isSymlink(f.container.path + "/quarantine/" + (FileSystem.names(in: f.container.path + "/quarantine").first ?? "")))
    }

    /// A symlink where an installed pack's archive belongs is neither proof
    /// that the archive is missing nor an operational error: verify reports
    /// it once, as `layout.symlink`, and repair moves the link away without
    /// dropping the pack on its account or touching its target.
    @Test func aSymlinkWhereAnArchiveBelongsIsLayoutSymlinkOnly() throws {
        let f = StoreFixture("symlink-archive")
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "a", ["x": text(100)]))
        let name = try #require(try store.packRecord("a")).archiveName
        let archive = f.container.packsPath + "/" + name
        let moved = f.root + "/moved.zip"
        try FileManager.default.moveItem(atPath: archive, toPath: moved)
        try symlink(archive, to: moved)

        for deep in [false, true] {
            let report = try store.verify(options: .init(deep: deep))
            #expect(report.findings.map(\.code) == [.layoutSymlink], "\(report.findings)")
            #expect(report.findings.first?.object == "packs/" + name)
        }

        let repaired = try store.verify(options: .init(repair: true))
        #expect(repaired.repairs.map(\.codes) == [[.layoutSymlink]] && repaired.repairs.allSatisfy(\.done), "\(repaired.repairs)")
        #expect(!isSymlink(archive))
        #expect(repaired.remaining.map(\.code) == [.archiveMissing], "\(repaired.remaining)")
        #expect(FileManager.default.fileExists(atPath: moved))
    }

    /// A symlink anywhere in the container — at its top, in a directory
    /// below the layout's (a catalog's cache entry, `trust/`), or where such
    /// a directory belongs — is `layout.symlink` with its path, and repair
    /// moves the link itself to `quarantine/` (whose own links verify leaves
    /// alone) without touching its target.
    @Test(arguments: ["daemon.sock", "trust", "trust/sources.json", "catalog/0123456789abcdef", "catalog/0123456789abcdef/etag",
                      "downloads/Big.status", "downloads/slots/0.lock", "staging/deeper/x"])
    func aSymlinkAnywhereIsReportedAndQuarantined(path: String) throws {
        let f = StoreFixture("symlink-anywhere")
        let store = try f.store()
        let outside = f.root + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: outside + "/theirs", contents: Data("keep me".utf8))
        let link = f.container.path + "/" + path
        try FileManager.default.createDirectory(atPath: (link as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try symlink(link, to: path.hasSuffix("x") || path.contains(".") ? outside + "/theirs" : outside)

        let report = try store.verify()
        #expect(report.findings.map(\.code) == [.layoutSymlink] && report.findings.first?.object == path, "\(report.findings)")
        let repaired = try store.verify(options: .init(repair: true))
        #expect(repaired.repairs.map(\.codes) == [[.layoutSymlink]] && repaired.repairs.allSatisfy(\.done), "\(repaired.repairs)")
        #expect(repaired.remaining.isEmpty, "\(repaired.remaining)")
        #expect(!isSymlink(link) && !FileManager.default.fileExists(atPath: link))
        let quarantined = FileSystem.names(in: f.container.path + "/quarantine")
        #expect(quarantined.count == 1 && quarantined.allSatisfy { isSymlink(f.container.path + "/quarantine/" + $0) }, "\(quarantined)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == ["theirs"])
        #expect(try String(contentsOfFile: outside + "/theirs", encoding: .utf8) == "keep me")
        #expect(try store.verify().findings.isEmpty)
    }

    /// `downloads/` made again by repair has `slots/` inside, as the layout does.
    @Test func aSymlinkedDownloadsDirectoryIsMadeAgainWithItsSlots() throws {
        let f = StoreFixture("symlink-downloads")
        do { _ = try f.store() }
        let outside = f.root + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let link = f.container.path + "/downloads"
        try FileManager.default.removeItem(atPath: link)
        try symlink(link, to: outside)
        var options = AssetStore.Options()
        options.createsContainer = false
        let store = try f.store(options)
        #expect(store.downloadsDirectory.isSymlink)
        #expect(throws: StoreError.symlinkInContainer(path: link)) { _ = try store.downloadsDirectory.anchor() }
        #expect(try store.verify().findings.map(\.object) == ["downloads"])
        #expect(try store.verify(options: .init(repair: true)).repairs.allSatisfy(\.done))
        #expect(try FileDescriptor.status(of: link + "/slots", followingLinks: false)?.isDirectory == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        #expect(try f.store().verify().findings.isEmpty)
    }
}
