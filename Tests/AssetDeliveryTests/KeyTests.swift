import Foundation
import Testing
import AssetDelivery
import TestSupport

/// Key files, and OpenSSL as an independent witness of the signatures.
@Suite struct KeyTests {
    let dir = TemporaryDirectory("keys")

    @Test func keyFilesRoundTripAndThePrivateOneIsOwnerOnly() throws {
        let key = try SigningKey.generate()
        try key.write(privateKeyTo: dir.file("k.key"), publicKeyTo: dir.file("k.pub"))
        let mode = try FileManager.default.attributesOfItem(atPath: dir.file("k.key"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try SigningKey.load(path: dir.file("k.key")).publicKey == key.publicKey)
        #expect(try PublicKey.load(path: dir.file("k.pub")) == key.publicKey)
        let text = try String(contentsOfFile: dir.file("k.pub"), encoding: .utf8)
        #expect(text == key.publicKey.description + "\n")
        #expect(text.hasPrefix("ed25519:") && text.count == 8 + 44 + 1)
        #expect(key.publicKey.keyID.count == 16)
    }

    /// When the public key file cannot be made, the private key just
    /// written is removed again: no secret left where nothing says so.
    @Test func aPrivateKeyWithoutItsPublicHalfIsNotLeftBehind() throws {
        let key = try SigningKey.generate()
        let missing = dir.file("no-such-directory/k.pub")
        #expect(throws: DeliveryError.system(.noSuchFile)) {
            try key.write(privateKeyTo: dir.file("k.key"), publicKeyTo: missing)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("k.key")))
    }

    @Test func refusesToReplaceKeyFiles() throws {
        let key = try SigningKey.generate()
        try Data("keep".utf8).write(to: URL(fileURLWithPath: dir.file("k.pub")))
        #expect(throws: DeliveryError.system(.fileExists)) {
            try key.write(privateKeyTo: dir.file("k.key"), publicKeyTo: dir.file("k.pub"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("k.key")))
        #expect(try String(contentsOfFile: dir.file("k.pub"), encoding: .utf8) == "keep")
    }

    @Test(arguments: ["", "ed25519:", "ed25519:AAAA", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE", "ed25519:" + String(repeating: "A", count: 43) + "=x"])
    func malformedPublicKeysAreRefused(text: String) {
        #expect(throws: DeliveryError.invalidKey(path: "p", problem: .malformedPublicKey,
                                                 detail: "not an Ed25519 public key (expected 'ed25519:' and the base64 of 32 bytes)")) {
            try PublicKey.parse(text, path: "p")
        }
    }

    @Test func malformedPrivateKeysAreRefused() throws {
        let pem = try SigningKey.generate().pem
        for text in ["", pem.replacingOccurrences(of: "PRIVATE KEY", with: "PUBLIC KEY"), String(pem.dropLast(40)),
                     "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n"] {
            #expect {
                try SigningKey.parse(text, path: "k")
            } throws: { error in
                guard case .invalidKey("k", .malformedPrivateKey, _) = error as? DeliveryError else { return false }
                return true
            }
        }
    }

    @Test(.enabled(if: Program.available("openssl")))
    func opensslVerifiesOurSignatureAndReadsOurKey() throws {
        let key = try SigningKey.generate()
        try key.write(privateKeyTo: dir.file("k.key"), publicKeyTo: dir.file("k.pub"))
        let catalog = Catalog(sequence: 3, published: CatalogTime(seconds: 1_796_117_400), expires: nil, packs: []).encoded()
        try dir.write("catalog.json", catalog)
        let line = String(decoding: CatalogSignature(signing: catalog, with: key).encoded, as: UTF8.self)
        let fields = line.dropLast().split(separator: " ")
        #expect(fields[1] == key.publicKey.keyID)
        try dir.write("sig.bin", Array(Data(base64Encoded: String(fields[2]))!))
        let pub = try Program.run("openssl", ["pkey", "-in", dir.file("k.key"), "-pubout", "-out", dir.file("pub.pem")])
        #expect(pub.status == 0, "\(pub.stderr)")
        let verify = try Program.run("openssl", ["pkeyutl", "-verify", "-pubin", "-inkey", dir.file("pub.pem"), "-rawin",
                                                 "-in", dir.file("catalog.json"), "-sigfile", dir.file("sig.bin")])
        #expect(verify.status == 0 && verify.out.contains("Signature Verified Successfully"), "\(verify.out) \(verify.stderr)")
        // The PEM public key openssl wrote reads as the same key.
        #expect(try PublicKey.load(path: dir.file("pub.pem")) == key.publicKey)
        // One altered byte and openssl refuses too.
        var altered = catalog
        altered[5] ^= 1
        try dir.write("catalog.json", altered)
        let refused = try Program.run("openssl", ["pkeyutl", "-verify", "-pubin", "-inkey", dir.file("pub.pem"), "-rawin",
                                                  "-in", dir.file("catalog.json"), "-sigfile", dir.file("sig.bin")])
        #expect(refused.status != 0)
    }

    @Test(.enabled(if: Program.available("openssl")))
    func weVerifyWhatOpensslSignsWithItsOwnKey() throws {
        #expect(try Program.run("openssl", ["genpkey", "-algorithm", "ed25519", "-out", dir.file("o.key")]).status == 0)
        let key = try SigningKey.load(path: dir.file("o.key"))
        let catalog = Catalog(sequence: 1, published: CatalogTime(seconds: 0), expires: nil, packs: []).encoded()
        try dir.write("catalog.json", catalog)
        let sign = try Program.run("openssl", ["pkeyutl", "-sign", "-inkey", dir.file("o.key"), "-rawin",
                                               "-in", dir.file("catalog.json"), "-out", dir.file("sig.bin")])
        #expect(sign.status == 0, "\(sign.stderr)")
        let raw = Array(try Data(contentsOf: URL(fileURLWithPath: dir.file("sig.bin"))))
        let file = CatalogSignature(lines: [.init(keyID: key.publicKey.keyID, signature: raw)])
        try file.check(catalog, by: key.publicKey, path: "catalog.json")
        // Ed25519 is deterministic: our signature is openssl's.
        #expect(CatalogSignature(signing: catalog, with: key) == file)
    }
}
