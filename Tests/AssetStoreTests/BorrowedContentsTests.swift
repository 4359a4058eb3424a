import Foundation
import Testing
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

/// `borrowedContents`: the bytes of `contents` as a pointer and its owner
/// (what the C library's `ap_read` hands out).
@Suite struct BorrowedContentsTests {
    let image = noise(100_000, seed: 12)
    let level = text(20_000)

    @Test func storedBytesPointIntoTheMappingAndOutliveARemoval() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("p.zip", id: "p", ["img/a.bin": image], compression: .stored))
        let borrowed = try store.borrowedContents(at: "img/a.bin", inPack: "p")
        let data = try store.contents(at: "img/a.bin", inPack: "p")
        #expect(Array(borrowed.bytes) == image)
        // The same mapping as the Data's.
        #expect(data.withUnsafeBytes { $0.baseAddress } == borrowed.bytes.baseAddress)
        try store.remove(pack: "p")
        do {
            _ = try store.borrowedContents(at: "img/a.bin", inPack: "p")
            Issue.record("a removed pack's member was lent out")
        } catch {
            #expect("\(error)" == "\(StoreError.assetPackNotFound("p"))")
        }
        // The archive is unlinked; the owner keeps its pages mapped.
        withExtendedLifetime(borrowed.owner) { #expect(Array(borrowed.bytes) == image) }
    }

    @Test func deflatedBytesAreInflatedIntoABufferOfTheirOwn() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("p.zip", id: "p", ["levels/1.json": level], compression: .deflated))
        let borrowed = try store.borrowedContents(at: "levels/1.json")
        #expect(Array(borrowed.bytes) == level)
        #expect(borrowed.bytes.baseAddress != (try store.contents(at: "levels/1.json").withUnsafeBytes { $0.baseAddress }))
    }
}
