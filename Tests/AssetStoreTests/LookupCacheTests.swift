import Foundation
import Testing
import AssetArchive
@testable import AssetStore
import AssetSystem
import TestSupport

/// The lookup cache serves answers only for the commit they were read at:
/// every commit, by this store or another process, is seen by the next read.
@Suite struct LookupCacheTests {
    @Test func anInstallInThisProcessIsSeenByTheNextRead() throws {
        let f = StoreFixture("cache-local")
        let store = try f.store()
        try store.install(packAt: try f.pack("a1.zip", id: "a", ["x.png": [1, 1]]))
        #expect(Array(try store.contents(at: "x.png", inPack: "a")) == [1, 1])
        #expect(Array(try store.contents(at: "x.png", inPack: "a")) == [1, 1])   // now from the cache
        try store.install(packAt: try f.pack("a2.zip", id: "a", ["x.png": [2, 2, 2]]))
        #expect(Array(try store.contents(at: "x.png", inPack: "a")) == [2, 2, 2])
        #expect(Array(try store.contents(at: "x.png")) == [2, 2, 2])
    }

    @Test func aPathOnlyHitBecomesAmbiguousWhenAnotherPackAddsThePath() throws {
        let f = StoreFixture("cache-ambiguous")
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "a", ["shared.bin": [1]]))
        #expect(Array(try store.contents(at: "shared.bin")) == [1])
        #expect(Array(try store.contents(at: "shared.bin")) == [1])
        try store.install(packAt: try f.pack("b.zip", id: "b", ["shared.bin": [2]]))
        #expect(throws: StoreError.self) { _ = try store.contents(at: "shared.bin") }
    }

    @Test func aCommitByAnotherProcessIsSeenByTheNextRead() throws {
        let f = StoreFixture("cache-remote")
        let store = try f.store()
        try store.install(packAt: try f.pack("a1.zip", id: "a", ["x.png": [1]]))
        for _ in 0..<3 { #expect(Array(try store.contents(at: "x.png", inPack: "a")) == [1]) }
        // Another process replaces the pack, then removes it.
        try f.pack("a2.zip", id: "a", ["x.png": [7, 7]])
        #expect(try runAssetpack(["install", f.root + "/a2.zip", "--container", f.container.path]) == 0)
        #expect(Array(try store.contents(at: "x.png", inPack: "a")) == [7, 7])
        #expect(try runAssetpack(["rm", "a", "--container", f.container.path]) == 0)
        #expect(throws: StoreError.self) { _ = try store.contents(at: "x.png", inPack: "a") }
    }

    @Test func answersFromAnOlderSnapshotAreDropped() {
        let cache = LookupCache()
        let record = MemberRecord(archiveKey: 1, entry: ArchiveEntry(path: "p", method: .stored, crc32: 0, compressedSize: 1,
                                                                    uncompressedSize: 1, localHeaderOffset: 0, dataOffset: 30))
        cache.insert("p", pack: "a", found: ("a", record), commit: 5)
        #expect(cache.lookup("p", pack: "a", commit: 5)?.record == record)
        #expect(cache.lookup("p", pack: "a", commit: 6) == nil)
        cache.insert("q", pack: "a", found: ("a", record), commit: 4)
        #expect(cache.lookup("q", pack: "a", commit: 4) == nil)
        cache.insert("q", pack: nil, found: ("a", record), commit: 6)
        #expect(cache.lookup("p", pack: "a", commit: 6) == nil)
        #expect(cache.lookup("q", pack: nil, commit: 6)?.pack == "a")
    }

    static func record(_ n: Int) -> MemberRecord {
        MemberRecord(archiveKey: UInt64(n), entry: ArchiveEntry(path: "m", method: n % 2 == 0 ? .stored : .deflated, crc32: UInt32(truncatingIfNeeded: n * 7),
                                                               compressedSize: UInt64(n), uncompressedSize: UInt64(n + 1),
                                                               localHeaderOffset: UInt64(n * 3), dataOffset: UInt64(n * 3 + 30)))
    }

    /// Thousands of entries, past several growths of the table: each found
    /// with its own record, nothing found that was not put in.
    @Test func everyEntrySurvivesTheTableGrowing() {
        let cache = LookupCache()
        let packs = ["a", "b", "com.example.Levels"]
        for i in 0..<6000 {
            cache.insert("dir\(i % 37)/member-\(i).bin", pack: packs[i % 3], found: (packs[i % 3], Self.record(i)), commit: 9)
        }
        for i in 0..<6000 {
            #expect(cache.lookup("dir\(i % 37)/member-\(i).bin", pack: packs[i % 3], commit: 9)?.record == Self.record(i), "\(i)")
            #expect(cache.lookup("dir\(i % 37)/member-\(i).bin", pack: packs[(i + 1) % 3], commit: 9) == nil)
            #expect(cache.lookup("dir\(i % 37)/member-\(i).bin", pack: nil, commit: 9) == nil)
        }
        #expect(cache.lookup("dir0/member-6000.bin", pack: "a", commit: 9) == nil)
        #expect(cache.lookup("", pack: "a", commit: 9) == nil)
    }

    /// A lookup in a pack and one across packs for the same path are two
    /// entries; a path-only hit names the pack it found, for every pack.
    @Test func packAndPathOnlyLookupsAreKeptApart() {
        let cache = LookupCache()
        cache.insert("shared.txt", pack: "a", found: ("a", Self.record(1)), commit: 3)
        cache.insert("shared.txt", pack: nil, found: ("b", Self.record(2)), commit: 3)
        cache.insert("only-c.txt", pack: nil, found: ("c", Self.record(3)), commit: 3)
        cache.insert("x", pack: "a\u{1}", found: ("a\u{1}", Self.record(4)), commit: 3)
        #expect(cache.lookup("shared.txt", pack: "a", commit: 3)?.record == Self.record(1))
        let across = cache.lookup("shared.txt", pack: nil, commit: 3)
        #expect(across?.pack == "b" && across?.record == Self.record(2))
        #expect(cache.lookup("only-c.txt", pack: nil, commit: 3)?.pack == "c")
        #expect(cache.lookup("x", pack: nil, commit: 3) == nil)
        #expect(cache.lookup("a\u{1}x", pack: nil, commit: 3) == nil)
        // Putting the same key again replaces its answer.
        cache.insert("shared.txt", pack: nil, found: ("c", Self.record(5)), commit: 3)
        #expect(cache.lookup("shared.txt", pack: nil, commit: 3)?.pack == "c")
    }

    /// A newer commit makes every entry stale at once; entries of the new
    /// commit go in and come out right, with the old ones gone for good.
    @Test func aNewCommitStartsOverWithoutLosingTheNewEntries() {
        let cache = LookupCache()
        for commit in 10..<14 {
            for i in 0..<2000 { cache.insert("m\(i)", pack: "p", found: ("p", Self.record(i + commit)), commit: commit) }
            for i in 0..<2000 {
                #expect(cache.lookup("m\(i)", pack: "p", commit: commit)?.record == Self.record(i + commit))
                #expect(cache.lookup("m\(i)", pack: "p", commit: commit - 1) == nil)
            }
        }
        cache.insert("late", pack: "p", found: ("p", Self.record(1)), commit: 14)
        #expect(cache.lookup("m5", pack: "p", commit: 14) == nil)
        #expect(cache.lookup("late", pack: "p", commit: 14)?.record == Self.record(1))
    }

    /// Past its bound the cache starts over: the newest entry is kept.
    @Test func pastItsBoundTheCacheStartsOver() {
        let cache = LookupCache(capacity: 100)
        for i in 0..<100 { cache.insert("m\(i)", pack: "p", found: ("p", Self.record(i)), commit: 1) }
        #expect(cache.lookup("m0", pack: "p", commit: 1) != nil && cache.lookup("m99", pack: "p", commit: 1) != nil)
        cache.insert("m100", pack: "p", found: ("p", Self.record(100)), commit: 1)
        #expect(cache.lookup("m0", pack: "p", commit: 1) == nil)
        #expect(cache.lookup("m100", pack: "p", commit: 1)?.record == Self.record(100))
    }

    /// Keys longer than an entry holds inline keep the rest in the overflow
    /// arena: keys of every length around the inline bound, with the pack's
    /// separator before, at and past it, and keys that differ only in their
    /// last byte, each come back with their own record and no other's.
    @Test func keysLongerThanAnEntryHoldsAreComparedInFull() {
        let cache = LookupCache()
        let packs = ["p", String(repeating: "q", count: 59), String(repeating: "r", count: 60), String(repeating: "s", count: 75)]
        var n = 0
        var expected: [(String, String, Int)] = []
        for pack in packs {
            for length in [1, 57, 58, 59, 60, 61, 62, 120, 300] {
                for last in ["a", "b"] {
                    let path = String(repeating: "d", count: length - 1) + last
                    cache.insert(path, pack: pack, found: (pack, Self.record(n)), commit: 2)
                    cache.insert(path, pack: nil, found: (pack, Self.record(n + 1)), commit: 2)
                    expected.append((path, pack, n))
                    n += 2
                }
            }
        }
        for (path, pack, n) in expected {
            #expect(cache.lookup(path, pack: pack, commit: 2)?.record == Self.record(n), "\(pack.count) \(path.count)")
            #expect(cache.lookup(path + "x", pack: pack, commit: 2) == nil)
            #expect(cache.lookup(String(path.dropLast()), pack: pack, commit: 2) == nil)
        }
        // The path-only entries: the last pack put each in, with its record.
        for (path, pack, n) in expected where pack == packs.last {
            let across = cache.lookup(path, pack: nil, commit: 2)
            #expect(across?.pack == pack && across?.record == Self.record(n + 1), "\(path.count)")
        }
        #expect(cache.lookup(String(repeating: "d", count: 299) + "c", pack: packs[3], commit: 2) == nil)
    }

    /// The generation wraps (after 4,294,967,295 commits; after 1,000 in
    /// this cache) and the table is cleared then. Without that, at the
    /// commit after the wrap the generation is again the one that wrote the
    /// entries of commit 1, whose bytes are still there (only one entry was
    /// written over since).
    @Test func theGenerationWrapsWithoutOldEntriesComingBack() {
        let cache = LookupCache(lastGeneration: 1000)
        for i in 0..<100 { cache.insert("k\(i)", pack: "p", found: ("p", Self.record(i)), commit: 1) }
        #expect(cache.lookup("k50", pack: "p", commit: 1)?.record == Self.record(50))
        for commit in 2...1001 {
            cache.insert("m", pack: "p", found: ("p", Self.record(commit)), commit: commit)
        }
        for i in 1..<100 { #expect(cache.lookup("k\(i)", pack: "p", commit: 1001) == nil, "k\(i)") }
        #expect(cache.lookup("m", pack: "p", commit: 1001)?.record == Self.record(1001))
        cache.insert("late", pack: "p", found: ("p", Self.record(5)), commit: 1001)
        #expect(cache.lookup("late", pack: "p", commit: 1001)?.record == Self.record(5))
        #expect(cache.lookup("m", pack: "p", commit: 1001)?.record == Self.record(1001))
    }

    /// Runs the `assetpack` binary built beside the test bundle.
    func runAssetpack(_ args: [String]) throws -> Int32 {
        try Program.run(Program.built("assetpack"), args).status
    }
}
