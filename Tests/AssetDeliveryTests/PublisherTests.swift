import Foundation
import Testing
import AssetArchive
@testable import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// What `publish` refuses about the directory it publishes to, and its lock.
@Suite struct PublisherTests {
    let dir = TemporaryDirectory("publisher")
    var site: String { dir.file("site") }
    let now = CatalogTime(seconds: 1_796_117_400)

    func pack(_ id: String, _ content: String) throws -> String {
        let path = dir.file("\(id).zip")
        try ArchiveWriter.write([ArchiveWriter.Member(path: "a.txt", source: .bytes(Array(content.utf8)), compression: .automatic)],
                                comment: PackDescription(id: id, downloadPolicy: .onDemand, platforms: [.linux]).archiveComment, to: path)
        return path
    }

    func publish(_ paths: [String], key: SigningKey? = nil, lockTimeout: Double = 60) throws(DeliveryError) -> Publisher.Report {
        try Publisher.publish(paths, to: site, options: .init(signingKey: key, now: now, lockTimeout: lockTimeout))
    }

    @Test func aCatalogItCannotReadIsRefusedAndLeftAlone() throws {
        let p = try pack("A", "a")
        _ = try publish([p])
        try dir.write("site/catalog.json", Array("{\"format\":1,".utf8))
        #expect {
            try publish([p])
        } throws: { error in
            guard case .invalidCatalog(let path, nil, .notJSON, _) = error as? DeliveryError else { return false }
            return path == site + "/catalog.json"
        }
        try dir.write("site/catalog.json", Array("{\"format\":3}".utf8))
        #expect(throws: DeliveryError.unsupportedCatalogFormat(path: site + "/catalog.json", format: "3")) { try publish([p]) }
        #expect(try dir.read("site/catalog.json") == Array("{\"format\":3}".utf8))
    }

    @Test func aMalformedSignatureInTheDirectoryIsRefused() throws {
        let key = try SigningKey.generate()
        let p = try pack("A", "a")
        _ = try publish([p], key: key)
        try dir.write("site/catalog.json.sig", Array("garbage\n".utf8))
        #expect(throws: DeliveryError.catalogSignatureInvalid(path: site + "/catalog.json.sig", problem: .malformed)) {
            try publish([p], key: key)
        }
    }

    @Test func anotherPublishersLockTimesOut() throws {
        let p = try pack("A", "a")
        _ = try publish([p])
        let held = try FileLock(path: site + "/" + Publisher.lockName)
        let start = Date()
        let timeout = LockTimeout(lock: "the publishing lock", path: site + "/" + Publisher.lockName, seconds: 0.3,
                                  holder: LockHolder(pids: [getpid()]))
        #expect(throws: DeliveryError.store(.lockTimeout(timeout))) {
            try publish([p], lockTimeout: 0.3)
        }
        #expect(Date().timeIntervalSince(start) >= 0.25)
        _ = consume held
        #expect(try publish([p]).catalog.sequence == 2)
    }

    @Test func theSignatureFileSignsTheNewCatalogAndThePrevious() throws {
        let key = try SigningKey.generate()
        _ = try publish([try pack("A", "a")], key: key)
        let first = try dir.read("site/catalog.json")
        _ = try publish([try pack("B", "b")], key: key)
        let second = try dir.read("site/catalog.json")
        let signature = try CatalogSignature.parse(try dir.read("site/catalog.json.sig"), path: "sig")
        #expect(signature.lines.count == 2)
        try signature.check(first, by: key.publicKey, path: "c")
        try signature.check(second, by: key.publicKey, path: "c")
        // Only the newest two: a third publish drops the first catalog's line.
        _ = try publish([try pack("C", "c")], key: key)
        let third = try CatalogSignature.parse(try dir.read("site/catalog.json.sig"), path: "sig")
        #expect(third.lines.count == 2)
        #expect(throws: DeliveryError.catalogSignatureInvalid(path: "c", problem: .mismatch)) {
            try third.check(first, by: key.publicKey, path: "c")
        }
    }

    @Test func numbersAtTheirLargestAreRefusedNotWrapped() throws {
        let p = try pack("A", "a")
        let entry = Catalog.Entry(id: "A", version: Catalog.maximumInteger, size: 1, sha256: String(repeating: "0", count: 64),
                                  downloadPolicy: .onDemand, platforms: [], url: "A-000000000000.zip")
        try dir.write("site/catalog.json", Catalog(sequence: 3, published: now, expires: nil, packs: [entry]).encoded())
        #expect {
            try publish([p])
        } throws: { error in
            guard case .publishRefused(_, "A", .versionReused, _) = error as? DeliveryError else { return false }
            return true
        }
        try dir.write("site/catalog.json", Catalog(sequence: Catalog.maximumInteger, published: now, expires: nil, packs: []).encoded())
        #expect {
            try publish([p])
        } throws: { error in
            guard case .publishRefused(_, nil, .badArgument, _) = error as? DeliveryError else { return false }
            return true
        }
    }

    @Test func contentNamesAreRecognised() {
        #expect(Publisher.packID(ofContentName: "com.example-x-0123456789ab.zip") == "com.example-x")
        for name in ["A-0123456789AB.zip", "A-0123456789a.zip", "-0123456789ab.zip", "A-0123456789ab.zip.tmp", "A_0123456789ab.zip",
                     ".tmp-A-0123456789ab.zip"] {
            #expect(Publisher.packID(ofContentName: name) == nil, "\(name)")
        }
    }
}

/// The piece map and glue `publish` writes beside each pack, and how
/// `verify-published` checks them.
@Suite struct PublisherPieceMapTests {
    let dir = TemporaryDirectory("publisher-pieces")
    var site: String { dir.file("site") }
    let now = CatalogTime(seconds: 1_796_117_400)

    func pack(_ id: String, _ members: [String: [UInt8]], file: String? = nil) throws -> String {
        let path = dir.file("\(file ?? id).zip")
        try ArchiveWriter.write(members.map { ArchiveWriter.Member(path: $0.key, source: .bytes($0.value), compression: .automatic) },
                                comment: PackDescription(id: id, downloadPolicy: .onDemand, platforms: [.linux]).archiveComment, to: path)
        return path
    }

    func members(_ tag: String) -> [String: [UInt8]] {
        ["levels/1.bin": (0 ..< 70_000).map { UInt8(truncatingIfNeeded: $0 &* 11) }, "text/\(tag).txt": Array(String(repeating: tag, count: 500).utf8)]
    }

    @discardableResult
    func publish(_ paths: [String], baseURL: String? = nil, prune: Bool = false) throws -> Publisher.Report {
        try Publisher.publish(paths, to: site, options: .init(baseURL: baseURL, prune: prune, now: now))
    }

    func check() throws -> [PublishedDirectoryCheck.Finding] { try PublishedDirectoryCheck.check(site, key: nil).findings }

    @Test func eachPackGetsAPieceMapAndGlueTheCatalogNames() throws {
        let report = try publish([try pack("A", members("a")), try pack("B", members("b"))])
        for entry in report.catalog.packs {
            let pieces = try #require(entry.pieces)
            #expect(pieces.url == entry.url + ".pieces")
            let bytes = try dir.read("site/" + pieces.url)
            #expect(UInt64(bytes.count) == pieces.size && pieces.sha256 == bytes.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) })
            let map = try PieceMap.parse(bytes, path: pieces.url)
            try map.validate(against: entry)
            let (made, glue) = try PieceMap.makeWithGlue(archivePath: site + "/" + entry.url, pack: entry.id, version: entry.version)
            #expect(map == made && map.glue.url == entry.url + ".glue")
            #expect(try dir.read("site/" + map.glue.url) == glue)
        }
        // The catalog carries the references, and reads back with them.
        #expect(try Catalog.parse(try dir.read("site/catalog.json"), path: "c") == report.catalog)
        #expect(try check().isEmpty)
    }

    @Test func republishingWritesTheSameBytes() throws {
        let p = try pack("A", members("a"))
        let first = try publish([p])
        let name = try #require(first.catalog.packs.first?.url)
        let pieces = try dir.read("site/\(name).pieces")
        let glue = try dir.read("site/\(name).glue")
        try dir.write("site/\(name).glue", [0])
        let second = try publish([p])
        #expect(second.catalog.packs == first.catalog.packs)
        #expect(try dir.read("site/\(name).pieces") == pieces && dir.read("site/\(name).glue") == glue)
        // Elsewhere, the same bytes too.
        let other = try Publisher.publish([p], to: dir.file("other"), options: .init(now: CatalogTime(seconds: 1_800_000_000)))
        #expect(other.catalog.packs == first.catalog.packs)
        #expect(try dir.read("other/\(name).pieces") == pieces)
    }

    @Test func aBaseURLMakesThePiecesURLAbsoluteAndTheGlueStaysBesideIt() throws {
        let report = try publish([try pack("A", members("a"))], baseURL: "https://cdn.example/packs/")
        let entry = try #require(report.catalog.packs.first)
        let name = String(try #require(entry.url.split(separator: "/").last))
        #expect(entry.pieces?.url == "https://cdn.example/packs/\(name).pieces")
        #expect(try PieceMap.parse(try dir.read("site/\(name).pieces"), path: "p").glue.url == name + ".glue")
    }

    @Test func pruneRemovesThePiecesAndGlueOfPrunedPacks() throws {
        let v1 = try publish([try pack("A", members("one"), file: "v1")]).catalog.packs[0].url
        let v2 = try publish([try pack("A", members("two"), file: "v2")], prune: true)
        let kept = v2.catalog.packs[0].url
        #expect(Set(v2.changes.filter { $0.kind == .pruned }.map(\.file)) == [v1, v1 + ".pieces", v1 + ".glue"])
        let files = Set(FileSystem.names(in: site))
        #expect(files.isSuperset(of: [kept, kept + ".pieces", kept + ".glue"]))
        #expect(files.isDisjoint(with: [v1, v1 + ".pieces", v1 + ".glue"]))
    }

    /// Publishes A, lets `damage` change the site, and returns verify-published's findings about A.
    func findings(after damage: (_ entry: Catalog.Entry, _ map: PieceMap) throws -> Void) throws -> [PublishedDirectoryCheck.Finding] {
        let entry = try publish([try pack("A", members("a"))]).catalog.packs[0]
        let map = try PieceMap.parse(try dir.read("site/\(entry.url).pieces"), path: "p")
        try damage(entry, map)
        return try check()
    }

    /// Writes `map` as the entry's piece map and points the catalog at it, so that only what `map` says is wrong.
    func republishMap(_ map: PieceMap, for entry: Catalog.Entry) throws {
        let bytes = map.encoded()
        try dir.write("site/\(entry.url).pieces", bytes)
        var catalog = try Catalog.parse(try dir.read("site/catalog.json"), path: "c")
        catalog.packs[0].pieces = .init(url: entry.url + ".pieces", size: UInt64(bytes.count), sha256: bytes.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) })
        try dir.write("site/catalog.json", catalog.encoded())
    }

    func expectOneError(_ findings: [PublishedDirectoryCheck.Finding], file: String, containing text: String,
                        sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(findings.count == 1, "\(findings)", sourceLocation: sourceLocation)
        #expect(findings.first?.severity == .error && findings.first?.file == file && findings.first?.pack == "A", sourceLocation: sourceLocation)
        #expect(findings.first?.message.contains(text) == true, "\(findings)", sourceLocation: sourceLocation)
    }

    @Test func verifyPublishedFindsAMissingOrTamperedPieceMap() throws {
        var url = ""
        expectOneError(try findings { entry, _ in url = entry.url + ".pieces"; try FileSystem.unlink(site + "/" + url) }, file: url, containing: "missing")
        expectOneError(try findings { entry, _ in try dir.write("site/\(entry.url).pieces", Array("{}\n".utf8)) },
                       file: url, containing: "bytes, the reference gives")
        // A map whose reference is right but that does not parse, or describes another version.
        expectOneError(try findings { entry, map in
            var other = map
            other.version = 7
            try republishMap(other, for: entry)
        }, file: url, containing: "describes version 7")
        expectOneError(try findings { entry, map in
            var glued = map
            glued.glue.size += 1
            try republishMap(glued, for: entry)
        }, file: url, containing: "the glue is")
    }

    @Test func verifyPublishedFindsWrongRangesAndMemberHashes() throws {
        var url = ""
        expectOneError(try findings { entry, map in
            url = entry.url + ".pieces"
            var shifted = map
            let i = try #require(shifted.members.firstIndex { $0.path == "levels/1.bin" })
            shifted.members[i].offset -= 1
            try republishMap(shifted, for: entry)
        }, file: url, containing: "range")
        expectOneError(try findings { entry, map in
            var hashed = map
            hashed.members[0].sha256 = String(repeating: "0", count: 64)
            try republishMap(hashed, for: entry)
        }, file: url, containing: "SHA-256 \(String(repeating: "0", count: 64)), the pack file's is")
    }

    @Test func verifyPublishedFindsAMissingOrDamagedGlue() throws {
        var glue = ""
        expectOneError(try findings { entry, _ in glue = entry.url + ".glue"; try FileSystem.unlink(site + "/" + glue) }, file: glue, containing: "missing")
        expectOneError(try findings { entry, _ in
            var bytes = try dir.read("site/\(entry.url).glue")
            bytes[3] ^= 0xff
            try dir.write("site/\(entry.url).glue", bytes)
        }, file: glue, containing: "SHA-256")
        // Glue of the right size and SHA-256 by its reference, but not the pack file's bytes.
        let found = try findings { entry, map in
            var bytes = try dir.read("site/\(entry.url).glue")
            bytes[3] ^= 0xff
            try dir.write("site/\(entry.url).glue", bytes)
            var other = map
            other.glue.sha256 = bytes.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) }
            try republishMap(other, for: entry)
        }
        #expect(found.map(\.file) == [glue.dropLast(5) + ".pieces", glue], "\(found)")
        #expect(found.first?.message.hasPrefix("its glue reference") == true)
        #expect(found.last?.message == "is not the bytes between the pack file's members")
    }
}
