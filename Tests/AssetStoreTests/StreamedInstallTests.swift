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
@Suite struct StreamedInstallTests {
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
}
