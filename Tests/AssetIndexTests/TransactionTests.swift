import AssetIndex
import Testing
import TestSupport

/// An error a store might throw out of a transaction body.
enum InstallError: Error, Equatable {
    case alreadyInstalled(String)
    case corrupt
}

/// Reads through the protocol, as store code that serves reads and writes does.
func packVersion(_ txn: borrowing some ReadableTransaction & ~Copyable, _ db: Database, _ id: String) throws(LMDBError) -> UInt32? {
    guard let bytes = try txn.get(db, key: id) else { return nil }
    var reader = ByteReader(bytes)
    return reader.u32()
}

@Suite struct TransactionTests {
    let env: Environment
    let packs: Database
    let paths: Database
    // After `env`: fields are destroyed in declaration order, and the
    // directory must outlive the environment, or another test's new directory
    // may get the freed inode while this one still claims it (EBUSY, "already
    // open").
    let scratch = TemporaryDirectory("assetindex")

    init() throws {
        env = try Environment(path: scratch.directory("index"), databases: standardDatabases)
        packs = env.database("packs")
        paths = env.database("paths")
    }

    private func string(_ bytes: UnsafeRawBufferPointer?) -> String? {
        bytes.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func putGetDeleteRoundTrip() throws {
        let raw: [UInt8] = [0, 1, 2, 255]
        try env.write { txn in
            #expect(try txn.put(packs, key: "game", value: "one"))
            try raw.withUnsafeBytes { key in _ = try txn.put(packs, key: key, value: key) }
            #expect(string(try txn.get(packs, key: "game")) == "one")
        }
        let (game, rawValue, missing) = try env.read { txn in
            (string(try txn.get(packs, key: "game")), try txn.get(packs, key: raw).map(Array.init),
             try txn.get(packs, key: "nothing"))
        }
        #expect(game == "one")
        #expect(rawValue == raw)
        #expect(missing == nil)

        let deleted = try env.write { txn in (try txn.delete(packs, key: "game"), try txn.delete(packs, key: "game")) }
        #expect(deleted == (true, false))
        #expect(try env.read { txn in try txn.contains(packs, key: "game") } == false)
    }

    @Test func putReplacesUnlessNoOverwrite() throws {
        let stored = try env.write { txn in
            try txn.put(packs, key: "k", value: "first")
            try txn.put(packs, key: "k", value: "second")
            let refused = try txn.put(packs, key: "k", value: "third", flags: .noOverwrite)
            return (refused, string(try txn.get(packs, key: "k")))
        }
        #expect(stored.0 == false)
        #expect(stored.1 == "second")
        // A refused put leaves the transaction usable: the commit went through.
        #expect(try env.read { txn in string(try txn.get(packs, key: "k")) } == "second")
    }

    @Test func keysLMDBCannotStoreAreAbsentOrRefused() throws {
        let long = String(repeating: "x", count: 600)
        let found = try env.read { txn in (try txn.get(packs, key: ""), try txn.get(packs, key: long)) }
        #expect(found.0 == nil && found.1 == nil)
        for bad in ["", long] {
            do {
                try env.write { txn in try txn.put(packs, key: bad, value: "v") }
                Issue.record("stored a key of \(bad.utf8.count) bytes")
            } catch {
                #expect(error.lmdbError == .badValueSize)
                #expect(error.lmdbError?.operation == "mdb_put packs")
            }
        }
    }

    @Test func prefixIterationIsInByteOrderAndStops() throws {
        let keys = ["pack-b\0z", "pack-a\0b/2", "pack-a\0a", "pack-a\0b/10", "pack-a\0b/1", "pack-\0", "pack-a", "pack-c\0a"]
        try env.write { txn in
            for k in keys { try txn.put(packs, key: k, value: k.uppercased()) }
        }
        let (underA, all, firstTwo) = try env.read { txn in
            var underA: [String] = []
            try txn.forEach(packs, prefix: "pack-a\0") { key, value in
                #expect(String(decoding: value, as: UTF8.self) == String(decoding: key, as: UTF8.self).uppercased())
                underA.append(String(decoding: key, as: UTF8.self))
                return true
            }
            var all: [String] = []
            try txn.forEach(packs) { key, _ in all.append(String(decoding: key, as: UTF8.self)); return true }
            var firstTwo: [String] = []
            try txn.forEach(packs, prefix: "pack-") { key, _ in
                firstTwo.append(String(decoding: key, as: UTF8.self))
                return firstTwo.count < 2
            }
            return (underA, all, firstTwo)
        }
        #expect(underA == ["pack-a\0a", "pack-a\0b/1", "pack-a\0b/10", "pack-a\0b/2"])
        #expect(all == keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(firstTwo == ["pack-\0", "pack-a"])
        let none = try env.read { txn in
            var n = 0
            try txn.forEach(packs, prefix: "zzz") { _, _ in n += 1; return true }
            try txn.forEach(packs, prefix: "pack-d") { _, _ in n += 1; return true }
            return n
        }
        #expect(none == 0)
    }

    @Test func duplicateSortedValues() throws {
        try env.write { txn in
            for pack in ["music", "game", "video", "art"] { try txn.put(paths, key: "intro.mp4", value: pack) }
            try txn.put(paths, key: "other", value: "game")
            #expect(try txn.put(paths, key: "intro.mp4", value: "game", flags: .noDuplicateData) == false)
            #expect(try txn.put(paths, key: "intro.mp4", value: "new", flags: .noOverwrite) == false)
        }
        let (values, count, first, has, hasNot, absentCount) = try env.read { txn in
            (try txn.values(paths, key: "intro.mp4").map { String(decoding: $0, as: UTF8.self) },
             try txn.valueCount(paths, key: "intro.mp4"),
             string(try txn.get(paths, key: "intro.mp4")),
             try txn.contains(paths, key: "intro.mp4", value: "video"),
             try txn.contains(paths, key: "intro.mp4", value: "books"),
             try txn.valueCount(paths, key: "missing"))
        }
        #expect(values == ["art", "game", "music", "video"])
        #expect(count == 4)
        #expect(first == "art")
        #expect(has && !hasNot)
        #expect(absentCount == 0)

        let afterDelete = try env.write { txn in
            #expect(try txn.delete(paths, key: "intro.mp4", value: "game"))
            #expect(try txn.delete(paths, key: "intro.mp4", value: "game") == false)
            return try txn.values(paths, key: "intro.mp4").count
        }
        #expect(afterDelete == 3)
        let total = try env.write { txn in
            #expect(try txn.delete(paths, key: "intro.mp4"))
            return try txn.count(paths)
        }
        #expect(total == 1)
    }

    @Test func valuesOfAPlainDatabaseAreTheOneValue() throws {
        try env.write { txn in try txn.put(packs, key: "k", value: "v") }
        let (values, count, pair, otherPair) = try env.read { txn in
            (try txn.values(packs, key: "k"), try txn.valueCount(packs, key: "k"),
             try txn.contains(packs, key: "k", value: "v"), try txn.contains(packs, key: "k", value: "w"))
        }
        #expect(values == [Array("v".utf8)])
        #expect(count == 1)
        #expect(pair && !otherPair)
        let deleted = try env.write { txn in
            (try txn.delete(packs, key: "k", value: "w"), try txn.delete(packs, key: "k", value: "v"))
        }
        #expect(deleted == (false, true))
    }

    @Test func deleteAllByPrefix() throws {
        try env.write { txn in
            for n in 0..<500 { try txn.put(packs, key: "a\0\(n)", value: "x") }
            for n in 0..<10 { try txn.put(packs, key: "b\0\(n)", value: "x") }
            try txn.put(packs, key: "a", value: "x")
            for v in ["1", "2", "3"] {
                try txn.put(paths, key: "a/x", value: v)
                try txn.put(paths, key: "b/y", value: v)
            }
        }
        let removed = try env.write { txn in
            (try txn.deleteAll(packs, prefix: "a\0"), try txn.deleteAll(paths, prefix: "a/"), try txn.deleteAll(packs, prefix: "q"))
        }
        #expect(removed == (500, 3, 0))
        let left = try env.read { txn in (try txn.count(packs), try txn.count(paths)) }
        #expect(left == (11, 3))
        let everything = try env.write { txn in try txn.deleteAll(packs, prefix: "") }
        #expect(everything == 11)
    }

    /// A sweep deletes the pairs its body says to, keeps the others (also
    /// a run of deleted keys with kept ones between, and the prefix's last
    /// key), stays inside the prefix, lets the body write to another
    /// database, and stops where the body says.
    @Test func sweepDeletesWhatItsBodySaysAndNothingElse() throws {
        let members = env.database("members")
        try env.write { txn in
            for n in 0..<300 { try txn.put(members, key: "a\0" + String(1000 + n), value: n % 3 == 0 ? "old" : "new") }
            try txn.put(members, key: "a", value: "old")
            try txn.put(members, key: "b\0x", value: "old")
        }
        let (removed, seen) = try env.write { txn in
            var seen = 0
            let removed = try txn.sweep(members, prefix: "a\0") { key, value in
                seen += 1
                guard value.elementsEqual("old".utf8) else { return .keep }
                _ = try? txn.put(paths, key: Array(key), value: "gone")
                return .delete
            }
            return (removed, seen)
        }
        #expect(removed == 100 && seen == 300)
        let left = try env.read { txn in
            var kept: [String] = []
            try txn.forEach(members) { key, value in
                kept.append(String(decoding: key, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self))
                return true
            }
            return (kept, try txn.count(paths))
        }
        let expected = ["a=old"] + (0..<300).filter { $0 % 3 != 0 }.map { "a\0\(1000 + $0)=new" } + ["b\0x=old"]
        #expect(left.0 == expected)
        #expect(left.1 == 100)
        // Stopping: the pair shown when the body stops is kept, and no later one is shown.
        let stopped = try env.write { txn in
            var shown: [String] = []
            let removed = try txn.sweep(members, prefix: "a\0") { key, _ in
                shown.append(String(decoding: key, as: UTF8.self))
                return shown.count == 3 ? .stop : .delete
            }
            return (removed, shown, try txn.count(members))
        }
        #expect(stopped.0 == 2 && stopped.1 == ["a\01001", "a\01002", "a\01004"] && stopped.2 == 200)
        let none = try env.write { txn in try txn.sweep(members, prefix: "q") { _, _ in .delete } }
        #expect(none == 0)
    }

    @Test func dropEmptiesTheDatabaseOnly() throws {
        try env.write { txn in
            for n in 0..<100 { try txn.put(packs, key: key(n), value: "x") }
            try txn.put(paths, key: "p", value: "x")
        }
        try env.write { txn in try txn.drop(packs) }
        let counts = try env.read { txn in (try txn.count(packs), try txn.count(paths)) }
        #expect(counts == (0, 1))
        try env.write { txn in try txn.put(packs, key: "again", value: "x") }
    }

    @Test func reservePutFillsInPlace() throws {
        let stored = try env.write { txn in
            try txn.put(packs, key: "r", reserving: 16) { buffer in
                for i in 0..<16 { buffer[i] = UInt8(i * 3) }
            }
            let refused = try txn.put(packs, key: "r", reserving: 4, flags: .noOverwrite) { _ in
                Issue.record("fill called for a refused put")
            }
            return refused
        }
        #expect(stored == false)
        let bytes = try env.read { txn in try txn.get(packs, key: "r").map(Array.init) }
        #expect(bytes == (0..<16).map { UInt8($0 * 3) })
    }

    @Test func appendLoadsSortedKeysAndRefusesDisorder() throws {
        let count = 100_000
        try env.write { txn in
            for n in 0..<count { try txn.append(packs, key: key(n), value: value(n, count: 40)) }
        }
        let (total, sample) = try env.read { txn in
            (try txn.count(packs), try txn.get(packs, key: key(77_777)).map(Array.init))
        }
        #expect(total == count)
        #expect(sample == value(77_777, count: 40))
        do {
            try env.write { txn in try txn.append(packs, key: key(5), value: [1]) }
            Issue.record("appended out of order")
        } catch {
            #expect(error.lmdbError == .keyExists)
        }
        try env.write { txn in
            for v in ["a", "b", "c"] { try txn.append(paths, key: "k", value: v) }
        }
        #expect(try env.read { txn in try txn.values(paths, key: "k").count } == 3)
    }

    @Test func aThrowingBodyAbortsTheWrite() throws {
        try env.write { txn in try txn.put(packs, key: "kept", value: "1") }
        do {
            try env.write { (txn) throws(InstallError) in
                do {
                    try txn.put(packs, key: "kept", value: "2")
                    try txn.put(packs, key: "lost", value: "2")
                } catch { Issue.record("\(error)") }
                throw .alreadyInstalled("game")
            }
            Issue.record("the body's error was not thrown")
        } catch .body(.alreadyInstalled(let id)) {
            #expect(id == "game")
        } catch {
            Issue.record("unexpected \(error)")
        }
        let (kept, lost) = try env.read { txn in (string(try txn.get(packs, key: "kept")), try txn.get(packs, key: "lost")) }
        #expect(kept == "1")
        #expect(lost == nil)
    }

    @Test func typedErrorsFlattenIntoTheCallersType() throws {
        enum StoreError: Error, Equatable { case index(LMDBError), install(InstallError) }
        func install() throws(StoreError) {
            do {
                try env.write { (txn) throws(StoreError) in
                    do throws(LMDBError) { try txn.put(packs, key: "", value: "x") } catch { throw .index(error) }
                }
            } catch { throw error.flattened(StoreError.index) }
        }
        #expect(throws: StoreError.index(.badValueSize)) { try install() }

        // A body typed throws(LMDBError) folds to one LMDBError.
        func lookup() throws(LMDBError) -> Int {
            do { return try env.read { (txn) throws(LMDBError) in try txn.count(packs) } } catch { throw error.flattened }
        }
        #expect(try lookup() == 0)
    }

    @Test func writeSeesItsChangesAndNestedReadsSeeTheLastCommit() throws {
        var w = ByteWriter()
        w.u32(1)
        try env.write { txn in try txn.put(packs, key: "game", value: w) }
        var w2 = ByteWriter()
        w2.u32(2)
        let seen = try env.write { txn in
            try txn.put(packs, key: "game", value: w2)
            let insideWrite = try packVersion(txn, packs, "game")
            let insideRead = try env.read { read in try packVersion(read, packs, "game") }
            return (insideWrite, insideRead)
        }
        #expect(seen.0 == 2)
        #expect(seen.1 == 1)
        #expect(try env.read { txn in try packVersion(txn, packs, "game") } == 2)
    }

    @Test func statisticsCountEntries() throws {
        try env.write { txn in
            for n in 0..<1000 { try txn.put(packs, key: key(n), value: value(n, count: 200)) }
        }
        let stats = try env.read { txn in try txn.statistics(packs) }
        #expect(stats.entries == 1000)
        #expect(stats.leafPages > 1)
        #expect(stats.depth >= 2)
    }
}
