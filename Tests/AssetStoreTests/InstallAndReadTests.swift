import Foundation
import Testing
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

@Suite struct InstallAndReadTests {
    let image = [0x89, 0x50, 0x4e, 0x47] + noise(200_000, seed: 3)
    let level = text(50_000)

    @Test func storedMembersAreZeroCopyFromTheArchiveMapping() throws {
        let f = StoreFixture()
        let pack = try f.pack("p.zip", id: "com.example.p", ["img/a.png": image, "levels/1.json": level])
        let store = try f.store()
        let outcome = try store.install(packAt: pack)
        #expect(outcome.change == .installed)
        #expect(outcome.record.version == "1")
        let data = try store.contents(at: "img/a.png", inPack: "com.example.p")
        #expect(Array(data) == image)
        let file = try #require(mappedFile(holding: data))
        #expect(file == f.container.packsPath + "/" + outcome.record.archiveName)
        // Page-aligned by the packager, so its address is page-aligned too.
        #expect(data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) } % UInt(MappedRegion.pageSize) == 0)
    }

    @Test func deflatedMembersInflateToTheirBytes() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("p.zip", id: "p", ["levels/1.json": level]))
        #expect(try store.members(ofPack: "p").first?.method == .deflated)
        let data = try store.contents(at: "levels/1.json", inPack: "p")
        #expect(Array(data) == level)
        #expect(mappedFile(holding: data) == nil)
    }

    @Test func emptyMemberReadsAsEmpty() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("p.zip", id: "p", ["empty": []]))
        #expect(try store.contents(at: "empty", inPack: "p").isEmpty)
        let d = try store.descriptor(for: "empty", inPack: "p")
        #expect(d.length == 0)
    }

    @Test func missingPackAndMissingFileAreDistinctErrors() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("p.zip", id: "p", ["a": [1]]))
        #expect(throws: StoreError.self) { _ = try store.contents(at: "a", inPack: "q") }
        do {
            _ = try store.contents(at: "a", inPack: "q")
        } catch StoreError.assetPackNotFound(let id) {
            #expect(id == "q")
        }
        do {
            _ = try store.contents(at: "b", inPack: "p")
            Issue.record("no error")
        } catch StoreError.fileNotFound(let path, let pack) {
            #expect(path == "b" && pack == "p")
        }
        do {
            _ = try store.contents(at: "b")
            Issue.record("no error")
        } catch StoreError.fileNotFound(let path, let pack) {
            #expect(path == "b" && pack == nil)
        }
    }

    @Test func pathOnlyLookupFindsTheOnePackOrNamesBoth() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "alpha", ["shared.txt": [1], "only-a": [2]]))
        try store.install(packAt: try f.pack("b.zip", id: "beta", ["shared.txt": [3]]))
        #expect(Array(try store.contents(at: "only-a")) == [2])
        do {
            _ = try store.contents(at: "shared.txt")
            Issue.record("ambiguous lookup succeeded")
        } catch StoreError.ambiguousPath(let path, let packs) {
            #expect(path == "shared.txt" && packs == ["alpha", "beta"])
        }
        #expect(Array(try store.contents(at: "shared.txt", inPack: "beta")) == [3])
        try store.remove(pack: "beta")
        #expect(Array(try store.contents(at: "shared.txt")) == [1])
    }

    @Test func listingByPackAndDirectory() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("p.zip", id: "p", ["a/1": [1], "a/2": [2, 2], "ab": [3], "b/1": [4]]))
        #expect(try store.members(ofPack: "p").map(\.path) == ["a/1", "a/2", "ab", "b/1"])
        #expect(try store.members(ofPack: "p", under: "a").map(\.path) == ["a/1", "a/2"])
        #expect(try store.members(ofPack: "p", under: "a/").map(\.size) == [1, 2])
        #expect(try store.members(ofPack: "p", under: "c").isEmpty)
        #expect(throws: StoreError.self) { _ = try store.members(ofPack: "zz") }
    }

    @Test func plainZipInstallsOnDemandUnderItsFileStem() throws {
        let f = StoreFixture()
        let store = try f.store()
        let outcome = try store.install(packAt: try f.pack("Textures.zip", id: nil, ["t.bin": [9]]))
        #expect(outcome.record.id == "Textures")
        #expect(outcome.record.downloadPolicy == .onDemand)
        let named = try store.install(packAt: try f.pack("x y.zip", id: nil, ["t.bin": [8]]), id: "renamed")
        #expect(named.record.id == "renamed")
        do {
            try store.install(packAt: f.root + "/x y.zip")
            Issue.record("a file stem with a space became an ID")
        } catch StoreError.invalidPackID(let id, let reason) {
            #expect(id == "x y" && reason == .derivedFromFileName(.badCharacter))
        }
    }

    @Test func recordedIDCannotBeOverridden() throws {
        let f = StoreFixture()
        let store = try f.store()
        let pack = try f.pack("p.zip", id: "recorded", ["a": [1]])
        do {
            try store.install(packAt: pack, id: "other")
            Issue.record("installed under another ID")
        } catch StoreError.invalidPackID(let id, _) {
            #expect(id == "other")
        }
        #expect(try store.allPackRecords().isEmpty)
    }

    @Test func policyAndPlatformsComeFromTheRecordedManifest() throws {
        let f = StoreFixture()
        let store = try f.store()
        let pack = try f.pack("p.zip", id: "p", policy: .essential([.firstInstallation]), ["a": [1]])
        let record = try store.install(packAt: pack).record
        #expect(record.downloadPolicy == .essential([.firstInstallation]))
        #expect(record.platforms == [.linux])
        #expect(try store.packRecord("p") == record)
    }
}
