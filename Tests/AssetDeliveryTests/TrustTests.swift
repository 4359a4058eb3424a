import Foundation
import Testing
import AssetDelivery
import TestSupport

/// The client's checks, each refusal its own error; the accepted sequence
/// survives a new verifier on the same state.
@Suite struct TrustTests {
    let dir = TemporaryDirectory("trust")
    let key: SigningKey
    let now = CatalogTime(seconds: 1_796_117_400)
    let source = "https://example.com/packs/catalog.json"

    init() throws { key = try SigningKey.generate() }

    var state: String { dir.file("container/trust") }

    func verifier(_ publicKey: PublicKey? = nil) -> CatalogVerifier {
        CatalogVerifier(publicKey: publicKey ?? key.publicKey, stateDirectory: state)
    }

    /// A catalog with `sequence` (and an optional expiry) and its signature by `signer`.
    func signed(_ sequence: UInt64, expires: CatalogTime? = nil, by signer: SigningKey? = nil, note: String = "a") -> ([UInt8], [UInt8]) {
        let entry = Catalog.Entry(id: "Pack-\(note)", version: 1, size: 10, sha256: String(repeating: "0", count: 64),
                                  downloadPolicy: .onDemand, platforms: [], url: "p.zip")
        let bytes = Catalog(sequence: sequence, published: now, expires: expires, packs: [entry], channel: Catalog.defaultChannel).encoded()
        return (bytes, CatalogSignature(signing: bytes, with: signer ?? key).encoded)
    }

    @Test func acceptsASignedCatalogAndPersistsItsSequence() throws {
        let (bytes, sig) = signed(5)
        let catalog = try verifier().accept(catalog: bytes, signature: sig, source: source, now: now)
        #expect(catalog.sequence == 5)
        #expect(try verifier().acceptedRecord(source: source)?.sequence == 5)
        // The same catalog again is fine; a newer one is accepted and recorded.
        _ = try verifier().accept(catalog: bytes, signature: sig, source: source, now: now)
        let (newer, newerSig) = signed(6)
        #expect(try verifier().accept(catalog: newer, signature: newerSig, source: source, now: now).sequence == 6)
        #expect(try verifier().acceptedRecord(source: source)?.sequence == 6)
    }

    @Test func refusesAnUnsignedCatalog() {
        let (bytes, _) = signed(1)
        #expect(throws: DeliveryError.catalogUnsigned(path: source)) {
            try verifier().accept(catalog: bytes, signature: nil, source: source, now: now)
        }
    }

    @Test func refusesACatalogSignedByAnotherKey() throws {
        let other = try SigningKey.generate()
        let (bytes, sig) = signed(1, by: other)
        #expect(throws: DeliveryError.catalogKeyMismatch(path: source, expected: key.publicKey.keyID, found: [other.publicKey.keyID])) {
            try verifier().accept(catalog: bytes, signature: sig, source: source, now: now)
        }
    }

    @Test func refusesAnAlteredCatalogByteAnywhere() throws {
        let (bytes, sig) = signed(1)
        for index in [0, bytes.count / 2, bytes.count - 1] {
            var altered = bytes
            altered[index] ^= 0x01
            #expect(throws: DeliveryError.catalogSignatureInvalid(path: source, problem: .mismatch)) {
                try verifier().accept(catalog: altered, signature: sig, source: source, now: now)
            }
        }
        #expect(try verifier().acceptedRecord(source: source) == nil)
    }

    @Test func refusesAnAlteredSignature() throws {
        let (bytes, sig) = signed(1)
        let line = String(decoding: sig, as: UTF8.self).split(separator: " ")
        var raw = Array(Data(base64Encoded: String(line[2].dropLast()))!)
        raw[10] ^= 0x80
        let altered = Array("ed25519 \(line[1]) \(Data(raw).base64EncodedString())\n".utf8)
        #expect(throws: DeliveryError.catalogSignatureInvalid(path: source, problem: .mismatch)) {
            try verifier().accept(catalog: bytes, signature: altered, source: source, now: now)
        }
        // A byte of the file's text flipped so it no longer parses.
        var garbled = sig
        garbled[3] = UInt8(ascii: "?")
        #expect(throws: DeliveryError.catalogSignatureInvalid(path: source + ".sig", problem: .malformed)) {
            try verifier().accept(catalog: bytes, signature: garbled, source: source, now: now)
        }
    }

    @Test func refusesARollbackEvenFromANewVerifier() throws {
        let (v5, s5) = signed(5)
        let (v4, s4) = signed(4)
        _ = try verifier().accept(catalog: v5, signature: s5, source: source, now: now)
        // A fresh verifier (a restarted client) on the same state.
        #expect(throws: DeliveryError.catalogRollback(path: source, accepted: 5, offered: 4, problem: .olderSequence)) {
            try CatalogVerifier(publicKey: key.publicKey, stateDirectory: state).accept(catalog: v4, signature: s4, source: source, now: now)
        }
        #expect(try verifier().acceptedRecord(source: source)?.sequence == 5)
    }

    @Test func refusesTheSameSequenceWithOtherBytes() throws {
        let (a, sa) = signed(5, note: "a")
        let (b, sb) = signed(5, note: "b")
        _ = try verifier().accept(catalog: a, signature: sa, source: source, now: now)
        #expect(throws: DeliveryError.catalogRollback(path: source, accepted: 5, offered: 5, problem: .sequenceReused)) {
            try verifier().accept(catalog: b, signature: sb, source: source, now: now)
        }
    }

    @Test func refusesAnExpiredCatalog() throws {
        let expires = CatalogTime(seconds: now.seconds - 1)
        let (bytes, sig) = signed(1, expires: expires)
        #expect(throws: DeliveryError.catalogExpired(path: source, expires: expires, now: now)) {
            try verifier().accept(catalog: bytes, signature: sig, source: source, now: now)
        }
        // At the expiry instant it is still good.
        let (edge, edgeSig) = signed(2, expires: now)
        #expect(try verifier().accept(catalog: edge, signature: edgeSig, source: source, now: now).sequence == 2)
    }

    @Test func refusesASignedCatalogOfAnUnknownFormat() throws {
        let bytes = Array(#"{"format":2,"sequence":9}"#.utf8)
        let sig = CatalogSignature(signing: bytes, with: key).encoded
        #expect(throws: DeliveryError.unsupportedCatalogFormat(path: source, format: "2")) {
            try verifier().accept(catalog: bytes, signature: sig, source: source, now: now)
        }
    }

    @Test func withoutAKeyUnsignedCatalogsAreAcceptedButRollbackIsStillRefused() throws {
        let open = CatalogVerifier(publicKey: nil, stateDirectory: state)
        let (v3, _) = signed(3)
        let (v2, _) = signed(2)
        #expect(try open.accept(catalog: v3, signature: nil, source: source, now: now).sequence == 3)
        #expect(throws: DeliveryError.catalogRollback(path: source, accepted: 3, offered: 2, problem: .olderSequence)) {
            try open.accept(catalog: v2, signature: nil, source: source, now: now)
        }
        // The keyed state is apart from the unkeyed one.
        #expect(try verifier().acceptedRecord(source: source) == nil)
    }

    @Test func eachSourceHasItsOwnState() throws {
        let (v5, s5) = signed(5)
        let (v4, s4) = signed(4)
        _ = try verifier().accept(catalog: v5, signature: s5, source: source, now: now)
        #expect(try verifier().accept(catalog: v4, signature: s4, source: source + "?mirror", now: now).sequence == 4)
    }

    @Test func aDamagedTrustStateIsRefusedNotIgnored() throws {
        let (v5, s5) = signed(5)
        _ = try verifier().accept(catalog: v5, signature: s5, source: source, now: now)
        let record = try #require(FileManager.default.contentsOfDirectory(atPath: state).first { $0.hasSuffix(".json") })
        try Data("{\"format\":2}".utf8).write(to: URL(fileURLWithPath: state + "/" + record))
        #expect(throws: DeliveryError.invalidTrustState(path: state + "/" + record, detail: "a field is missing or malformed")) {
            try verifier().accept(catalog: v5, signature: s5, source: source, now: now)
        }
    }

    @Test func aRecordOfAnotherSourceUnderThisOnesNameIsRefused() throws {
        let (v5, s5) = signed(5)
        _ = try verifier().accept(catalog: v5, signature: s5, source: source, now: now)
        let first = try #require(FileManager.default.contentsOfDirectory(atPath: state).first { $0.hasSuffix(".json") })
        _ = try verifier().accept(catalog: v5, signature: s5, source: "mirror", now: now)
        let second = try #require(FileManager.default.contentsOfDirectory(atPath: state).first { $0.hasSuffix(".json") && $0 != first })
        try FileManager.default.removeItem(atPath: state + "/" + second)
        try FileManager.default.copyItem(atPath: state + "/" + first, toPath: state + "/" + second)
        #expect(throws: DeliveryError.invalidTrustState(path: state + "/" + second, detail: "it records another key, channel or source")) {
            try verifier().accept(catalog: v5, signature: s5, source: "mirror", now: now)
        }
    }

    @Test func aSignatureFileWithThePreviousCatalogsLineStillVerifiesTheOldCatalog() throws {
        let (old, oldSig) = signed(1)
        let (new, newSig) = signed(2)
        let both = CatalogSignature(lines: try CatalogSignature.parse(newSig, path: "s").lines + CatalogSignature.parse(oldSig, path: "s").lines)
        #expect(try verifier().accept(catalog: old, signature: both.encoded, source: source, now: now).sequence == 1)
        #expect(try verifier().accept(catalog: new, signature: both.encoded, source: source, now: now).sequence == 2)
    }

    @Test(arguments: ["", "ed25519 0011223344556677\n", "rsa 0011223344556677 AAAA\n", "ed25519 00112233 AAAA\n",
                      "ed25519 0011223344556677 AAAA\n", String(repeating: "ed25519 0011223344556677 " + String(repeating: "A", count: 86) + "==\n", count: 9)])
    func malformedSignatureFilesAreRefused(text: String) {
        #expect(throws: DeliveryError.catalogSignatureInvalid(path: "s", problem: .malformed)) {
            try CatalogSignature.parse(Array(text.utf8), path: "s")
        }
    }
}
