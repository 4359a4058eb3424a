import Foundation
import Testing
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

@Suite struct ReplaceAndRemoveTests {
    @Test func replacingSwapsVersionsAndUnlinksTheOldArchive() throws {
        let f = StoreFixture()
        let store = try f.store()
        let v1 = try store.install(packAt: try f.pack("v1.zip", id: "p", ["a": text(1000, "one "), "gone": [1]])).record
        let heldStored = try store.contents(at: "gone", inPack: "p")
        let v2 = try store.install(packAt: try f.pack("v2.zip", id: "p", ["a": text(1000, "two "), "new": [2]]))
        #expect(v2.change == .replaced)
        #expect(v2.record.generation == 2 && v2.record.version == "2")
        #expect(Array(try store.contents(at: "a", inPack: "p")) == text(1000, "two "))
        #expect(Array(try store.contents(at: "new")) == [2])
        #expect(throws: StoreError.self) { _ = try store.contents(at: "gone", inPack: "p") }
        #expect(throws: StoreError.self) { _ = try store.contents(at: "gone") }
        // The old archive is gone from packs/, but bytes already handed out stay valid.
        #expect(FileManager.default.fileExists(atPath: f.container.packsPath + "/" + v1.archiveName) == false)
        #expect(FileSystem.names(in: f.container.packsPath) == [v2.record.archiveName])
        #expect(Array(heldStored) == [1])
        #expect(try store.members(ofPack: "p").map(\.path) == ["a", "new"])
    }

    /// An update keeps, adds and drops members, some of them paths another
    /// pack also has: path-only lookups and the path index follow exactly,
    /// also over hundreds of members with dropped ones between kept ones.
    @Test func anUpdateDropsOnlyWhatTheNewVersionLacks() throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("q.zip", id: "q", ["shared": [9], "dropped-shared": [8]]))
        try store.install(packAt: try f.pack("v1.zip", id: "p", ["a": [1], "gone": [2], "shared": [3], "dropped-shared": [4]]))
        #expect(throws: StoreError.ambiguousPath("dropped-shared", packs: ["p", "q"])) { _ = try store.contents(at: "dropped-shared") }
        try store.install(packAt: try f.pack("v2.zip", id: "p", ["a": [5], "new": [6], "shared": [7]]))
        #expect(Array(try store.contents(at: "dropped-shared")) == [8])
        #expect(throws: StoreError.ambiguousPath("shared", packs: ["p", "q"])) { _ = try store.contents(at: "shared") }
        #expect(throws: StoreError.fileNotFound(path: "gone", pack: nil)) { _ = try store.contents(at: "gone") }
        #expect(Array(try store.contents(at: "new")) == [6])
        #expect(Array(try store.contents(at: "a", inPack: "p")) == [5])
        #expect(try store.members(ofPack: "p").map(\.path) == ["a", "new", "shared"])
        #expect(try store.verify().findings.isEmpty)

        // Every third member of 300 dropped, the others kept or changed, and 50 new.
        let v3 = Dictionary(uniqueKeysWithValues: (0..<300).map { ("m/\(1000 + $0)", [UInt8(truncatingIfNeeded: $0)]) })
        try store.install(packAt: try f.pack("v3.zip", id: "p", v3))
        let v4 = Dictionary(uniqueKeysWithValues: (0..<300).filter { $0 % 3 != 0 }.map { ("m/\(1000 + $0)", [UInt8(truncatingIfNeeded: $0 + 1)]) }
            + (300..<350).map { ("m/\(1000 + $0)", [1]) })
        try store.install(packAt: try f.pack("v4.zip", id: "p", v4))
        #expect(try store.members(ofPack: "p").map(\.path) == v4.keys.sorted())
        for (path, bytes) in v4 { #expect(Array(try store.contents(at: path)) == bytes, "\(path)") }
        #expect(throws: StoreError.fileNotFound(path: "m/1000", pack: nil)) { _ = try store.contents(at: "m/1000") }
        #expect(Array(try store.contents(at: "shared")) == [9])
        #expect(try store.verify().findings.isEmpty)
        try store.remove(pack: "p")
        #expect(try store.verify().findings.isEmpty)
        #expect(throws: StoreError.fileNotFound(path: "m/1001", pack: nil)) { _ = try store.contents(at: "m/1001") }
    }

    @Test func identicalArchiveIsANoOp() throws {
        let f = StoreFixture()
        let store = try f.store()
        let pack = try f.pack("p.zip", id: "p", ["a": [1, 2, 3]])
        let first = try store.install(packAt: pack)
        let again = try store.install(packAt: pack)
        #expect(again.change == .unchanged)
        #expect(again.record == first.record)
        #expect(FileSystem.names(in: f.container.packsPath) == [first.record.archiveName])
    }

    @Test func removeFreesTheArchiveAndForgetsTheMembers() throws {
        let f = StoreFixture()
        let store = try f.store()
        let record = try store.install(packAt: try f.pack("p.zip", id: "p", ["a": noise(100_000, seed: 1), "b/c": [1]])).record
        let held = try store.contents(at: "a", inPack: "p")
        try store.remove(pack: "p")
        #expect(FileSystem.names(in: f.container.packsPath).isEmpty)
        #expect(try store.packRecord("p") == nil)
        #expect(try store.allPackRecords().isEmpty)
        #expect(Array(held) == noise(100_000, seed: 1))
        do {
            _ = try store.contents(at: "a", inPack: "p")
            Issue.record("removed pack still readable")
        } catch StoreError.assetPackNotFound(let id) {
            #expect(id == "p")
        }
        do {
            try store.remove(pack: "p")
            Issue.record("removed twice")
        } catch StoreError.assetPackNotFound(let id) {
            #expect(id == "p")
        }
        let report = try store.verify(options: .init(deep: true))
        #expect(report.findings.isEmpty, "\(report.findings)")
        _ = record
    }

    @Test func aSecondStoreOnTheContainerSeesInstallsAndRemovals() throws {
        let f = StoreFixture()
        let writer = try f.store()
        let reader = try f.store()
        try writer.install(packAt: try f.pack("p.zip", id: "p", ["a": [7]]))
        #expect(Array(try reader.contents(at: "a", inPack: "p")) == [7])
        try writer.install(packAt: try f.pack("p2.zip", id: "p", ["a": [8]]))
        #expect(Array(try reader.contents(at: "a", inPack: "p")) == [8])
        try writer.remove(pack: "p")
        #expect(throws: StoreError.self) { _ = try reader.contents(at: "a", inPack: "p") }
    }

    @Test func removingAnInvalidIDIsRefused() throws {
        let f = StoreFixture()
        let store = try f.store()
        do {
            try store.remove(pack: "../etc")
            Issue.record("accepted")
        } catch StoreError.invalidPackID(let id, _) {
            #expect(id == "../etc")
        }
    }
}

@Suite struct DescriptorTests {
    func flags(_ fd: Int32) throws -> (flags: Int, pos: Int) {
        let info = try String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8)
        var flags = 0, pos = 0
        for line in info.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts[0] == "flags" { flags = Int(parts[1], radix: 8) ?? -1 }
            if parts[0] == "pos" { pos = Int(parts[1]) ?? -1 }
        }
        return (flags, pos)
    }

    @Test func storedMemberGivesTheArchiveAtItsOffset() throws {
        let f = StoreFixture()
        let store = try f.store()
        let image = [0x89, 0x50, 0x4e, 0x47] + noise(70_000, seed: 5)
        let record = try store.install(packAt: try f.pack("p.zip", id: "p", ["i.png": image])).record
        let d = try store.descriptor(for: "i.png", inPack: "p")
        #expect(d.source == .archive)
        #expect(d.length == Int64(image.count))
        #expect(d.offset % 4096 == 0)
        #expect(try d.descriptor.read(count: image.count, at: d.offset) == image)
        let (fl, pos) = try flags(d.descriptor.rawValue)
        #expect(fl & 0o3 == 0)            // O_RDONLY
        #expect(fl & 0o2000000 != 0)      // O_CLOEXEC
        #expect(Int64(pos) == d.offset)   // positioned at the member
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(d.descriptor.rawValue)")
        #expect(link == f.container.packsPath + "/" + record.archiveName)
    }

    @Test func deflatedMemberGivesASealedMemoryFile() throws {
        let f = StoreFixture()
        let store = try f.store()
        let body = text(30_000)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["t.txt": body]))
        let d = try store.descriptor(for: "t.txt")
        #expect(d.source == .memory && d.offset == 0 && d.length == Int64(body.count))
        #expect(try MemoryFile.seals(of: d.descriptor) & 0x0f == 0x0f)
        #expect(try d.descriptor.read(count: body.count + 10, at: 0) == body)
        #expect(try flags(d.descriptor.rawValue).flags & 0o3 == 0)
    }

    @Test func standaloneGivesExactlyTheMemberAtOffsetZero() throws {
        let f = StoreFixture()
        let store = try f.store()
        let image = noise(5_000, seed: 9)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["i.png": image]))
        let d = try store.descriptor(for: "i.png", inPack: "p", options: .standalone)
        #expect(d.offset == 0 && d.length == 5_000 && d.source == .memory)
        #expect(try d.descriptor.status().size == 5_000)
        #expect(try d.descriptor.readToEnd() == image)
    }

    @Test func descriptorOutlivesRemoval() throws {
        let f = StoreFixture()
        let store = try f.store()
        let image = noise(5_000, seed: 4)
        try store.install(packAt: try f.pack("p.zip", id: "p", ["i.png": image]))
        let d = try store.descriptor(for: "i.png", inPack: "p")
        try store.remove(pack: "p")
        #expect(try d.descriptor.read(count: image.count, at: d.offset) == image)
    }
}
