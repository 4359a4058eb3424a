import Foundation
import Testing
import AssetArchive
import AssetStore
import TestSupport

/// Member names in the index: keys in NFC, lookups normalized to NFC, and
/// names that would collide on a file system refused at install.
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

    @Test func caseOnlyDuplicatesAreRefusedAtInstall() throws {
        let f = StoreFixture()
        let store = try f.store()
        let path = f.root + "/c.zip"  // the writer refuses these too
        try Data(Self.storedArchive(["Read.me", "READ.ME"])).write(to: URL(fileURLWithPath: path))
        do {
            try store.install(packAt: path)
            Issue.record("installed")
        } catch {
            guard case .archive(.caseCollision(_, let a, let b)) = error else { Issue.record("\(error)"); return }
            #expect(Set([a, b]) == ["Read.me", "READ.ME"])
        }
        #expect(try store.packRecord("c") == nil)
    }

    @Test func aFileBesideItsOwnDirectoryIsRefusedAtInstall() throws {
        let f = StoreFixture()
        let store = try f.store()
        let path = f.root + "/d.zip"
        try Data(Self.storedArchive(["a", "a/b"])).write(to: URL(fileURLWithPath: path))
        do {
            try store.install(packAt: path)
            Issue.record("installed")
        } catch {
            guard case .archive(.fileDirectoryCollision(_, "a", "a/b")) = error else { Issue.record("\(error)"); return }
        }
    }

    /// A minimal archive of empty stored members, written without the
    /// writer's checks.
    static func storedArchive(_ names: [String]) -> [UInt8] {
        var out: [UInt8] = []
        var central: [UInt8] = []
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0 ..< n).map { UInt8((v >> (8 * $0)) & 0xff) } }
        for name in names {
            let n = Array(name.utf8)
            let offset = out.count
            out += [0x50, 0x4b, 3, 4] + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + le(0, 4) + le(0, 4)
                + le(n.count, 2) + le(0, 2) + n
            central += [0x50, 0x4b, 1, 2] + le(20, 2) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4)
                + le(0, 4) + le(0, 4) + le(n.count, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4)
                + le(offset, 4) + n
        }
        let start = out.count
        out += central
        out += [0x50, 0x4b, 5, 6] + le(0, 4) + le(names.count, 2) + le(names.count, 2) + le(central.count, 4) + le(start, 4) + le(0, 2)
        return out
    }
}
