import Foundation
import Testing
import AssetArchive
import AssetStore
import TestSupport

/// Member names in the index: keys in NFC, lookups normalized to NFC.
@Suite struct MemberNameTests {
    private static let nfdCafe = "cafe\u{301}.txt"
    private static let nfcCafe = "caf\u{e9}.txt"
    private static let nfdNaive = "nai\u{308}ve/menu.txt"
    private static let nfcNaive = "na\u{ef}ve/menu.txt"

    /// A pack whose archive spells one name in NFD and one in NFC.
    /// The fixture must outlive the store: its directory goes with it.
    private func install(_ f: StoreFixture) throws -> AssetStore {
        let store = try f.store()
        try store.install(packAt: try f.pack("p.zip", id: "p", [Self.nfdCafe: Array("decomposed".utf8),
                                                              Self.nfcNaive: Array("precomposed".utf8)]))
        return store
    }

    @Test func anNFDStoredMemberIsFoundByItsNFCName() throws {
        let f = StoreFixture()
        let store = try install(f)
        #expect(Array(try store.contents(at: Self.nfcCafe, inPack: "p")) == Array("decomposed".utf8))
        #expect(Array(try store.contents(at: Self.nfcCafe)) == Array("decomposed".utf8))
    }

    @Test func anNFCStoredMemberIsFoundByItsNFDName() throws {
        let f = StoreFixture()
        let store = try install(f)
        #expect(Array(try store.contents(at: Self.nfdNaive, inPack: "p")) == Array("precomposed".utf8))
        #expect(Array(try store.contents(at: Self.nfdNaive)) == Array("precomposed".utf8))
        #expect(try store.members(ofPack: "p", under: "nai\u{308}ve").map(\.path) == [Self.nfcNaive])
    }

    @Test func namesAreListedInNFC() throws {
        let f = StoreFixture()
        let store = try install(f)
        let paths = try store.members(ofPack: "p").map { Array($0.path.utf8) }
        #expect(paths == [Array(Self.nfcCafe.utf8), Array(Self.nfcNaive.utf8)])
    }

    @Test func anUnknownNonASCIINameIsStillNotFound() throws {
        let f = StoreFixture()
        let store = try install(f)
        #expect(throws: StoreError.fileNotFound(path: "cafe\u{300}.txt", pack: "p")) {
            try store.contents(at: "cafe\u{300}.txt", inPack: "p")
        }
    }
}
