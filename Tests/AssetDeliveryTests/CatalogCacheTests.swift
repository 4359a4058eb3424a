import Foundation
import Testing
import AssetArchive
import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// The catalog cache (`<container>/catalog/`) stays within its limits as
/// catalogs of many URLs are fetched from nginx on 127.0.0.1, and the one in
/// use always survives.
@Suite struct CatalogCacheTests {
    /// One published directory copied under `count` names (`c0`…), each a
    /// catalog URL of its own, served by one nginx.
    final class Sites {
        let dir = TemporaryDirectory("catalog-cache")
        let store: AssetStore
        let nginx: NginxHost
        let now = CatalogTime(seconds: 1_796_117_400)

        init(count: Int) throws {
            let pack = dir.file("A.zip")
            try ArchiveWriter.write([ArchiveWriter.Member(path: "a.txt", source: .bytes(Array("alpha".utf8)), compression: .automatic)],
                                    comment: PackDescription(id: "A", downloadPolicy: .onDemand, platforms: [.linux]).archiveComment, to: pack)
            _ = try Publisher.publish([pack], to: dir.file("site/c0"), options: .init(now: now))
            for i in 1..<count { try FileManager.default.copyItem(atPath: dir.file("site/c0"), toPath: dir.file("site/c\(i)")) }
            store = try AssetStore(container: GroupContainer(path: dir.file("container")))
            nginx = try NginxHost(root: dir.file("site"))
        }

        deinit { nginx.stop() }

        func url(_ i: Int) -> String { nginx.baseURL + "/c\(i)/catalog.json" }

        /// Fetches catalog `i` with the cache kept within `limits`.
        func fetch(_ i: Int, _ limits: CatalogCache.Limits) throws {
            var options = Downloader.Options()
            options.catalogCache = limits
            options.maximumAttempts = 1
            _ = try CatalogFetcher(catalogURL: url(i), publicKey: nil, store: store, options: options).fetch(now: now)
        }

        /// The cache's entries, by name.
        var entries: Set<String> {
            Set(FileSystem.names(in: dir.file("container/catalog")))
        }

        /// The bytes of every file in the cache.
        var bytes: Int {
            entries.reduce(0) { total, entry in
                FileSystem.names(in: dir.file("container/catalog/" + entry)).reduce(total) { sum, name in
                    sum + ((try? FileManager.default.attributesOfItem(atPath: dir.file("container/catalog/\(entry)/\(name)")))?[.size] as? Int ?? 0)
                }
            }
        }
    }

    @Test func manyCatalogsKeepTheCacheWithinItsCountAndTheOneInUseSurvives() throws {
        let s = try Sites(count: 12)
        let limits = CatalogCache.Limits(maximumCatalogs: 4)
        for i in 0..<12 {
            try s.fetch(i, limits)
            #expect(s.entries.count == min(i + 1, 4), "after \(i + 1): \(s.entries)")
            #expect(s.entries.contains(CatalogCache.name(for: s.url(i))))
        }
        // The four most recently fetched are the ones kept.
        #expect(s.entries == Set((8..<12).map { CatalogCache.name(for: s.url($0)) }))
    }

    @Test func theByteCapKeepsOnlyWhatFitsAndTheOneInUseWhateverItsSize() throws {
        let s = try Sites(count: 6)
        try s.fetch(0, CatalogCache.Limits())
        let one = s.bytes
        #expect(one > 0)
        for i in 1..<6 { try s.fetch(i, CatalogCache.Limits(maximumBytes: Int64(2 * one))) }
        #expect(s.entries.count == 2 && s.bytes <= 2 * one, "\(s.entries)")
        try s.fetch(0, CatalogCache.Limits(maximumBytes: 1))
        #expect(s.entries == [CatalogCache.name(for: s.url(0))])
    }

    /// An entry not fetched for longer than the age limit goes at the next
    /// store of another catalog; one answered `304` since is still in use.
    @Test func anEntryUnusedPastTheAgeLimitGoesAndARevalidatedOneStays() throws {
        let s = try Sites(count: 3)
        try s.fetch(0, CatalogCache.Limits())
        try s.fetch(1, CatalogCache.Limits())
        let old = Date(timeIntervalSinceNow: -40 * 86_400)
        for i in 0..<2 {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: s.dir.file("container/catalog/\(CatalogCache.name(for: s.url(i)))/url"))
        }
        // Catalog 1 is revalidated (304): that is a use.
        try s.fetch(1, CatalogCache.Limits())
        try s.fetch(2, CatalogCache.Limits(maximumAge: 30 * 86_400))
        #expect(s.entries == [CatalogCache.name(for: s.url(1)), CatalogCache.name(for: s.url(2))])
    }
}
