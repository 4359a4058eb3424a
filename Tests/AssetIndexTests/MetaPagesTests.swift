@testable import AssetIndex
import Testing
import TestSupport

/// `lastCommittedTransactionID` reads the meta pages from a mapping of its
/// own: it must name the same commit as LMDB does, after every commit, across
/// map growth (which remaps LMDB's map, not this one) and for commits made by
/// another process.
@Suite struct MetaPagesTests {
    func open(_ dir: String) throws -> Environment {
        var options = Environment.Options()
        options.mapSize = 1 << 20
        options.noSync = true
        return try Environment(path: dir, databases: standardDatabases, options: options)
    }

    @Test func theMetaPagesFollowEveryCommitAndEveryMapGrowth() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try open(scratch.directory("index"))
        let pages = try #require(env.metaPages)
        let members = env.database("members")
        var sizes: Set<Int> = [env.mapSize]
        var last = env.lastCommittedTransactionID
        for batch in 0..<40 {
            try env.write { txn in
                for n in batch * 100..<(batch + 1) * 100 { try txn.put(members, key: key(n), value: value(n, count: 2000)) }
            }
            sizes.insert(env.mapSize)
            let seen = pages.lastCommittedTransactionID
            #expect(seen == env.info().lastTransactionID, "batch \(batch)")
            #expect(seen == (try env.read { txn in txn.snapshotID }), "batch \(batch)")
            #expect(seen > last, "batch \(batch)")
            #expect(env.lastCommittedTransactionID == seen)
            last = seen
        }
        #expect(sizes.count >= 3, "the map grew meanwhile: \(sizes.sorted())")
    }

    @Test(.enabled(if: PythonPeer.isAvailable, "needs python3 and liblmdb.so.0"))
    func aCommitByAnotherProcessIsSeen() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        let env = try open(dir)
        try env.write { txn in try txn.put(env.database("members"), key: "mine", value: "1") }
        let before = env.lastCommittedTransactionID
        #expect(try PythonPeer.write(in: dir, mapSize: 8 << 20, count: 50, size: 100, prefix: "py"))
        let after = env.lastCommittedTransactionID
        #expect(after > before)
        #expect(after == env.info().lastTransactionID)
        #expect(after == (try env.read { txn in txn.snapshotID }))
    }
}
