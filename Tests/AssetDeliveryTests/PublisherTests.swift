import Foundation
import Testing
import AssetArchive
import AssetDelivery
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
        #expect(throws: DeliveryError.store(.lockTimeout(path: site + "/" + Publisher.lockName, seconds: 0.3))) {
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
