import Foundation
import Testing
import AssetPacks
import TestSupport

/// The catalog and trust surface as a program meets it, with `import
/// AssetPacks` alone: each refusal its own code (and reason).
@Suite struct CatalogTrustTests {
    let dir = TemporaryDirectory("catalog-trust")
    let key: AssetPackSigningKey
    let source = "https://cdn.example.com/catalog.json"
    let now = Date(timeIntervalSince1970: 1_796_117_400)

    init() throws { key = try AssetPackSigningKey.generate() }

    var verifier: AssetPackCatalogVerifier {
        AssetPackCatalogVerifier(publicKey: key.publicKey, container: .init(path: dir.file("container")))
    }

    func catalog(_ sequence: UInt64, expires: Date? = nil, id: String = "Tutorial", channel: String? = "default") -> Data {
        AssetPackCatalog(sequence: sequence, published: now, expires: expires, packs: [
            .init(id: id, version: 2, size: 5, sha256: String(repeating: "c", count: 64), downloadPolicy: .essential([.firstInstallation]),
                  platforms: [.linux], url: "Tutorial-cccccccccccc.zip"),
        ], channel: channel).encoded()
    }

    func refusal(_ bytes: Data, _ signature: Data?, with verifier: AssetPackCatalogVerifier? = nil) -> AssetPackError? {
        do {
            _ = try (verifier ?? self.verifier).accept(catalog: bytes, signature: signature, source: source, now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test func eachRefusalHasItsOwnCodeAndReason() throws {
        let good = catalog(5)
        #expect(try verifier.accept(catalog: good, signature: key.signature(for: good), source: source, now: now).sequence == 5)
        #expect(try verifier.acceptedSequence(source: source) == 5)
        #expect(try AssetPackCatalogVerifier(publicKey: key.publicKey, container: .init(path: dir.file("container")))
            .acceptedSequence(source: source) == 5)

        var altered = good
        altered[altered.count - 3] ^= 1
        let other = try AssetPackSigningKey.generate()
        let old = catalog(4), same = catalog(5, id: "Other"), expired = catalog(6, expires: now.addingTimeInterval(-60))
        let future = Data(#"{"format":2}"#.utf8)
        let cases: [(AssetPackError?, AssetPackError.Code, AssetPackError.Reason)] = [
            (refusal(good, nil), .catalogUnsigned, .unspecified),
            (refusal(good, other.signature(for: good)), .catalogKeyMismatch, .unspecified),
            (refusal(altered, key.signature(for: good)), .catalogSignatureInvalid, .signatureMismatch),
            (refusal(good, Data("ed25519 xyz\n".utf8)), .catalogSignatureInvalid, .malformedSignature),
            (refusal(old, key.signature(for: old)), .catalogRollback, .olderSequence),
            (refusal(same, key.signature(for: same)), .catalogRollback, .sequenceReused),
            (refusal(expired, key.signature(for: expired)), .catalogExpired, .unspecified),
            (refusal(future, key.signature(for: future)), .unsupportedCatalogFormat, .unspecified),
        ]
        for (error, code, reason) in cases {
            #expect(error?.code == code && error?.reason == reason, "\(String(describing: error)) is not \(code)/\(reason)")
            #expect(error?.path?.hasPrefix(source) == true)
            #expect(error.map { !$0.message.contains("\n") } == true)
        }
        #expect(Set(cases.map { "\($0.1)/\($0.2)" }).count == cases.count)
        #expect(try verifier.acceptedSequence(source: source) == 5)
    }

    @Test func aBadCatalogNamesTheFieldAndReason() {
        var text = String(decoding: catalog(1), as: UTF8.self)
        text = text.replacingOccurrences(of: String(repeating: "c", count: 64), with: "C")
        do {
            _ = try AssetPackCatalog.parse(Data(text.utf8), source: "c.json")
            Issue.record("accepted a bad SHA-256")
        } catch {
            #expect(error.code == .invalidCatalog && error.reason == .catalogBadSHA256)
            #expect(error.field == "packs[0].sha256" && error.path == "c.json")
        }
    }

    @Test func theCatalogRoundTripsThroughItsBytes() throws {
        let bytes = catalog(3, expires: now.addingTimeInterval(86_400))
        let parsed = try AssetPackCatalog.parse(bytes, source: "c")
        #expect(parsed.encoded() == bytes)
        #expect(parsed.expires == now.addingTimeInterval(86_400))
        #expect(parsed.entry(withID: "Tutorial")?.downloadPolicy == .essential([.firstInstallation]))
    }

    @Test func publishRefusalsHaveTheirReasons() throws {
        let content = dir.directory("content")
        try dir.write("content/a.txt", Array("a".utf8))
        func pack(_ name: String, version: UInt64?) throws -> String {
            let manifest = AssetPackManifest(assetPackID: "Tutorial", downloadPolicy: .onDemand,
                                             fileSelectors: [.file("a.txt", compression: .automatic)], platforms: [], version: version)
            try Packager.package(manifest, root: content, manifestPath: "m.json", output: dir.file(name))
            return dir.file(name)
        }
        let site = dir.file("site")
        let v3 = try pack("v3.zip", version: 3)
        #expect(try AssetPackFile.inspect(at: v3).version == 3)
        _ = try AssetPackPublisher.publish(packsAt: [v3], to: site, options: .init(signingKey: key))
        func reason(_ paths: [String], _ options: AssetPackPublisher.Options) -> AssetPackError.Reason? {
            do {
                _ = try AssetPackPublisher.publish(packsAt: paths, to: site, options: options)
                return nil
            } catch {
                return error.code == .publishRefused ? error.reason : nil
            }
        }
        #expect(reason([try pack("v2.zip", version: 2)], .init(signingKey: key)) == .versionBackwards)
        try dir.write("content/a.txt", Array("b".utf8))
        #expect(reason([try pack("v3b.zip", version: 3)], .init(signingKey: key)) == .versionReused)
        #expect(reason([v3, try pack("v4.zip", version: 4)], .init(signingKey: key)) == .duplicatePackInPublish)
        #expect(reason([v3], .init(signingKey: try AssetPackSigningKey.generate())) == .signedByOtherKey)
        #expect(reason([v3], .init()) == .signatureRequired)
        #expect(reason([v3], .init(signingKey: key, baseURL: "ftp://x")) == .badPublishArgument)
    }

    @Test func aManifestVersionMustBeAWholeNumberFromOne() {
        for bad in ["0", "-1", "1.5", "1e2", "\"2\"", "9007199254740992"] {
            let text = #"{"assetPackID":"A","downloadPolicy":{"onDemand":{}},"fileSelectors":[{"file":"a"}],"version":"# + bad + "}"
            do {
                _ = try AssetPackManifest.parse(Data(text.utf8), path: "m.json")
                Issue.record("accepted version \(bad)")
            } catch {
                #expect(error.code == .invalidManifest && error.reason == .invalidField && error.field == "version", "\(bad)")
            }
        }
    }
}
