import Foundation
import Testing
@testable import AssetStore
import AssetArchive
import AssetIndex
import AssetSystem
import TestSupport

/// A real container with three packs: `damaged` (the target of each
/// injection), `witness` (must come through every repair byte-identical)
/// and `catalog` (installed from a catalog, so repair marks it for download).
final class MatrixFixture {
    let store: AssetStore
    // After `store`: fields are destroyed in declaration order, and the
    // directory must outlive the store's index, or another test's new
    // directory may get the freed inode while the index still claims it
    // (EBUSY, "already open").
    let scratch = TemporaryDirectory("assetpack-matrix")
    var container: String { scratch.container }
    var records: [String: PackRecord] = [:]

    let image = [0x89, 0x50, 0x4e, 0x47] + noise(70_000, seed: 21)
    let text = Array(String(repeating: "level data ", count: 3000).utf8)

    init() throws {
        store = try AssetStore(container: GroupContainer(path: scratch.container))
        for (id, catalog) in [("damaged", false), ("witness", false), ("catalog", true)] {
            let path = scratch.path + "/\(id).zip"
            try ArchiveWriter.write([
                .init(path: "\(id)/image.png", source: .bytes(image)),
                .init(path: "\(id)/level.json", source: .bytes(text)),
                .init(path: "shared-\(id).txt", source: .bytes(Array(id.utf8))),
            ], comment: PackDescription(id: id, downloadPolicy: .onDemand, platforms: [.linux]).archiveComment, to: path)
            records[id] = try store.install(packAt: path, catalogVersion: catalog ? "7" : nil,
                                            source: catalog ? "http://127.0.0.1:9/catalog.zip" : nil).record
        }
    }

    func archivePath(_ id: String) -> String { container + "/packs/" + records[id]!.archiveName }

    /// Content hashes of every file in the container but LMDB's lock file.
    func fileHashes() throws -> [String: String] {
        var result: [String: String] = [:]
        let e = FileManager.default.enumerator(atPath: container)
        while let name = e?.nextObject() as? String {
            let path = container + "/" + name
            guard name != "index/lock.mdb", (try FileDescriptor.status(of: path))?.isRegularFile == true else { continue }
            let bytes = try FileDescriptor.open(path).readToEnd()
            result[name] = bytes.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) }
        }
        return result
    }

    /// Runs `assetpack verify --json` with `args`; returns status and codes.
    func verify(_ args: [String]) throws -> (status: Int32, codes: Set<String>, json: [String: Any]) {
        let r = try CLI.assetpack(["verify", "--json", "--container", container] + args)
        let json = (try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]) ?? [:]
        let codes = Set(((json["findings"] as? [[String: Any]]) ?? []).compactMap { $0["code"] as? String })
        return (r.status, codes, json)
    }

    func flip(_ path: String, at offset: Int64) throws {
        let fd = try FileDescriptor.open(path, .readWrite)
        var byte = try fd.read(count: 1, at: offset)
        byte[0] ^= 0x5a
        try fd.write(byte, at: offset)
    }

    func member(_ id: String, _ path: String) throws -> MemberRecord {
        try store.snapshot { (txn) throws(StoreError) in
            MemberRecord(try indexCall { () throws(LMDBError) in try txn.get(store.members, key: IndexSchema.memberKey(pack: id, path: path)) }!)!
        }
    }

    /// Changes the index directly, as damage would.
    func edit(_ body: (borrowing WriteTransaction, AssetStore) throws(LMDBError) -> Void) throws {
        try store.update { (txn) throws(StoreError) in
            try indexCall { () throws(LMDBError) in try body(txn, store) }
        }
    }
}

/// A damage, how to inject it, and what verify must say about it.
struct Damage: Sendable, CustomStringConvertible {
    let name: String
    /// Findings verify must report (exactly).
    let codes: Set<String>
    /// True when every finding is reclaimable (exit 0 before and after).
    var reclaimableOnly = false
    var deep = false
    /// Whether `damaged` is still installed and readable after repair.
    var damagedSurvives = false
    var description: String { name }
}

@Suite(.serialized) struct CorruptionMatrixTests {
    static let damages: [Damage] = [
        Damage(name: "flip-stored-byte", codes: ["pack.archive-sha256", "member.crc-mismatch"], deep: true),
        Damage(name: "flip-deflated-byte", codes: ["pack.archive-sha256", "member.crc-mismatch"], deep: true),
        Damage(name: "truncate-archive", codes: ["pack.archive-size"]),
        Damage(name: "delete-archive", codes: ["pack.archive-missing"]),
        Damage(name: "orphan-archive", codes: ["archive.orphan"], damagedSurvives: true),
        Damage(name: "edit-member-record", codes: ["member.record-mismatch"], damagedSurvives: true),
        Damage(name: "delete-member-record", codes: ["member.missing", "paths.extra"], damagedSurvives: true),
        Damage(name: "garble-pack-record", codes: ["pack.record-damaged"], damagedSurvives: true),
        Damage(name: "delete-path-entry", codes: ["paths.missing"], damagedSurvives: true),
        Damage(name: "path-entry-names-a-stranger", codes: ["paths.mismatch"], damagedSurvives: true),
        Damage(name: "path-entry-repeats-a-pack", codes: ["paths.mismatch"], damagedSurvives: true),
        Damage(name: "orphan-member-records", codes: ["member.orphan"], damagedSurvives: true),
        Damage(name: "delete-schema", codes: ["index.schema-missing"], damagedSurvives: true),
        Damage(name: "staging-leftover", codes: ["staging.leftover"], reclaimableOnly: true, damagedSurvives: true),
        Damage(name: "uncommitted-archive", codes: ["archive.uncommitted", "staging.leftover"], reclaimableOnly: true, damagedSurvives: true),
        Damage(name: "cache-leftover", codes: ["cache.leftover"], reclaimableOnly: true, damagedSurvives: true),
        Damage(name: "lock-orphan", codes: ["lock.orphan"], reclaimableOnly: true, damagedSurvives: true),
        Damage(name: "old-layout-lock", codes: ["lock.old-layout"], reclaimableOnly: true, damagedSurvives: true),
        Damage(name: "journal-without-staging", codes: ["journal.missing-staging", "journal.orphan-download"], reclaimableOnly: true, damagedSurvives: true),
        Damage(name: "unknown-staging-file", codes: ["staging.unknown"], reclaimableOnly: true, damagedSurvives: true),
        Damage(name: "stale-reader", codes: ["lmdb.stale-reader"], reclaimableOnly: true, damagedSurvives: true),
    ]

    func inject(_ damage: Damage, into f: MatrixFixture) throws {
        let archive = f.archivePath("damaged")
        switch damage.name {
        case "flip-stored-byte":
            try f.flip(archive, at: Int64(try f.member("damaged", "damaged/image.png").dataOffset) + 1000)
        case "flip-deflated-byte":
            try f.flip(archive, at: Int64(try f.member("damaged", "damaged/level.json").dataOffset) + 20)
        case "truncate-archive":
            try FileDescriptor.open(archive, .readWrite).resize(to: 5000)
        case "delete-archive":
            try FileSystem.unlink(archive)
        case "orphan-archive":
            try FileDescriptor.open(f.container + "/packs/stray.zip", [.writeOnly, .create]).write(noise(3000, seed: 4))
        case "edit-member-record":
            var m = try f.member("damaged", "damaged/level.json")
            m.dataOffset += 1
            let value = m.encodedForTest
            try f.edit { txn, s throws(LMDBError) in try txn.put(s.members, key: IndexSchema.memberKey(pack: "damaged", path: "damaged/level.json"), value: value) }
        case "delete-member-record":
            try f.edit { txn, s throws(LMDBError) in _ = try txn.delete(s.members, key: IndexSchema.memberKey(pack: "damaged", path: "damaged/level.json")) }
        case "garble-pack-record":
            try f.edit { txn, s throws(LMDBError) in try txn.put(s.packs, key: "damaged", value: [9, 9, 9]) }
        case "delete-path-entry":
            try f.edit { txn, s throws(LMDBError) in _ = try txn.delete(s.paths, key: "shared-damaged.txt") }
        case "path-entry-names-a-stranger":
            // Witness holds no such member: as many pairs as records, one of them false.
            try f.edit { txn, s throws(LMDBError) in try txn.put(s.paths, key: "shared-damaged.txt", value: Array("damaged\0witness".utf8)) }
        case "path-entry-repeats-a-pack":
            try f.edit { txn, s throws(LMDBError) in try txn.put(s.paths, key: "shared-damaged.txt", value: Array("damaged\0damaged".utf8)) }
        case "orphan-member-records":
            let value = try f.member("damaged", "damaged/level.json").encodedForTest
            try f.edit { txn, s throws(LMDBError) in try txn.put(s.members, key: IndexSchema.memberKey(pack: "ghost", path: "g.txt"), value: value) }
        case "delete-schema":
            try f.edit { txn, s throws(LMDBError) in _ = try txn.delete(s.meta, key: IndexSchema.schemaKey) }
        case "staging-leftover":
            try FileDescriptor.open(f.container + "/staging/pack.1234abcd.install", [.writeOnly, .create]).write(noise(100, seed: 1))
        case "uncommitted-archive":
            // A writer killed between linking into packs/ and committing.
            let name = IndexSchema.archiveName(pack: "damaged", archiveKey: 0x1234)
            try FileDescriptor.open(f.container + "/staging/" + name + ".install", [.writeOnly, .create]).write(noise(200, seed: 2))
            try FileSystem.link(f.container + "/staging/" + name + ".install", to: f.container + "/packs/" + name)
        case "cache-leftover":
            try FileDescriptor.open(f.container + "/cache/extracted.bin", [.writeOnly, .create]).write([1])
        case "lock-orphan":
            try FileDescriptor.open(f.container + "/locks/packs/ghost.lock", [.writeOnly, .create]).write([])
        case "old-layout-lock":
            // A pack lock of the layout before locks/packs/.
            try FileDescriptor.open(f.container + "/locks/damaged.lock", [.writeOnly, .create]).write([])
        case "journal-without-staging":
            let entry = JournalEntry(pack: "witness", state: .downloading, url: "http://127.0.0.1:9/w.zip", catalogVersion: "2",
                                     stagingName: "witness.1.download", expectedSize: 10, sha256: [])
            try f.edit { txn, s throws(LMDBError) in try txn.put(s.journal, key: "witness", value: entry.encoded) }
            try FileDescriptor.open(f.container + "/staging/other.2.download", [.writeOnly, .create]).write([1])
        case "unknown-staging-file":
            try FileDescriptor.open(f.container + "/staging/notes.txt", [.writeOnly, .create]).write([1])
        case "stale-reader":
            #expect(try PythonPeer.leaveStaleReader(in: f.container + "/index") != nil, "python3 left no stale reader")
        default:
            Issue.record("unknown damage \(damage.name)")
        }
    }

    @Test(arguments: damages)
    func verifyFindsAndRepairFixes(_ damage: Damage) throws {
        let f = try MatrixFixture()
        let witnessArchive = try FileDescriptor.open(f.archivePath("witness")).readToEnd()
        try inject(damage, into: f)
        let deep = damage.deep ? ["--deep"] : []

        // Verify reports exactly this damage and changes nothing.
        let before = try f.fileHashes()
        let found = try f.verify(deep)
        #expect(found.codes == damage.codes, "\(damage.name): \(found.json["findings"] ?? "")")
        #expect(found.status == (damage.reclaimableOnly ? 0 : 4))
        #expect(try f.fileHashes() == before, "verify changed the container")
        // A dry run plans but changes nothing either.
        let dry = try f.verify(deep + ["--repair", "--dry-run"])
        #expect(!((dry.json["repairs"] as? [Any]) ?? []).isEmpty)
        #expect(try f.fileHashes() == before, "a dry run changed the container")

        // Repair, then a clean second verify.
        let repaired = try f.verify(deep + ["--repair"])
        #expect(repaired.status == (damage.reclaimableOnly ? 0 : 1), "\(repaired.json)")
        let after = try f.verify(["--deep"])
        #expect(after.status == 0 && after.codes.isEmpty, "\(damage.name) after repair: \(after.json["findings"] ?? "")")

        // The witness pack is untouched and readable; the damaged one is
        // readable (re-indexed) or gone, never wrong.
        #expect(try FileDescriptor.open(f.archivePath("witness")).readToEnd() == witnessArchive)
        let witness = try CLI.assetpack(["cat", "witness/image.png", "--container", f.container])
        #expect(witness.status == 0 && Array(witness.stdout) == f.image)
        let damaged = try CLI.assetpack(["cat", "damaged/level.json", "--pack", "damaged", "--container", f.container])
        if damage.damagedSurvives {
            #expect(damaged.status == 0 && Array(damaged.stdout) == f.text, "\(damaged.stderr)")
        } else {
            #expect(damaged.status == 1 && damaged.stderr.contains("not installed"))
            let quarantined = FileSystem.names(in: f.container + "/quarantine")
            #expect(damage.name == "delete-archive" || quarantined.contains { $0.hasPrefix(f.records["damaged"]!.archiveName) })
        }
    }

    @Test func damagedCatalogPackIsMarkedForDownload() throws {
        let f = try MatrixFixture()
        try f.flip(f.archivePath("catalog"), at: Int64(try f.member("catalog", "catalog/image.png").dataOffset) + 5)
        #expect(try f.verify(["--deep", "--repair"]).status == 1)
        let entry = try #require(try f.store.journalEntries().first { $0.pack == "catalog" })
        #expect(entry.state == .redownload && entry.url == "http://127.0.0.1:9/catalog.zip" && entry.catalogVersion == "7")
        #expect(try f.verify(["--deep"]).status == 0)
    }

    @Test func cleanContainerWithTenThousandMembersIsClean() throws {
        let s = TemporaryDirectory("assetpack-clean10k")
        let members = (0..<10_000).map { i in
            ArchiveWriter.Member(path: String(format: "dir%02d/file%05d.txt", i % 50, i), source: .bytes(Array("member \(i)".utf8)))
        }
        try ArchiveWriter.write(members, to: s.path + "/big.zip")
        #expect(try CLI.assetpack(["install", s.path + "/big.zip"], container: s.container).status == 0)
        let r = try CLI.assetpack(["verify", "--deep", "--json"], container: s.container)
        #expect(r.status == 0)
        let json = try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any]
        #expect((json?["findings"] as? [Any])?.isEmpty == true)
        #expect(json?["membersChecked"] as? Int == 10_000)
    }

    @Test func missingContainerIsAnOperationalErrorAndUsageIs16() throws {
        let s = TemporaryDirectory("assetpack-nocontainer")
        let r = try CLI.assetpack(["verify", "--container", s.path + "/absent"])
        #expect(r.status == 8)
        #expect(!FileManager.default.fileExists(atPath: s.path + "/absent"))
        #expect(try CLI.assetpack(["verify", "--bogus"]).status == 16)
        #expect(try CLI.assetpack(["verify", "extra-argument"]).status == 16)
    }
}

extension MemberRecord {
    var encodedForTest: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: MemberRecord.encodedSize)
        bytes.withUnsafeMutableBytes { encode(into: $0) }
        return bytes
    }
}
