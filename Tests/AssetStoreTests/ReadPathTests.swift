import Foundation
import Testing
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

/// The read path's caches: archive mappings found again by key, and the
/// bytes handed out keeping their pages mapped by themselves.
@Suite struct ReadPathTests {
    @Test func readsAlternatingBetweenPacksComeFromEachPacksOwnArchive() throws {
        let f = StoreFixture()
        let store = try f.store()
        let a = try store.install(packAt: try f.pack("a.zip", id: "a", ["m": noise(5000, seed: 1)], compression: .stored)).record
        let b = try store.install(packAt: try f.pack("b.zip", id: "b", ["m": noise(5000, seed: 2)], compression: .stored)).record
        for _ in 0 ..< 3 {
            let x = try store.contents(at: "m", inPack: "a")
            let y = try store.contents(at: "m", inPack: "b")
            #expect(Array(x) == noise(5000, seed: 1))
            #expect(Array(y) == noise(5000, seed: 2))
            #expect(mappedFile(holding: x) == f.container.packsPath + "/" + a.archiveName)
            #expect(mappedFile(holding: y) == f.container.packsPath + "/" + b.archiveName)
        }
    }

    @Test func aReplacedPackIsReadFromItsNewArchiveRightAfterTheOld() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("v1.zip", id: "p", ["m": noise(3000, seed: 1)], compression: .stored))
        let old = try store.contents(at: "m", inPack: "p")
        for (version, seed) in [(2, UInt64(2)), (3, 3)] {
            let record = try store.install(packAt: try f.pack("v\(version).zip", id: "p", ["m": noise(3000, seed: seed)], compression: .stored)).record
            let now = try store.contents(at: "m", inPack: "p")
            #expect(Array(now) == noise(3000, seed: seed))
            #expect(mappedFile(holding: now) == f.container.packsPath + "/" + record.archiveName)
        }
        #expect(Array(old) == noise(3000, seed: 1))
    }

    @Test func bytesOutliveTheStoreThatHandedThemOut() throws {
        let f = StoreFixture()
        var held: [Data] = []
        var archive = ""
        do {
            let store = try f.store()
            let pack = try f.pack("p.zip", id: "p", ["a": noise(70_000, seed: 4), "b": noise(10, seed: 5)], compression: .stored)
            archive = f.container.packsPath + "/" + (try store.install(packAt: pack)).record.archiveName
            held = [try store.contents(at: "a", inPack: "p"), try store.contents(at: "b", inPack: "p")]
            try store.remove(pack: "p")
        }
        // The store, its index and its mapping cache are gone; the pages are not.
        #expect(Array(held[0]) == noise(70_000, seed: 4))
        #expect(Array(held[1]) == noise(10, seed: 5))
        #expect(mappedFile(holding: held[0]) == archive)
        #expect(FileManager.default.fileExists(atPath: archive) == false)
    }
}
