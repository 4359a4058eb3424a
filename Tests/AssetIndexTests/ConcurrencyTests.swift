import AssetIndex
import Foundation
import Synchronization
import Testing
import TestSupport

/// Counters shared by test threads.
final class Tally: Sendable {
    let done = Atomic<Bool>(false)
    let reads = Atomic<Int>(0)
    let torn = Atomic<Int>(0)
    let failures = Mutex<[String]>([])

    func fail(_ message: String) { failures.withLock { $0.append(message) } }
}

@Suite struct ConcurrencyTests {
    @Test func readsReuseTheirReaderSlot() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases)
        let packs = env.database("packs")
        try env.write { txn in try txn.put(packs, key: key(1), value: value(1, count: 40)) }
        let k = key(1)
        var found = 0
        try k.withUnsafeBytes { k in
            for _ in 0..<100_000 {
                if try env.read({ txn in try txn.get(packs, key: k) }) != nil { found += 1 }
            }
        }
        #expect(found == 100_000)
        let mine = env.readers().filter { $0.pid == getpid() }
        #expect(mine.count == 1)
        #expect(env.info().readerSlotsUsed == 1)
    }

    @Test func nestedReadsTakeOneSlotEach() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases)
        let live = try env.read { _ in
            try env.read { _ in
                try env.read { _ in env.readers().filter { $0.transactionID != nil }.count }
            }
        }
        #expect(live == 3)
        #expect(env.readers().allSatisfy { $0.transactionID == nil })
        // The three pooled transactions serve later reads; no new slots.
        for _ in 0..<10 { try env.read { _ in try env.read { _ in } } }
        #expect(env.readers().count == 3)
    }

    @Test func threadsTakingTurnsShareOneSlot() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases)
        let tally = Tally()
        for _ in 0..<10 {
            // Each new thread starts from its own shard, finds it empty, and
            // takes the idle transaction the previous thread left elsewhere.
            onThreads(1) { _ in
                do { for _ in 0..<100 { try env.read { _ in tally.reads.add(1, ordering: .relaxed) } } } catch { tally.fail("\(error)") }
            }
        }
        #expect(tally.failures.withLock { $0 } == [])
        #expect(tally.reads.load(ordering: .relaxed) == 1000)
        #expect(env.readers().count == 1)
    }

    /// Readers on several threads, while a writer commits generations that
    /// rewrite ten keys and grow the map, see each generation whole or not at
    /// all, and never an older one after a newer.
    @Test func readersSeeWholeCommitsWhileTheMapGrows() throws {
        let scratch = TemporaryDirectory("assetindex")
        var options = Environment.Options()
        options.mapSize = 1 << 20
        options.noSync = true
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases, options: options)
        let packs = env.database("packs")
        let members = env.database("members")
        let tally = Tally()
        let generations = 300
        onThreads(5) { thread in
            if thread == 0 {
                defer { tally.done.store(true, ordering: .releasing) }
                do {
                    for generation in 1...generations {
                        try env.write { txn in
                            for k in 0..<10 { try txn.put(packs, key: key(k), value: key(generation)) }
                            // Padding that makes the map grow while readers run.
                            for n in 0..<8 { try txn.put(members, key: key(generation * 8 + n), value: value(n, count: 4000)) }
                        }
                    }
                } catch { tally.fail("writer: \(error)") }
                return
            }
            var last = 0
            while !tally.done.load(ordering: .acquiring) {
                do {
                    let seen = try env.read { (txn) throws(LMDBError) -> [Int] in
                        var seen: [Int] = []
                        for k in 0..<10 {
                            guard let bytes = try txn.get(packs, key: key(k)) else { seen.append(0); continue }
                            var reader = ByteReader(bytes)
                            seen.append(Int(reader.u64BigEndian() ?? 0))
                        }
                        return seen
                    }
                    if Set(seen).count != 1 { tally.torn.add(1, ordering: .relaxed) }
                    if seen[0] < last { tally.fail("went back from \(last) to \(seen[0])") }
                    last = seen[0]
                    tally.reads.add(1, ordering: .relaxed)
                } catch { tally.fail("reader: \(error)") }
            }
        }
        #expect(tally.failures.withLock { $0 } == [])
        #expect(tally.torn.load(ordering: .relaxed) == 0)
        #expect(tally.reads.load(ordering: .relaxed) > 0)
        #expect(env.mapSize >= 8 << 20, "the map grew while readers ran")
        let final = try env.read { txn in try txn.get(packs, key: key(9)).map(Array.init) }
        #expect(final == key(generations))
        // Slots: at most one per reading thread (plus one for this thread).
        #expect(env.readers().count <= 5)
    }

    @Test func writersOnManyThreadsAreSerialized() throws {
        let scratch = TemporaryDirectory("assetindex")
        let env = try Environment(path: scratch.directory("index"), databases: standardDatabases)
        let packs = env.database("packs")
        let tally = Tally()
        onThreads(4) { _ in
            for _ in 0..<50 {
                do {
                    try env.write { txn in
                        var count: UInt64 = 0
                        if let bytes = try txn.get(packs, key: "counter") {
                            var reader = ByteReader(bytes)
                            count = reader.u64() ?? 0
                        }
                        var writer = ByteWriter()
                        writer.u64(count + 1)
                        try txn.put(packs, key: "counter", value: writer)
                    }
                } catch { tally.fail("\(error)") }
            }
        }
        #expect(tally.failures.withLock { $0 } == [])
        let count = try env.read { txn in try txn.get(packs, key: "counter").flatMap { b in var r = ByteReader(b); return r.u64() } }
        #expect(count == 200)
    }

    @Test func writeInsideAReadIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scratch = TemporaryDirectory("assetindex")
            let env = try Environment(path: scratch.directory("index"), databases: standardDatabases)
            try env.read { _ in try env.write { _ in } }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("inside a read body"), "\(message)")
    }
}
