import Foundation
import Testing
import AssetPacks
import TestSupport

/// `--catalog-cache-count`, `-size` and `-days` on `fetch` and `daemon`:
/// catalogs of several URLs fetched by the real `assetpack`, in process and
/// by the daemon, from nginx on 127.0.0.1.
@Suite(.serialized) struct CatalogCacheCommandTests {
    typealias Site = PublishCommandTests.Site
    typealias Daemon = DaemonTests.Daemon

    /// One published directory under three names, `c0`…`c2`: three catalog URLs.
    final class Fixture {
        let site: Site
        let nginx: NginxHost
        var container: String { site.dir.file("container") }

        init() throws {
            site = try Site(keys: false)
            guard try site.publish([try site.pack("Tiny", "tiny", policy: DownloadCommandTests.onDemand)]).status == 0 else {
                throw TestFailure("publish failed")
            }
            for i in 0..<3 { try FileManager.default.copyItem(atPath: site.out, toPath: site.dir.file("hosted/c\(i)")) }
            nginx = try NginxHost(root: site.dir.file("hosted"))
        }

        deinit { nginx.stop() }

        func catalog(_ i: Int) -> String { nginx.baseURL + "/c\(i)/catalog.json" }

        /// The cache's entries.
        var entries: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: container + "/catalog")) ?? []).sorted() }
    }

    @Test(.timeLimit(.minutes(3))) func fetchKeepsAtMostTheCountItIsGiven() throws {
        let f = try Fixture()
        for i in 0..<3 {
            let r = try CLI.assetpack(["fetch", "Tiny", "--catalog", f.catalog(i), "--catalog-cache-count", "2"], container: f.container)
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(f.entries.count == 2, "\(f.entries)")
        // One more with the defaults keeps what is there (8 allowed).
        #expect(try CLI.assetpack(["fetch", "Tiny", "--catalog", f.catalog(0)], container: f.container).status == 0)
        #expect(f.entries.count == 3, "\(f.entries)")
        // A size below any catalog's keeps the one in use only.
        #expect(try CLI.assetpack(["fetch", "Tiny", "--catalog", f.catalog(1), "--catalog-cache-size", "1"], container: f.container).status == 0)
        #expect(f.entries.count == 1, "\(f.entries)")
    }

    @Test(.timeLimit(.minutes(3))) func theDaemonKeepsAtMostTheCountItIsGiven() throws {
        let f = try Fixture()
        let daemon = try Daemon(f.container, ["--catalog-cache-count", "1"])
        for i in 0..<3 {
            let r = try CLI.assetpack(["fetch", "Tiny", "--catalog", f.catalog(i)], container: f.container)
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(daemon.child.stderr.contains("download of 'Tiny' finished"), "\(daemon.child.stderr)")
        // The callers fetched each catalog first (with the defaults); the
        // daemon's own fetch of the third left only that one.
        #expect(f.entries.count == 1, "\(f.entries)")
        daemon.stop()
    }

    @Test(arguments: [
        (["--catalog-cache-count", "0"], "'--catalog-cache-count' needs a whole number from 1 to 4096"),
        (["--catalog-cache-size", "lots"], "'--catalog-cache-size' needs a number of bytes (with K, M, G or T), not 'lots'"),
        (["--catalog-cache-days", "0"], "'--catalog-cache-days' must be more than 0"),
    ])
    func badValuesAreUsageErrors(args: [String], message: String) throws {
        let s = TemporaryDirectory("catalog-cache-usage")
        let r = try CLI.assetpack(["fetch", "Tiny", "--catalog", "http://127.0.0.1:9/catalog.json"] + args, container: s.container)
        #expect(r.status == 64 && r.stderr.hasPrefix("Error: \(message)"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.container))
    }
}
