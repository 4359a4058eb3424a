import Foundation
import Synchronization
import Testing
import AssetArchive
@testable import AssetStore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The install's index pass walks the members out of the staged archive's
/// mapping, in a write that reserved its map space first.
@Suite(.serialized) struct StreamedInstallTests {
    /// Counts the index write bodies run on this thread while `body` runs
    /// (installs of other tests run on other threads and are not counted).
    private func indexWrites(_ body: () throws -> Void) rethrows -> Int {
        let me = pthread_self()
        let count = Mutex(0)
        CrashPoint.setHandler { name in
            guard pthread_equal(pthread_self(), me) != 0, name.description == "install.index.written" else { return }
            count.withLock { $0 += 1 }
        }
        defer { CrashPoint.setHandler(nil) }
        try body()
        return count.withLock { $0 }
    }

    @Test func aPackIndexesExactlyTheMembersItsDirectoryListsInOneWrite() throws {
        let f = StoreFixture("streamed")
        var options = AssetStore.Options()
        options.initialMapSize = 1 << 20
        let store = try f.store(options)
        let count = 15_000
        var members: [String: [UInt8]] = [:]
        for i in 0 ..< count { members["D\(i % 37)/Member-\(i).bin"] = [UInt8(i & 0xff), UInt8(i >> 8)] }
        // Capitals: the names are checked the long way (a second walk that
        // keeps them); the index pass walks the records all the same.
        let path = try f.pack("many.zip", id: "many", members, compression: .stored)
        let listed = try ZipArchive.open(path: path).entries.count
        #expect(listed == count)
        var record: PackRecord?
        let writes = try indexWrites { record = try store.install(packAt: path).record }
        #expect(writes == 1, "the map was reserved before the write, which then ran once")
        #expect(record?.memberCount == UInt64(count))
        let indexed = try store.members(ofPack: "many")
        #expect(indexed.count == count)
        #expect(Set(indexed.map(\.path)) == Set(members.keys))
        #expect(Array(try store.contents(at: "D5/Member-5.bin", inPack: "many")) == [5, 0])
        #expect(Array(try store.contents(at: "D13/Member-14443.bin", inPack: "many")) == [UInt8(14443 & 0xff), UInt8(14443 >> 8)])
        #expect(try store.verify(options: .init(deep: true)).findings.isEmpty)
    }

    /// Held (the pack is small enough: the later passes go over the first
    /// walk's entries) and walked (each pass reads the records again): the
    /// same members indexed, and the same refusal of a bad key, either way.
    @Test(arguments: [131_072, 0, 999, 1_000])
    func heldOrWalkedTheIndexIsTheSame(holding: Int) throws {
        let f = StoreFixture("streamed-held-\(holding)")
        var options = AssetStore.Options()
        options.installHeldMembers = holding
        let store = try f.store(options)
        let paths = (0 ..< 1_000).map { "m/\(String($0 + 10_000)).bin" }
        let p = f.root + "/held.zip"
        try ArchiveWriter.write(paths.map { .init(path: $0, source: .bytes(Array($0.utf8)), compression: .stored) }, to: p)
        let record = try store.install(packAt: p, id: "held").record
        #expect(record.memberCount == 1_000)
        #expect(try store.members(ofPack: "held").map(\.path) == paths)
        #expect(Array(try store.contents(at: "m/10999.bin", inPack: "held")) == Array("m/10999.bin".utf8))
        #expect(try store.verify(options: .init(deep: true)).findings.isEmpty)
        // A damaged member is refused the same way whichever pass reads it.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: p)))
        let at = try #require(ZipArchive.open(path: p).entries.first { $0.path == "m/10500.bin" }).dataOffset
        bytes[Int(at)] ^= 0xff
        let bad = f.root + "/bad.zip"
        try Data(bytes).write(to: URL(fileURLWithPath: bad))
        #expect {
            try store.install(packAt: bad, id: "held")
        } throws: { error in
            guard case StoreError.archive(.crcMismatch(_, let member, _, _)) = error else { return false }
            return member == "m/10500.bin"
        }
        #expect(try store.packRecord("held")?.sha256 == record.sha256)
    }

    /// A handler that has seen hundreds of thousands of points is released
    /// like any other: it was kept re-wrapped in a thunk per point, and its
    /// release recursed once per wrapping until the stack overflowed (a
    /// crash of the whole test process when an install ran on a worker
    /// thread while a handler was set).
    @Test func aHandlerThatSawManyPointsIsReleasedWithoutRecursion() throws {
        let seen = Mutex(0)
        // Only this test's point: installs of other tests running meanwhile
        // pass theirs through the same process-wide handler.
        CrashPoint.setHandler { name in if name.description == "test.point" { seen.withLock { $0 += 1 } } }
        for _ in 0 ..< 300_000 { CrashPoint.hit("test.point") }
        // Released on a thread with a small stack, as a worker's is.
        let done = Mutex(false)
        let thread = Thread {
            CrashPoint.setHandler(nil)
            done.withLock { $0 = true }
        }
        thread.stackSize = 256 << 10
        thread.start()
        let deadline = Date().addingTimeInterval(60)
        while !done.withLock({ $0 }) && Date() < deadline { usleep(1000) }
        #expect(done.withLock { $0 })
        #expect(seen.withLock { $0 } == 300_000)
    }

    @Test func aSortedPackIndexesAndVerifiesWalkingInOrder() throws {
        let f = StoreFixture("streamed-sorted")
        let store = try f.store()
        let paths = (0 ..< 3_000).map { "a/\(String($0 + 10_000))" }
        let p = f.root + "/sorted.zip"
        try ArchiveWriter.write(paths.map { .init(path: $0, source: .bytes(Array($0.utf8)), compression: .stored) }, to: p)
        try store.install(packAt: p, id: "sorted")
        #expect(try store.members(ofPack: "sorted").map(\.path) == paths)
        #expect(Array(try store.contents(at: "a/12999", inPack: "sorted")) == Array("a/12999".utf8))
        let report = try store.verify(options: .init(deep: true))
        #expect(report.findings.isEmpty)
        #expect(report.membersChecked == 3_000)
    }

    /// The SHA-256 an install records is the file's, whether it was hashed
    /// on a second thread beside the data checks (no progress asked) or on
    /// the caller's (progress asked): `sha256sum` is the witness, over a
    /// pack of several hashing pieces. A pack whose data is damaged is
    /// refused with its CRC-32 error while the hash runs beside.
    @Test(.enabled(if: Program.available("sha256sum")))
    func theRecordedHashIsTheFilesWhicheverThreadHashesIt() throws {
        let f = StoreFixture("streamed-hash")
        let p = f.root + "/p.zip"
        try ArchiveWriter.write((0 ..< 12).map { .init(path: "m\($0).bin", source: .bytes(noise(300_000, seed: UInt64($0))), compression: .stored) }, to: p)
        let witness = String(decoding: try Program.output("sha256sum", [p]), as: UTF8.self).split(separator: " ").first.map(String.init)
        let beside = try f.store().install(packAt: p, id: "p").record.sha256
        let g = StoreFixture("streamed-hash-progress")
        let inline = try g.store().install(packAt: p, id: "p", progress: { _ in }).record.sha256
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(beside) == witness && hex(inline) == witness)

        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: p)))
        // m0.bin is first; its data starts after the local header, its name and its extra field.
        let nameLength = Int(bytes[26]) | (Int(bytes[27]) << 8)
        let extraLength = Int(bytes[28]) | (Int(bytes[29]) << 8)
        let dataStart = 30 + nameLength + extraLength
        bytes[dataStart + 1000] ^= 0xff
        try Data(bytes).write(to: URL(fileURLWithPath: p))
        let h = StoreFixture("streamed-hash-damaged")
        #expect {
            try h.store().install(packAt: p, id: "p")
        } throws: { error in
            guard case StoreError.archive(.crcMismatch(_, "m0.bin", _, _)) = error else { return false }
            return true
        }
    }
}
