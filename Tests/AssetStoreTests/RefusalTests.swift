import Foundation
import Testing
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

/// Refused installs leave the container exactly as it was.
@Suite struct RefusalTests {
    /// Installs a good pack, then tries `bad`; checks the error and that
    /// nothing in the container changed.
    func refuse(_ bad: (StoreFixture) throws -> String, id: String? = nil,
                check: (StoreError) -> Bool) throws {
        let f = StoreFixture()
        let store = try f.store()
        try store.install(packAt: try f.pack("good.zip", id: "good", ["a": [1, 2, 3]]))
        let before = containerFiles(f.container.path)
        let records = try store.allPackRecords()
        let path = try bad(f)
        do {
            try store.install(packAt: path, id: id)
            Issue.record("installed a bad pack")
        } catch {
            #expect(check(error), "unexpected error \(error)")
        }
        #expect(containerFiles(f.container.path) == before)
        #expect(try store.allPackRecords() == records)
        #expect(Array(try store.contents(at: "a", inPack: "good")) == [1, 2, 3])
        #expect(try store.verify(options: .init(deep: true)).findings.isEmpty)
    }

    @Test func notAZip() throws {
        try refuse({ f in
            let p = f.root + "/junk.zip"
            _ = FileManager.default.createFile(atPath: p, contents: Data(noise(1000, seed: 2)))
            return p
        }) { if case .archive = $0 { return true }; return false }
    }

    @Test func emptyFile() throws {
        try refuse({ f in
            let p = f.root + "/empty.zip"
            _ = FileManager.default.createFile(atPath: p, contents: Data())
            return p
        }) { if case .archive = $0 { return true }; return false }
    }

    @Test func truncatedPack() throws {
        try refuse({ f in
            let p = try f.pack("t.zip", id: "t", ["x": noise(10_000, seed: 1)])
            let bytes = try Data(contentsOf: URL(fileURLWithPath: p))
            try bytes.prefix(bytes.count - 30).write(to: URL(fileURLWithPath: p))
            return p
        }) { if case .archive = $0 { return true }; return false }
    }

    @Test func flippedDataByteFailsTheCRC() throws {
        try refuse({ f in
            let p = try f.pack("c.zip", id: "c", ["x.png": noise(10_000, seed: 1)])
            var bytes = try Data(contentsOf: URL(fileURLWithPath: p))
            let archive = try bytes.withUnsafeBytes { try ZipArchive.parse($0, name: p) }
            bytes[Int(archive.entries[0].dataOffset) + 100] ^= 0xff
            try bytes.write(to: URL(fileURLWithPath: p))
            return p
        }) { error in
            guard case .archive(let e) = error else { return false }
            return e.description.contains("x.png")
        }
    }

    @Test func directoryIsNotAFile() throws {
        try refuse({ f in f.root }) { if case .notAFile = $0 { return true }; return false }
    }

    @Test func missingFile() throws {
        try refuse({ f in f.root + "/absent.zip" }) { error in
            guard case .system(let e) = error else { return false }
            return e == .noSuchFile
        }
    }

    @Test func badRecordedManifest() throws {
        try refuse({ f in
            let p = f.root + "/m.zip"
            try ArchiveWriter.write([.init(path: "a", source: .bytes([1]))],
                                    comment: Array("AssetPacks-Manifest/1\n{\"assetPackID\": 5}".utf8), to: p)
            return p
        }) { if case .invalidRecordedManifest = $0 { return true }; return false }
    }

    /// The key check walks the members with the data check: the first
    /// member too long for the index is named, wherever it is.
    @Test func aLaterPathTooLongForTheIndex() throws {
        let long = String(repeating: "d/", count: 255) + "file"
        try refuse({ f in
            let p = f.root + "/later.zip"
            try ArchiveWriter.write([.init(path: "a", source: .bytes([1])), .init(path: long, source: .bytes([2])),
                                     .init(path: long + "2", source: .bytes([3]))], to: p)
            return p
        }, id: "later") { error in
            error == .invalidPath(long, reason: .tooLongToIndex(maximum: 511 - 1 - "later".utf8.count))
        }
    }

    /// A member's damaged data is reported before a path too long for the
    /// index, as when the keys were checked after the whole validation.
    @Test func damagedDataBeforeAPathTooLongForTheIndex() throws {
        let long = String(repeating: "d/", count: 255) + "file"
        try refuse({ f in
            let p = f.root + "/both.zip"
            try ArchiveWriter.write([.init(path: long, source: .bytes([2])),
                                     .init(path: "z", source: .bytes(Array("stored bytes".utf8)), compression: .stored)], to: p)
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: p)))
            let at = try #require(bytes.indices.first { bytes[$0...].starts(with: Array("stored bytes".utf8)) })
            bytes[at] ^= 0x20
            try Data(bytes).write(to: URL(fileURLWithPath: p))
            return p
        }, id: "both") { error in
            guard case .archive(.crcMismatch(_, "z", _, _)) = error else { return false }
            return true
        }
    }

    @Test func pathTooLongForTheIndex() throws {
        let long = String(repeating: "d/", count: 255) + "file"
        try refuse({ f in try f.pack("long.zip", id: "long", [long: [1]]) }) { error in
            guard case .invalidPath(let path, let reason) = error else { return false }
            return path == long && reason == .tooLongToIndex(maximum: 511 - 1 - "long".utf8.count)
        }
    }
}
