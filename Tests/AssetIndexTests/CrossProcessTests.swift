import AssetIndex
import Foundation
import Testing
import TestSupport

/// Another process shares the environment: a Python peer using liblmdb.
@Suite(.enabled(if: PythonPeer.isAvailable, "needs python3 and liblmdb.so.0"))
struct CrossProcessTests {
    static let mebibyte = 1 << 20

    func open(_ dir: String) throws -> Environment {
        var options = Environment.Options()
        options.mapSize = Self.mebibyte
        return try Environment(path: dir, databases: standardDatabases, options: options)
    }

    @Test func aDeadProcessesReaderSlotIsListedAndCleared() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        let env = try open(dir)
        try env.read { _ in }
        let pid = try #require(try PythonPeer.leaveStaleReader(in: dir))
        let stale = env.readers().filter { $0.pid == pid }
        #expect(stale.count == 1)
        #expect(stale.first?.isProcessAlive == false)
        #expect(stale.first?.transactionID != nil)
        #expect(try env.clearStaleReaders() == 1)
        #expect(env.readers().map(\.pid) == [getpid()])
        #expect(try env.read { txn in try txn.count(env.database("members")) } == 0)
    }

    @Test func aReaderAdoptsTheMapAnotherProcessGrew() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        let env = try open(dir)
        let members = env.database("members")
        try env.write { txn in try txn.put(members, key: "mine", value: "1") }
        try env.read { _ in }
        #expect(try PythonPeer.write(in: dir, mapSize: 64 * Self.mebibyte, count: 5000, size: 4000, prefix: "py"))
        // The pooled transaction's renew reports MDB_MAP_RESIZED; the read
        // adopts the new size and sees the other process's commit.
        let count = try env.read { txn in try txn.count(members) }
        #expect(count == 5001)
        #expect(env.mapSize >= 64 * Self.mebibyte)
        try env.write { txn in try txn.put(members, key: "mine", value: "2") }
    }

    @Test func aWriterAdoptsTheMapAnotherProcessGrew() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        let env = try open(dir)
        let members = env.database("members")
        #expect(try PythonPeer.write(in: dir, mapSize: 32 * Self.mebibyte, count: 5000, size: 4000, prefix: "py"))
        // The write is the first to notice (MDB_MAP_RESIZED from mdb_txn_begin).
        let count = try env.write { txn in
            try txn.put(members, key: "mine", value: "1")
            return try txn.count(members)
        }
        #expect(count == 5001)
        #expect(env.mapSize >= 32 * Self.mebibyte)
    }

    @Test func aNestedReadCannotAdoptAGrownMapAndSaysSo() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        let env = try open(dir)
        let members = env.database("members")
        let outer = try env.read { _ in
            let wrote = try PythonPeer.write(in: dir, mapSize: 32 * Self.mebibyte, count: 5000, size: 4000, prefix: "py")
            #expect(wrote)
            do throws(TransactionError<Never>) {
                try env.read { _ in }
                return nil as LMDBError?
            } catch {
                return error.flattened
            }
        }
        #expect(outer == .mapResized)
        #expect(outer?.description.contains("this thread holds a transaction") == true)
        #expect(try env.read { txn in try txn.count(members) } == 5000)
    }
}
