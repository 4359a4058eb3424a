import AssetIndex
import AssetSystem
import Foundation
import Testing
import TestSupport

@Suite struct EnvironmentTests {
    @Test func missingDirectoryIsAnErrorNamingThePath() throws {
        let scratch = TemporaryDirectory("assetindex")
        let path = scratch.path + "/no/such/index"
        do {
            _ = try Environment(path: path, databases: standardDatabases)
            Issue.record("opened a missing directory")
        } catch {
            #expect(error.code == ENOENT)
            #expect(error.path == path)
            #expect(error.description.contains(path))
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func aFileIsNotADirectory() throws {
        let scratch = TemporaryDirectory("assetindex")
        let path = scratch.path + "/file"
        #expect(FileManager.default.createFile(atPath: path, contents: Data([1])))
        #expect(throws: LMDBError(ENOTDIR)) { try Environment(path: path, databases: standardDatabases) }
    }

    /// `data.mdb` gets ``Environment/Options/fileMode``; the files every
    /// process locks, `lock.mdb` and `map.lock`, get the lock file mode —
    /// 0600 by default, whatever `fileMode` lets others read — also when
    /// they were there before with a wider one.
    @Test func createsFilesWithTheConfiguredMode() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        var options = Environment.Options()
        options.fileMode = 0o640
        func mode(_ file: String) throws -> UInt32 { try #require(try FileDescriptor.status(of: dir + "/" + file)).mode & 0o7777 }
        var env: Environment? = try Environment(path: dir, databases: standardDatabases, options: options)
        #expect(try mode("data.mdb") == 0o640)
        #expect(try mode("lock.mdb") == 0o600)
        #expect(try mode("map.lock") == 0o600)
        env = nil
        #expect(chmod(dir + "/lock.mdb", 0o644) == 0 && chmod(dir + "/map.lock", 0o666) == 0)
        options.lockFileMode = 0o660
        env = try Environment(path: dir, databases: standardDatabases, options: options)
        #expect(try mode("lock.mdb") == 0o660)
        #expect(try mode("map.lock") == 0o660)
        _ = env
    }

    @Test func secondOpenInOneProcessIsRefused() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        var first: Environment? = try Environment(path: dir, databases: standardDatabases)
        // Another spelling of the same directory is the same environment.
        #expect(throws: LMDBError(EBUSY)) { try Environment(path: dir + "/.", databases: standardDatabases) }
        _ = first?.path
        first = nil
        let again = try Environment(path: dir, databases: standardDatabases)
        #expect(again.database("packs").name == "packs")
    }

    @Test func databasesAndDataPersistAcrossReopening() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        do {
            let env = try Environment(path: dir, databases: standardDatabases)
            let packs = env.database("packs")
            try env.write { txn in try txn.put(packs, key: "game", value: "v1") }
        }
        let env = try Environment(path: dir, databases: standardDatabases)
        let packs = env.database("packs")
        let stored = try env.read { txn in try txn.get(packs, key: "game").map { String(decoding: $0, as: UTF8.self) } }
        #expect(stored == "v1")
        #expect(env.database("paths").isDuplicateSorted)
        #expect(!packs.isDuplicateSorted)
    }

    @Test func reopeningADatabaseWithOtherFlagsFails() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        _ = try Environment(path: dir, databases: standardDatabases)
        #expect(throws: LMDBError.incompatible) {
            try Environment(path: dir, databases: [("packs", .duplicateSorted)])
        }
    }

    @Test func readOnlyEnvironmentRefusesWritesAndMissingDatabases() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        do {
            let env = try Environment(path: dir, databases: standardDatabases)
            try env.write { txn in try txn.put(env.database("packs"), key: "a", value: "1") }
        }
        var options = Environment.Options()
        options.readOnly = true
        #expect(throws: LMDBError.notFound) {
            try Environment(path: dir, databases: [("journal", .plain)], options: options)
        }
        let env = try Environment(path: dir, databases: standardDatabases, options: options)
        #expect(try env.read { txn in try txn.count(env.database("packs")) } == 1)
        do {
            try env.write { txn in try txn.put(env.database("packs"), key: "b", value: "2") }
            Issue.record("wrote to a read-only environment")
        } catch {
            #expect(error.lmdbError?.code == EACCES)
        }
    }

    @Test func infoReportsSizes() throws {
        let scratch = TemporaryDirectory("assetindex")
        var options = Environment.Options()
        options.mapSize = 3 << 20
        options.maxReaders = 50
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases, options: options)
        let info = env.info()
        #expect(info.mapSize == 3 << 20)
        #expect(env.mapSize == 3 << 20)
        #expect(info.maxReaders == 50)
        #expect(info.pageSize == MappedRegion.pageSize)
        let before = info.lastTransactionID
        try env.write { txn in try txn.put(env.database("packs"), key: "a", value: "1") }
        #expect(env.info().lastTransactionID == before + 1)
    }

    @Test func noStaleReadersInAHealthyEnvironment() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases)
        _ = try env.read { txn in try txn.count(env.database("packs")) }
        #expect(try env.clearStaleReaders() == 0)
        let mine = env.readers().filter { $0.pid == getpid() }
        #expect(mine.count == 1)
        #expect(mine.allSatisfy { $0.isProcessAlive && $0.transactionID == nil })
    }

    @Test(arguments: [false, true])
    func copyMakesAnOpenableBackup(compact: Bool) throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases)
        let members = env.database("members")
        try env.write { txn in
            for n in 0..<2000 { try txn.put(members, key: key(n), value: value(n, count: 100)) }
        }
        try env.write { txn in
            for n in 0..<1000 { try txn.delete(members, key: key(n)) }
        }
        let backup = scratch.directory("backup")
        try env.copy(to: backup, compact: compact)
        #expect(throws: LMDBError(EEXIST)) { try env.copy(to: backup, compact: compact) }
        let copy = try Environment(path: backup, databases: standardDatabases)
        let (count, stored) = try copy.read { txn in
            (try txn.count(copy.database("members")), try txn.get(copy.database("members"), key: key(1500)).map(Array.init))
        }
        #expect(count == 1000)
        #expect(stored == value(1500, count: 100))
        if compact { #expect(copy.info().lastPage < env.info().lastPage) }
    }
}

/// A read transaction lets go of the index pages it has read: the resident
/// part of the data file's mapping falls, and what was read stays readable.
@Suite struct ResidentPagesTests {

    @Test func aWalkCanLetGoOfThePagesItRead() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        let env = try Environment(path: dir, databases: standardDatabases)
        let members = env.database("members")
        let value = [UInt8](repeating: 7, count: 400)
        try env.write { txn in
            for n in 0..<40_000 { try txn.append(members, key: key(n), value: value) }
        }
        let file = dir + "/data.mdb"
        let (read, released, intact) = try env.read { txn in
            var sum = 0
            try txn.forEach(members) { _, v in sum += Int(v[0]); return true }
            let first = try #require(try txn.get(members, key: key(0)))
            let read = try ResidentMemory.kilobytes(mapping: file)
            txn.releaseResidentPages()
            let released = try ResidentMemory.kilobytes(mapping: file)
            // A value found before the release is still there after it.
            return (read, released, sum == 7 * 40_000 && first.elementsEqual(value))
        }
        #expect(intact)
        #expect(read > 8_000, "the walk read \(read) KiB of the index")
        #expect(released < read / 8, "\(released) KiB left of \(read)")
    }
}
