import Foundation
import Testing
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

/// `install(adopting:)`: a finished download in `staging/` becomes the
/// installed archive itself — same inode, no copy — with every check but
/// the SHA-256 made again, and the journal entry ending in the same commit.
@Suite struct AdoptionTests {
    static let url = "http://127.0.0.1:9/P.zip"

    /// A fixture with pack `P` written as the download `staging/<name>` and
    /// a journal entry naming it (as `PartialDownload` leaves a finished one).
    final class Download {
        let f: StoreFixture
        let store: AssetStore
        let name: String
        let sha256: [UInt8]
        let members: [String: [UInt8]]

        init(_ label: String, id: String = "P", name: String = "P-1a2b3c.download", options: AssetStore.Options = .init(),
             members: [String: [UInt8]] = ["big.bin": noise(200_000, seed: 7), "notes.txt": text(3000)]) throws {
            f = StoreFixture(label)
            store = try f.store(options)
            self.name = name
            self.members = members
            let pack = try f.pack("P.zip", id: id, members)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: pack))
            sha256 = bytes.withUnsafeBytes { SHA256.hash($0) }
            try bytes.write(to: URL(fileURLWithPath: path))
            try store.putJournalEntry(JournalEntry(
                pack: "P", state: .downloading, url: AdoptionTests.url, catalogVersion: "3", stagingName: name,
                expectedSize: UInt64(bytes.count), sha256: sha256))
        }

        var path: String { f.container.stagingPath + "/" + name }

        @discardableResult
        func adopt(_ stagingName: String? = nil, id: String = "P") throws(StoreError) -> InstallOutcome {
            try store.install(adopting: stagingName ?? name, verifiedSHA256: sha256, id: id, catalogVersion: "3", source: AdoptionTests.url)
        }

        /// Flips one byte of `big.bin`'s data in the download.
        func damage() throws {
            let fd = try FileDescriptor.open(path, .readWrite)
            var byte = try fd.read(count: 1, at: 100_000)
            byte[0] ^= 0x55
            try fd.write(byte, at: 100_000)
        }

        /// The download is untouched: its file and its journal entry, and
        /// nothing in `packs/` or other names in `staging/`.
        func expectDownloadUntouched(_ comment: Comment? = nil) throws {
            #expect(FileSystem.names(in: f.container.stagingPath) == [name], comment)
            #expect(FileSystem.names(in: f.container.packsPath).isEmpty, comment)
            #expect(try store.journalEntry(forPack: "P")?.stagingName == name, comment)
        }
    }

    static func inode(_ path: String) throws -> UInt64 {
        try #require(try FileDescriptor.status(of: path, followingLinks: false)).inode
    }

    @Test func theDownloadBecomesTheArchiveAndTheJournalEntryGoesWithTheSwitch() throws {
        let d = try Download("adopt")
        let inode = try Self.inode(d.path)
        let outcome = try d.adopt()
        #expect(outcome.change == .installed)
        let record = outcome.record
        #expect(try Self.inode(d.f.container.packsPath + "/" + record.archiveName) == inode, "adopted, not copied")
        #expect(record.sha256 == d.sha256 && record.catalogVersion == "3" && record.source == Self.url)
        #expect(FileSystem.names(in: d.f.container.stagingPath).isEmpty)
        #expect(try d.store.journalEntries().isEmpty)
        for (path, bytes) in d.members { #expect(try d.store.contents(at: path, inPack: "P") == Data(bytes)) }
        #expect(try d.store.verify(options: .init(deep: true)).findings.isEmpty)
    }

    @Test func anUpdateIsAdoptedAndTheOldArchiveGoes() throws {
        let d = try Download("adopt-update")
        let old = try d.store.install(packAt: try d.f.pack("old.zip", id: "P", ["big.bin": [1, 2, 3]])).record
        let outcome = try d.adopt()
        #expect(outcome.change == .replaced && outcome.record.generation == old.generation + 1)
        #expect(FileSystem.names(in: d.f.container.packsPath) == [outcome.record.archiveName])
        #expect(try d.store.contents(at: "big.bin", inPack: "P") == Data(d.members["big.bin"]!))
        #expect(try d.store.verify(options: .init(deep: true)).findings.isEmpty)
    }

    @Test func anotherDownloadsJournalEntryStays() throws {
        let d = try Download("adopt-other-entry")
        let other = JournalEntry(pack: "P", state: .downloading, url: Self.url, catalogVersion: "4", stagingName: "P-ffff.download",
                                 expectedSize: 1, sha256: d.sha256)
        try d.store.putJournalEntry(other)
        try d.adopt()
        #expect(try d.store.journalEntry(forPack: "P") == other)
    }

    @Test func theSameArchiveInstalledLeavesTheDownloadToItsDownloader() throws {
        let d = try Download("adopt-unchanged")
        let first = try d.adopt()
        try FileManager.default.copyItem(atPath: d.f.container.packsPath + "/" + first.record.archiveName, toPath: d.path)
        try d.store.putJournalEntry(JournalEntry(pack: "P", state: .downloading, url: Self.url, catalogVersion: "3",
                                                 stagingName: d.name, expectedSize: 1, sha256: d.sha256))
        #expect(try d.adopt().change == .unchanged)
        #expect(FileSystem.names(in: d.f.container.stagingPath) == [d.name])
        #expect(try d.store.journalEntry(forPack: "P")?.stagingName == d.name)
        #expect(FileSystem.names(in: d.f.container.packsPath) == [first.record.archiveName])
    }

    @Test func aDamagedMemberIsRefusedAndTheDownloadStaysAsItWas() throws {
        let d = try Download("adopt-crc")
        try d.damage()
        #expect {
            try d.adopt()
        } throws: { error in
            guard case .archive(.crcMismatch(_, "big.bin", _, _)) = error as? StoreError else { return false }
            return true
        }
        try d.expectDownloadUntouched()
        #expect(try d.store.packRecord("P") == nil)
    }

    @Test func aPackRecordingAnotherIDIsRefused() throws {
        let d = try Download("adopt-id", id: "Q")
        #expect(throws: StoreError.invalidPackID("P", reason: .differsFromRecorded("Q"))) { try d.adopt() }
        try d.expectDownloadUntouched()
    }

    @Test(arguments: ["P.zip", "P-1.install", "../staging/P-1a2b3c.download", ".download"])
    func aNameThatIsNoDownloadIsRefused(_ name: String) throws {
        let d = try Download("adopt-name")
        #expect(throws: StoreError.notAFile(d.f.container.stagingPath + "/" + name)) { try d.adopt(name) }
        try d.expectDownloadUntouched("\(name)")
    }

    @Test func aMissingDownloadIsNoSuchFile() throws {
        let d = try Download("adopt-missing")
        #expect {
            try d.adopt("P-9999.download")
        } throws: { error in
            guard case .system(let errno) = error as? StoreError else { return false }
            return errno == .noSuchFile && errno.path == d.f.container.stagingPath + "/P-9999.download"
        }
    }

    @Test func aSymlinkIsNeverFollowed() throws {
        let d = try Download("adopt-symlink")
        let link = d.f.container.stagingPath + "/P-5555.download"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: d.path)
        #expect(throws: StoreError.symlinkInContainer(path: link)) { try d.adopt("P-5555.download") }
        #expect(FileSystem.names(in: d.f.container.packsPath).isEmpty)
        #expect(Set(FileSystem.names(in: d.f.container.stagingPath)) == [d.name, "P-5555.download"])
    }

    @Test func aFileThatIsNotRegularIsNotAFile() throws {
        let d = try Download("adopt-fifo")
        let fifo = d.f.container.stagingPath + "/P-6666.download"
        #expect(mkfifo(fifo, 0o644) == 0)
        #expect(throws: StoreError.notAFile(fifo)) { try d.adopt("P-6666.download") }
        #expect(FileSystem.names(in: d.f.container.packsPath).isEmpty)
        #expect(Set(FileSystem.names(in: d.f.container.stagingPath)) == [d.name, "P-6666.download"])
    }

    @Test func aDownloadAnotherWriterHoldsIsALockTimeout() throws {
        var options = AssetStore.Options()
        options.lockWait = .seconds(0.1)
        let d = try Download("adopt-locked", options: options)
        let other = try FileDescriptor.open(d.path, .readWrite)
        #expect(try FileLock.tryLock(other))
        // The holder is this process (another open file description of it).
        let holder = LockHolder(pids: [getpid()])
        #expect(throws: StoreError.lockTimeout(LockTimeout(lock: "the lock of the download being installed", path: d.path,
                                                           seconds: 0.1, holder: holder))) { try d.adopt() }
        try d.expectDownloadUntouched()
        _ = consume other
        try d.adopt()
        #expect(try d.store.journalEntries().isEmpty)
    }

    /// What an adopter killed between its commit and unlinking the
    /// `.download` name leaves: that name of the installed archive, with no
    /// journal entry. Reclaimable, removed by the next writer, never the
    /// archive; a `.download` that is not the installed archive stays.
    @Test func aDownloadNameOfTheInstalledArchiveIsReclaimed() throws {
        let d = try Download("adopt-leftover")
        let record = try d.adopt().record
        let archive = d.f.container.packsPath + "/" + record.archiveName
        try FileSystem.link(archive, to: d.path)
        let orphan = d.f.container.stagingPath + "/P-7777.download"
        _ = FileManager.default.createFile(atPath: orphan, contents: Data([1, 2, 3]))
        let report = try d.store.verify(options: .init(deep: true))
        #expect(Set(report.findings.map { "\($0.code.rawValue) \($0.object ?? "")" })
                == ["staging.leftover \(d.name)", "journal.orphan-download P-7777.download"])
        #expect(!report.hasErrors)
        #expect(try d.store.collectGarbage() == ["staging/" + d.name])
        #expect(FileSystem.names(in: d.f.container.stagingPath) == ["P-7777.download"])
        #expect(try d.store.contents(at: "big.bin", inPack: "P") == Data(d.members["big.bin"]!))
    }
}
