import Foundation
import Testing
import AssetArchive
import AssetDelivery
import AssetStore
import TestSupport

/// Catalogs fetched from a real nginx on 127.0.0.1: verified, revalidated
/// with `ETag`, answered from the container's cache offline.
@Suite struct CatalogFetcherTests {
    final class Site {
        let dir = TemporaryDirectory("catalog-fetch")
        var root: String { dir.file("site") }
        let key: SigningKey
        let container: GroupContainer
        let now = CatalogTime(seconds: 1_796_117_400)

        init() throws {
            key = try SigningKey.generate()
            container = GroupContainer(path: dir.file("container"))
        }

        func publish(_ id: String, _ content: String, signed: Bool = true) throws {
            let path = dir.file("\(id).zip")
            try ArchiveWriter.write([ArchiveWriter.Member(path: "a.txt", source: .bytes(Array(content.utf8)), compression: .automatic)],
                                    comment: PackDescription(id: id, downloadPolicy: .onDemand, platforms: [.linux]).archiveComment, to: path)
            _ = try Publisher.publish([path], to: root, options: .init(signingKey: signed ? key : nil, now: now))
        }

        func fetcher(_ base: String, key: PublicKey?) throws -> CatalogFetcher {
            var options = Downloader.Options()
            options.maximumAttempts = 2
            options.initialBackoff = 0.01
            return try CatalogFetcher(catalogURL: base + "/catalog.json", publicKey: key, store: AssetStore(container: container), options: options)
        }

        func cached(_ name: String, _ fetcher: CatalogFetcher) -> [UInt8]? {
            try? Array(Data(contentsOf: URL(fileURLWithPath: fetcher.cacheDirectory + "/" + name)))
        }
    }

    @Test func aSignedCatalogIsFetchedAndItsPacksDownload() throws {
        let s = try Site()
        try s.publish("A", "alpha")
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let fetcher = try s.fetcher(nginx.baseURL, key: s.key.publicKey)
        let (catalog, origin) = try fetcher.fetch(now: s.now)
        #expect(origin == .server)
        let entry = try #require(catalog.entry(withID: "A"))
        #expect(fetcher.url(of: entry) == nginx.baseURL + "/" + entry.url)
        #expect(s.cached("catalog.json", fetcher) == Array(try s.dir.read("site/catalog.json")))
        #expect(s.cached("catalog.json.sig", fetcher) == Array(try s.dir.read("site/catalog.json.sig")))
        let store = try AssetStore(container: s.container)
        try Downloader(store: store).download(DownloadRequest(entry, url: fetcher.url(of: entry)))
        #expect(Array(try store.contents(at: "a.txt", inPack: "A")) == Array("alpha".utf8))
    }

    @Test func aSecondFetchRevalidatesWithTheETagAndGetsNotModified() throws {
        let s = try Site()
        try s.publish("A", "alpha")
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let fetcher = try s.fetcher(nginx.baseURL, key: s.key.publicKey)
        let first = try fetcher.fetch(now: s.now)
        let etag = try #require(s.cached("etag", fetcher).map { String(decoding: $0, as: UTF8.self) })
        let second = try fetcher.fetch(now: s.now)
        #expect(second.origin == .notModified)
        #expect(second.catalog == first.catalog)
        let catalogGets = nginx.accessLog(count: 2) { $0.uri == "/catalog.json" }
        #expect(catalogGets.map(\.status) == [200, 304])
        #expect(catalogGets.map(\.ifNoneMatch) == ["", etag])
        // A new publish is fetched in full.
        try s.publish("B", "beta")
        let third = try fetcher.fetch(now: s.now)
        #expect(third.origin == .server && third.catalog.entry(withID: "B") != nil)
    }

    @Test func offlineTheCacheAnswers() throws {
        let s = try Site()
        try s.publish("A", "alpha")
        let nginx = try NginxHost(root: s.root)
        let fetcher = try s.fetcher(nginx.baseURL, key: s.key.publicKey)
        let online = try fetcher.fetch(now: s.now).catalog
        nginx.stop()
        let offline = try fetcher.fetch(now: s.now)
        guard case .cacheWhileOffline = offline.origin else {
            Issue.record("origin \(offline.origin)")
            return
        }
        #expect(offline.catalog == online)
        #expect(try fetcher.cachedCatalog(now: s.now) == online)
    }

    @Test func offlineWithoutACacheIsUnavailable() throws {
        let s = try Site()
        let port = try freeLoopbackPort()
        let fetcher = try s.fetcher("http://127.0.0.1:\(port)", key: nil)
        #expect {
            try fetcher.fetch(now: s.now)
        } throws: { error in
            guard case .catalogUnavailable(let url, .retriesExhausted(attempts: 2), _) = error as? DeliveryError else { return false }
            return url == fetcher.catalogURL
        }
        #expect(try fetcher.cachedCatalog(now: s.now) == nil)
    }

    @Test func aMissingCatalogIsNotFound() throws {
        let s = try Site()
        try FileManager.default.createDirectory(atPath: s.root, withIntermediateDirectories: true)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let fetcher = try s.fetcher(nginx.baseURL, key: nil)
        #expect {
            try fetcher.fetch(now: s.now)
        } throws: { error in
            guard case .catalogUnavailable(let url, .notFound(status: 404), _) = error as? DeliveryError else { return false }
            return url == fetcher.catalogURL
        }
    }

    @Test func aTamperedCatalogIsRefusedAndTheCacheStays() throws {
        let s = try Site()
        try s.publish("A", "alpha")
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let fetcher = try s.fetcher(nginx.baseURL, key: s.key.publicKey)
        let accepted = try fetcher.fetch(now: s.now).catalog
        let cachedBytes = s.cached("catalog.json", fetcher)
        // The sequence number edited by hand (to another length: nginx's
        // ETag is the modification second and the size).
        let original = String(decoding: try s.dir.read("site/catalog.json"), as: UTF8.self)
        let text = original.replacingOccurrences(of: "\"sequence\":1", with: "\"sequence\":19")
        #expect(text != original)
        try s.dir.write("site/catalog.json", text)
        #expect(throws: DeliveryError.catalogSignatureInvalid(path: fetcher.catalogURL, problem: .mismatch)) {
            try fetcher.fetch(now: s.now)
        }
        #expect(s.cached("catalog.json", fetcher) == cachedBytes)
        #expect(try fetcher.cachedCatalog(now: s.now) == accepted)
    }

    @Test func withAKeyAnUnsignedCatalogIsRefused() throws {
        let s = try Site()
        try s.publish("A", "alpha", signed: false)
        let nginx = try NginxHost(root: s.root)
        defer { nginx.stop() }
        let fetcher = try s.fetcher(nginx.baseURL, key: s.key.publicKey)
        #expect(throws: DeliveryError.catalogUnsigned(path: fetcher.catalogURL)) { try fetcher.fetch(now: s.now) }
        #expect(s.cached("catalog.json", fetcher) == nil)
        // Without a key it is accepted.
        #expect(try s.fetcher(nginx.baseURL, key: nil).fetch(now: s.now).origin == .server)
    }

    @Test(arguments: [
        ("A-0123456789ab.zip", "http://h:1/site/catalog.json", "http://h:1/site/A-0123456789ab.zip"),
        ("packs/A.zip", "http://h:1/catalog.json?x=1", "http://h:1/packs/A.zip"),
        ("https://cdn.example/A.zip", "http://h:1/site/catalog.json", "https://cdn.example/A.zip"),
    ])
    func entryURLsResolveAgainstTheCatalogsDirectory(url: String, base: String, expected: String) {
        #expect(CatalogFetcher.resolve(url, against: base) == expected)
    }

    @Test(arguments: [
        ("http://h:1/site/catalog.json", "http://h:1/site/catalog.json.sig"),
        ("http://h:1/site/catalog.json?v=3&x=y", "http://h:1/site/catalog.json.sig?v=3&x=y"),
        ("http://h:1/catalog.json?v=3#frag", "http://h:1/catalog.json.sig?v=3"),
        ("http://h:1/catalog.json#frag?v", "http://h:1/catalog.json.sig"),
    ])
    func theSignatureIsBesideTheCatalogsPathWithItsQuery(catalog: String, signature: String) {
        #expect(CatalogFetcher.signatureURL(of: catalog) == signature)
    }

    /// A catalog URL with a query fetches `catalog.json.sig?QUERY` (not
    /// `catalog.json?QUERY.sig`), as the server logs the requests.
    @Test func aCatalogURLWithAQueryFetchesTheSignatureBesideIt() throws {
        let s = try Site()
        try s.publish("A", "alpha")
        let server = try HostileServer(routes: [
            "/catalog.json": .init(body: try s.dir.read("site/catalog.json")),
            "/catalog.json.sig": .init(body: try s.dir.read("site/catalog.json.sig")),
        ])
        defer { server.stop() }
        var options = Downloader.Options()
        options.maximumAttempts = 1
        let fetcher = try CatalogFetcher(catalogURL: server.baseURL + "/catalog.json?v=7", publicKey: s.key.publicKey,
                                         store: AssetStore(container: s.container), options: options)
        let (catalog, origin) = try fetcher.fetch(now: s.now)
        #expect(origin == .server && catalog.entry(withID: "A") != nil)
        #expect(server.requests().map(\.target) == ["/catalog.json?v=7", "/catalog.json.sig?v=7"])
    }
}
