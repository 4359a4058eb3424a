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

    /// Runs the `assetpack` binary built beside the test bundle.
    func runAssetpack(_ args: [String]) throws -> Int32 {
        try Program.run(Program.built("assetpack"), args).status
    }
}
