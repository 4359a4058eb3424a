import AssetIndex
import Testing
import TestSupport

@Suite struct MapGrowthTests {
    static let mebibyte = 1 << 20

    func tinyOptions(maximum: Int = 1 << 30) -> Environment.Options {
        var options = Environment.Options()
        options.mapSize = Self.mebibyte
        options.maximumMapSize = maximum
        options.noSync = true
        return options
    }

    @Test func fiftyMebibytesInOneTransactionGrowTheMap() throws {
        let scratch = TemporaryDirectory("assetindex")
        let dir = scratch.directory("index")
        var runs = 0
        do {
            let env = try Environment(path: dir, databases: standardDatabases, options: tinyOptions())
            #expect(env.mapSize == Self.mebibyte)
            let members = env.database("members")
            try env.write { txn in
                runs += 1
                for n in 0..<13_500 { try txn.append(members, key: key(n), value: value(n, count: 4000)) }
            }
            #expect(runs > 1, "the body ran again after the map grew")
            #expect(env.mapSize >= 50 * Self.mebibyte)
            let (count, sample) = try env.read { txn in
                (try txn.count(members), try txn.get(members, key: key(12_345)).map(Array.init))
            }
            #expect(count == 13_500)
            #expect(sample == value(12_345, count: 4000))
        }
        // Reopened with a 1 MiB option, the environment adopts the grown size.
        let reopened = try Environment(path: dir, databases: standardDatabases, options: tinyOptions())
        #expect(reopened.mapSize >= 50 * Self.mebibyte)
        #expect(try reopened.read { txn in try txn.count(reopened.database("members")) } == 13_500)
    }

    @Test func aWriteThatReservesWhatItAddsRunsOnce() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases, options: tinyOptions())
        let members = env.database("members")
        var runs = 0
        try env.write(reserving: 64 * Self.mebibyte) { txn in
            runs += 1
            for n in 0..<13_500 { try txn.append(members, key: key(n), value: value(n, count: 4000)) }
        }
        #expect(runs == 1, "the map was grown before the body, not on MDB_MAP_FULL")
        #expect(env.mapSize >= 64 * Self.mebibyte)
        #expect(try env.read { txn in try txn.count(members) } == 13_500)
    }

    @Test func aReservationPastTheLimitStopsAtTheLimit() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(
            path: scratch.directory("index"), databases: standardDatabases, options: tinyOptions(maximum: 4 * Self.mebibyte))
        let members = env.database("members")
        try env.write(reserving: 1 << 30) { txn in try txn.put(members, key: key(1), value: value(1, count: 10)) }
        #expect(env.mapSize == 4 * Self.mebibyte)
        #expect(try env.read { txn in try txn.count(members) } == 1)
    }

    @Test func fiftyMebibytesAcrossManyTransactionsGrowTheMap() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases, options: tinyOptions())
        let members = env.database("members")
        var sizes: Set<Int> = []
        for batch in 0..<200 {
            try env.write { txn in
                for n in batch * 68..<(batch + 1) * 68 { try txn.put(members, key: key(n), value: value(n, count: 4000)) }
            }
            sizes.insert(env.mapSize)
        }
        #expect(sizes.count >= 6, "grew step by step: \(sizes.sorted())")
        #expect(env.mapSize >= 50 * Self.mebibyte)
        let count = try env.read { txn in try txn.count(members) }
        #expect(count == 200 * 68)
    }

    @Test func aBodyThatSwallowsMapFullStillGetsAGrownMap() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases, options: tinyOptions())
        let members = env.database("members")
        var sawMapFull = false
        try env.write { txn in
            for n in 0..<1000 {
                do throws(LMDBError) { try txn.put(members, key: key(n), value: value(n, count: 4000)) } catch {
                    sawMapFull = sawMapFull || error.isMapFull
                    return
                }
            }
        }
        #expect(sawMapFull)
        #expect(try env.read { txn in try txn.count(members) } == 1000)
    }

    @Test func theLimitStopsGrowthAndCommitsNothing() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(
            path: scratch.directory("index"), databases: standardDatabases, options: tinyOptions(maximum: 4 * Self.mebibyte))
        let members = env.database("members")
        try env.write { txn in try txn.put(members, key: "before", value: "x") }
        do {
            try env.write { txn in
                for n in 0..<2000 { try txn.put(members, key: key(n), value: value(n, count: 4000)) }
            }
            Issue.record("wrote 8 MiB into a 4 MiB map")
        } catch {
            #expect(error.lmdbError == .mapFull)
            #expect(error.lmdbError?.description.contains("limit") == true)
        }
        #expect(env.mapSize == 4 * Self.mebibyte)
        #expect(try env.read { txn in try txn.count(members) } == 1)
    }
}
