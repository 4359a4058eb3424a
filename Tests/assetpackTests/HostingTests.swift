import Foundation
import Testing
import AssetPacks
import TestSupport

/// The hosting path end to end, against both hosts a published directory
/// meets: `package` → `publish --sign` → `assetpack serve` or nginx (with
/// `contrib/nginx`) on 127.0.0.1 → curl. Every file arrives byte for byte,
/// the fetched catalog verifies against the public key (and a catalog
/// altered in transit does not), and Range requests answer exactly the
/// asked bytes.
@Suite(.timeLimit(.minutes(4)))
struct HostingTests {
    enum Host: String, CaseIterable, CustomTestStringConvertible {
        case serve, nginx
        var testDescription: String { rawValue }
    }

    /// A published directory of three signed packs, one of them large
    /// enough (4 MiB of noise, stored) that ranges fall inside member data.
    final class Published {
        let site: PublishCommandTests.Site
        let mirror = TemporaryDirectory("assetpack-hosting-mirror")

        init() throws {
            site = try PublishCommandTests.Site()
            try site.dir.write("src/Media/files/noise.bin", noise(4 << 20, seed: 7))
            let packs = [try site.pack("Tutorial", "intro"), try site.pack("com.example.Levels", "levels"),
                         try site.pack("Media", "media")]
            let r = try site.publish(packs + ["--sign", site.key])
            guard r.status == 0 else { throw TestFailure("publish: \(r.stderr)") }
        }

        /// Starts `host` serving the published directory; the value keeps it running.
        func start(_ host: Host) throws -> (url: String, server: AnyObject) {
            switch host {
            case .serve:
                let s = try ServeHost(root: site.out)
                return (s.baseURL, s)
            case .nginx:
                let n = try NginxHost(root: site.out)
                return (n.baseURL, n)
            }
        }

        func published(_ name: String) throws -> [UInt8] { try site.dir.read("out/" + name) }
    }

    @Test(arguments: Host.allCases)
    func everyPublishedFileArrivesByteExactAndTheCatalogVerifies(_ host: Host) throws {
        let p = try Published()
        let (url, server) = try p.start(host)
        defer { withExtendedLifetime(server) {} }
        let catalogBytes = try Curl.fetch(url + "/catalog.json")
        let signature = try Curl.fetch(url + "/catalog.json.sig")
        #expect(catalogBytes.status == 200 && signature.status == 200)
        #expect(catalogBytes.body == (try p.published("catalog.json")))
        #expect(signature.body == (try p.published("catalog.json.sig")))

        // The client's check: the fetched catalog verifies against the key.
        let key = try AssetPackPublicKey.load(path: p.site.pub)
        let state = TemporaryDirectory("assetpack-hosting-trust")
        let verifier = AssetPackCatalogVerifier(publicKey: key, stateDirectory: state.path)
        let catalog = try verifier.accept(catalog: Data(catalogBytes.body), signature: Data(signature.body),
                                          source: url + "/catalog.json")
        #expect(catalog.packs.map(\.id) == ["Media", "Tutorial", "com.example.Levels"])

        // Every pack the catalog names, fetched at its URL, is the published
        // file, with the catalog's size; a mirror of what arrived checks clean.
        try p.mirror.write("catalog.json", catalogBytes.body)
        try p.mirror.write("catalog.json.sig", signature.body)
        for entry in catalog.packs {
            let packURL = try #require(entry.url(relativeTo: URL(string: url + "/catalog.json")!))
            let got = try Curl.fetch(packURL.absoluteString)
            #expect(got.status == 200, "\(entry.id)")
            #expect(UInt64(got.body.count) == entry.size, "\(entry.id)")
            #expect(got.body == (try p.published(entry.url)), "\(entry.id)")
            try p.mirror.write(entry.url, got.body)
            // Its piece map and glue, beside it, arrive byte-exact too.
            let pieces = try #require(entry.pieces, "\(entry.id)")
            for name in [pieces.url, entry.url + ".glue"] {
                let file = try Curl.fetch(try #require(URL(string: name, relativeTo: URL(string: url + "/catalog.json")!)).absoluteString)
                let sent = try p.published(name)
                #expect(file.status == 200 && file.body == sent, "\(name)")
                try p.mirror.write(name, file.body)
            }
        }
        let check = try CLI.assetpack(["verify-published", p.mirror.path, "--key", p.site.pub])
        #expect(check.status == 0, "\(check.out)\(check.stderr)")

        // One byte altered on the way is refused as an invalid signature.
        var altered = catalogBytes.body
        altered[altered.count / 2] ^= 0x01
        #expect {
            _ = try verifier.accept(catalog: Data(altered), signature: Data(signature.body), source: url + "/catalog.json")
        } throws: { ($0 as? AssetPackError)?.code == .catalogSignatureInvalid }
    }

    @Test(arguments: Host.allCases)
    func rangeRequestsAnswerExactlyTheAskedBytes(_ host: Host) throws {
        let p = try Published()
        let (url, server) = try p.start(host)
        defer { withExtendedLifetime(server) {} }
        let catalog = try AssetPackCatalog.parse(Data(try p.published("catalog.json")), source: "catalog.json")
        let entry = try #require(catalog.entry(withID: "Media"))
        let whole = try p.published(entry.url)
        let packURL = url + "/" + entry.url
        let n = whole.count
        for (range, want) in [("0-99", whole[0 ..< 100]), ("\(n / 2)-\(n / 2 + 65_535)", whole[n / 2 ... n / 2 + 65_535]),
                              ("-1000", whole[(n - 1000)...]), ("\(n - 1)-", whole[(n - 1)...]),
                              ("\(n - 10)-\(n + 1_000_000)", whole[(n - 10)...])] {
            let r = try Curl.fetch(packURL, ["-r", range])
            #expect(r.status == 206, "\(range)")
            #expect(r.body == Array(want), "\(range)")
            #expect(r.headers["content-range"] == "bytes \(want.startIndex)-\(want.endIndex - 1)/\(n)", "\(range)")
        }
        let past = try Curl.fetch(packURL, ["-r", "\(n)-"])
        #expect(past.status == 416)
        #expect(past.headers["content-range"] == "bytes */\(n)")

        // Resuming: If-Range with the current ETag continues where asked;
        // with another validator the whole file comes back (200).
        let etag = try #require(try Curl.fetch(packURL, ["-I"]).headers["etag"])
        let resumed = try Curl.fetch(packURL, ["-r", "\(n - 4096)-", "-H", "If-Range: \(etag)"])
        #expect(resumed.status == 206)
        #expect(resumed.body == Array(whole[(n - 4096)...]))
        let restarted = try Curl.fetch(packURL, ["-r", "\(n - 4096)-", "-H", #"If-Range: "another""#])
        #expect(restarted.status == 200)
        #expect(restarted.body == whole)

        // The catalog revalidates: its ETag answers 304 with no body.
        let catalogETag = try #require(try Curl.fetch(url + "/catalog.json", ["-I"]).headers["etag"])
        let again = try Curl.fetch(url + "/catalog.json", ["-H", "If-None-Match: \(catalogETag)"])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
    }

    /// A catalog republished within the same second, at the same size (only
    /// the sequence number's last digit differs), is a new validator: the
    /// old ETag gets the new bytes (200), not 304. nginx's ETag is the
    /// modification second and the size, so the publisher dates a new
    /// catalog past the one it replaces.
    @Test(arguments: Host.allCases)
    func aCatalogRepublishedWithinTheSecondIsNotAnsweredAsUnchanged(_ host: Host) throws {
        let p = try Published()
        let (url, server) = try p.start(host)
        defer { withExtendedLifetime(server) {} }
        let before = try Curl.fetch(url + "/catalog.json")
        let etag = try #require(before.headers["etag"])
        let again = try p.site.publish([p.site.dir.file("Tutorial.zip"), "--sign", p.site.key])
        #expect(again.status == 0, "\(again.stderr)")
        let now = try p.published("catalog.json")
        #expect(now != before.body)
        let revalidated = try Curl.fetch(url + "/catalog.json", ["-H", "If-None-Match: \(etag)"])
        #expect(revalidated.status == 200)
        #expect(revalidated.body == now)
        #expect(revalidated.headers["etag"] != etag)
    }
}
