import Foundation
import Testing
import AssetArchive
import AssetStore
import AssetSystem
import TestSupport

/// The reuse source: installed members an update may copy, found by what
/// identifies their stored bytes, and copied with their SHA-256.
@Suite struct ReuseSourceTests {
    let level = (0 ..< 9000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    let music = (0 ..< 70_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }

    /// The candidates for the member at `path` in `pack`, asked under `askedPath`.
    func candidates(_ source: ReuseSource, like path: String, in pack: String, store: AssetStore,
                    askedPath: String? = nil) throws -> [ReuseSource.Candidate] {
        let r = try store.member(at: path, inPack: pack).record
        return source.candidates(method: r.method, crc32: r.crc32, length: r.size, storedSize: r.storedSize, path: askedPath ?? path)
    }

    func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] { Array(bytes).withUnsafeBytes { SHA256.hash($0) } }

    /// Copies `candidate` to a new file at offset 100 and returns the SHA-256 and the bytes copied.
    func copied(_ candidate: ReuseSource.Candidate, from source: ReuseSource, in f: StoreFixture) throws -> ([UInt8], [UInt8]) {
        let path = f.root + "/out-\(UUID().uuidString)"
        let out = try FileDescriptor.open(path, [.readWrite, .create, .exclusive], permissions: 0o644)
        let digest = try source.copy(candidate, to: out, at: 100)
        let bytes = try out.read(count: Int(candidate.storedSize) + 200, at: 0)
        #expect(bytes.count == 100 + Int(candidate.storedSize) && bytes.prefix(100).allSatisfy { $0 == 0 })
        return (digest, Array(bytes.dropFirst(100)))
    }

    @Test func membersAreFoundAcrossPacksAndUnderOtherNames() throws {
        let f = StoreFixture("reuse")
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "A", ["levels/1.bin": level, "readme.txt": text(5000)], compression: .deflated))
        try store.install(packAt: try f.pack("b.zip", id: "B", ["music.ogg": music, "copy/levels/1.bin": level], compression: .deflated))
        let source = try store.reuseSource()
        #expect(source.memberCount == 4)
        let archives = try store.allPackRecords().reduce(UInt64(0)) { $0 + $1.archiveSize }
        #expect(source.archiveBytes == archives)
        // A member moved between packs: its bytes in A are found from B's side and the other way round.
        let moved = try candidates(source, like: "music.ogg", in: "B", store: store)
        #expect(moved.map(\.pack) == ["B"] && moved.map(\.path) == ["music.ogg"])
        // Same bytes in both packs: the one at the same path comes first.
        let both = try candidates(source, like: "levels/1.bin", in: "A", store: store)
        #expect(both.map(\.pack) == ["A", "B"])
        let fromB = try candidates(source, like: "levels/1.bin", in: "A", store: store, askedPath: "copy/levels/1.bin")
        #expect(fromB.map(\.pack) == ["B", "A"] && fromB[0].path == "copy/levels/1.bin")
        // Renamed: no member has the path asked, the bytes are still found.
        let renamed = try candidates(source, like: "readme.txt", in: "A", store: store, askedPath: "docs/README")
        #expect(renamed.map(\.path) == ["readme.txt"])
        let record = try store.member(at: "readme.txt", inPack: "A").record
        #expect(renamed[0].archiveKey == record.archiveKey && renamed[0].dataOffset == record.dataOffset
                && renamed[0].storedSize == record.storedSize)
        // Anything else differing: nothing.
        #expect(source.candidates(method: record.method, crc32: record.crc32 ^ 1, length: record.size, storedSize: record.storedSize,
                                  path: "readme.txt").isEmpty)
        #expect(source.candidates(method: .stored, crc32: record.crc32, length: record.size, storedSize: record.storedSize,
                                  path: "readme.txt").isEmpty)
    }

    @Test func copyWritesTheStoredBytesAndReturnsTheirSHA256() throws {
        let f = StoreFixture("reuse-copy")
        let store = try f.store()
        let pack = try f.pack("a.zip", id: "A", ["music.ogg": music, "readme.txt": text(20_000)])
        try store.install(packAt: pack)
        let archive = try FileDescriptor.open(pack).readToEnd()
        let source = try store.reuseSource()
        for path in ["music.ogg", "readme.txt"] {
            let candidate = try #require(try candidates(source, like: path, in: "A", store: store).first)
            let (digest, bytes) = try copied(candidate, from: source, in: f)
            let expected = archive[Int(candidate.dataOffset) ..< Int(candidate.dataOffset + candidate.storedSize)]
            #expect(bytes == Array(expected))
            #expect(digest == sha256(expected) && digest.count == 32)
        }
        let readme = try store.member(at: "readme.txt", inPack: "A").record
        #expect(readme.method == .deflated && readme.storedSize < readme.size)
    }

    @Test func anArchiveReplacedOrRemovedAfterTheSnapshotStillCopies() throws {
        let f = StoreFixture("reuse-replaced")
        let store = try f.store()
        try store.install(packAt: try f.pack("v1.zip", id: "A", ["levels/1.bin": level, "music.ogg": music], compression: .stored))
        try store.install(packAt: try f.pack("b.zip", id: "B", ["other": [9, 9]]))
        let source = try store.reuseSource()
        let candidate = try #require(try candidates(source, like: "levels/1.bin", in: "A", store: store).first)
        let other = try #require(try candidates(source, like: "other", in: "B", store: store).first)
        let oldArchive = try #require(try store.packRecord("A")).archiveName
        try store.install(packAt: try f.pack("v2.zip", id: "A", ["levels/2.bin": music]))
        try store.remove(pack: "B")
        #expect(!FileManager.default.fileExists(atPath: f.container.packsPath + "/" + oldArchive))
        let (digest, bytes) = try copied(candidate, from: source, in: f)
        #expect(bytes == level && digest == sha256(level))
        #expect(try copied(other, from: source, in: f).1 == [9, 9])
        // A fresh snapshot has only the new version.
        let fresh = try store.reuseSource()
        #expect(fresh.memberCount == 1)
        #expect(fresh.candidates(method: .stored, crc32: level.withUnsafeBytes { CRC32.checksum($0) }, length: UInt64(level.count),
                                 storedSize: UInt64(level.count), path: "levels/1.bin").isEmpty)
    }

    @Test func aDamagedArchiveByteChangesTheSHA256AndIsNotHidden() throws {
        let f = StoreFixture("reuse-damaged")
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "A", ["levels/1.bin": level], compression: .stored))
        let source = try store.reuseSource()
        let candidate = try #require(try candidates(source, like: "levels/1.bin", in: "A", store: store).first)
        let archive = f.container.packsPath + "/" + (try #require(try store.packRecord("A"))).archiveName
        let fd = try FileDescriptor.open(archive, [.readWrite])
        let at = Int64(candidate.dataOffset) + 1234
        try fd.write([level[1234] ^ 0xff], at: at)
        let (digest, bytes) = try copied(candidate, from: source, in: f)
        var damaged = level
        damaged[1234] ^= 0xff
        #expect(bytes == damaged)
        #expect(digest == sha256(damaged) && digest != sha256(level))
    }

    @Test func aTruncatedOrMissingArchiveIsAnErrorNamingItOrSuppliesNothing() throws {
        let f = StoreFixture("reuse-truncated")
        let store = try f.store()
        try store.install(packAt: try f.pack("a.zip", id: "A", ["levels/1.bin": level]))
        try store.install(packAt: try f.pack("b.zip", id: "B", ["music.ogg": music]))
        let source = try store.reuseSource()
        let candidate = try #require(try candidates(source, like: "levels/1.bin", in: "A", store: store).first)
        let archive = f.container.packsPath + "/" + (try #require(try store.packRecord("A"))).archiveName
        try FileDescriptor.open(archive, [.readWrite]).resize(to: Int64(candidate.dataOffset) + 10)
        let out = try FileDescriptor.open(f.root + "/out", [.readWrite, .create, .exclusive], permissions: 0o644)
        #expect(throws: StoreError.archiveMissing(pack: "A", path: archive)) { _ = try source.copy(candidate, to: out, at: 0) }
        // An archive gone before the snapshot: that pack supplies nothing, the others do.
        try FileSystem.unlink(archive)
        let without = try store.reuseSource()
        #expect(without.memberCount == 1)
        #expect(try candidates(without, like: "music.ogg", in: "B", store: store).count == 1)
        #expect(throws: StoreError.archiveMissing(pack: "A", path: "A.\(String(format: "%016llx", candidate.archiveKey)).zip")) {
            _ = try without.copy(candidate, to: out, at: 0)
        }
    }
}
