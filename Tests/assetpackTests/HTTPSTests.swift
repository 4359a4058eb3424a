import Foundation
import Testing
import AssetPacks
import TestSupport

/// Downloads over HTTPS from nginx with a certificate a test CA signed:
/// trusted only with `--ca-file` (`CatalogSource.caFile`) naming that CA;
/// without it, or with another CA, the catalog or the pack is refused with
/// its own error, one line naming the URL, and nothing is installed.
@Suite(.timeLimit(.minutes(4)))
struct HTTPSTests {
    typealias Site = PublishCommandTests.Site

    /// A signed catalog of pack `Base` published to `s.out`.
    func publish(_ s: Site, _ extra: [String] = []) throws {
        let pack = try s.pack("Base", "over tls", policy: DownloadCommandTests.essential)
        let r = try s.publish([pack, "--sign", s.key] + extra)
        guard r.status == 0 else { throw TestFailure("publish: \(r.stderr)") }
    }

    func fetch(_ s: Site, catalog: String, caFile: String?) throws -> Program.Result {
        try CLI.assetpack(["fetch", "Base", "--catalog", catalog, "--key", s.pub] + (caFile.map { ["--ca-file", $0] } ?? []),
                          container: s.dir.container)
    }

    func manager(_ s: Site, catalog: String, caFile: String?) throws -> AssetPackManager {
        var source = AssetPackManager.CatalogSource(url: catalog, publicKey: try AssetPackPublicKey.load(path: s.pub), caFile: caFile)
        source.initialBackoff = 0.01
        return try AssetPackManager(container: .init(path: s.dir.container), options: .init(catalog: source))
    }

    /// The one line a failed command printed.
    func oneLine(_ r: Program.Result) -> String? {
        let lines = r.stderr.split(separator: "\n")
        return lines.count == 1 ? String(lines[0]) : nil
    }

    @Test func aCatalogOverHTTPSIsRefusedWithoutTheCAAndWithAnotherOne() async throws {
        let s = try Site()
        try publish(s)
        let ca = try TestCA(), other = try TestCA(name: "Another Test CA")
        let nginx = try NginxHost(root: s.out, tls: ca)
        defer { nginx.stop() }
        let catalog = nginx.baseURL + "/catalog.json"

        for caFile in [nil, other.certificate] {
            let r = try fetch(s, catalog: catalog, caFile: caFile)
            #expect(r.status == 1)
            let line = try #require(oneLine(r), "\(r.stderr)")
            #expect(line.hasPrefix("assetpack fetch: error: catalog \(catalog) is unavailable: the transfer failed ("), "\(line)")
            #expect(line.lowercased().contains("certificate"), "\(line)")

            let manager = try manager(s, catalog: catalog, caFile: caFile)
            do {
                _ = try await manager.assetPack(withID: "Base")
                Issue.record("an untrusted certificate was accepted")
            } catch {
                #expect(error.code == .catalogUnavailable && error.path == catalog, "\(error)")
            }
        }
        #expect(try CLI.assetpack(["cat", "files/data.txt", "--pack", "Base"], container: s.dir.container).status != 0)
        // No request reached nginx: the handshake failed first.
        #expect(nginx.accessLog.isEmpty, "\(nginx.accessLog)")

        let trusted = try fetch(s, catalog: catalog, caFile: ca.certificate)
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(try CLI.assetpack(["cat", "files/data.txt", "--pack", "Base"], container: s.dir.container).out == "over tls")
    }

    @Test func aPackOverHTTPSFromAPlainCatalogIsRefusedWithoutTheCA() async throws {
        let s = try Site()
        let ca = try TestCA()
        // The catalog over plain HTTP; the packs it names on an HTTPS host (a CDN).
        try FileManager.default.createDirectory(atPath: s.out, withIntermediateDirectories: true)
        let plain = try NginxHost(root: s.out)
        defer { plain.stop() }
        let tls = try NginxHost(root: s.out, tls: ca)
        defer { tls.stop() }
        try publish(s, ["--base-url", tls.baseURL])
        let catalog = plain.baseURL + "/catalog.json"
        let zip = try #require(try s.files().first { $0.hasSuffix(".zip") })
        let packURL = tls.baseURL + "/" + zip

        let r = try fetch(s, catalog: catalog, caFile: nil)
        #expect(r.status == 1)
        let line = try #require(oneLine(r), "\(r.stderr)")
        #expect(line.hasPrefix("assetpack fetch: error: download of 'Base' from \(packURL) failed: the transfer failed ("), "\(line)")
        let manager = try manager(s, catalog: catalog, caFile: nil)
        do {
            try await manager.ensureLocalAvailability(of: try await manager.assetPack(withID: "Base"))
            Issue.record("an untrusted certificate was accepted")
        } catch {
            #expect(error.code == .downloadFailed && error.pack == "Base" && error.path == packURL, "\(error)")
        }
        #expect(try CLI.assetpack(["cat", "files/data.txt", "--pack", "Base"], container: s.dir.container).status != 0)

        let trusted = try fetch(s, catalog: catalog, caFile: ca.certificate)
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(try CLI.assetpack(["cat", "files/data.txt", "--pack", "Base"], container: s.dir.container).out == "over tls")
        let gets = tls.accessLog(count: 1) { $0.uri == "/" + zip }
        #expect(gets.count == 1 && gets.first?.status == 200, "\(gets)")
        #expect(gets.first?.serverProtocol == (tls.servesHTTP2 ? "HTTP/2.0" : "HTTP/1.1"))
    }

    @Test func aDownloadKilledOverHTTPSResumesWithRange() throws {
        let s = try Site()
        let big = noise(2 << 20, seed: 3)
        try s.dir.write("src/Base/files/big.bin", big)
        try publish(s)
        let ca = try TestCA()
        let nginx = try NginxHost(root: s.out, extra: "limit_rate 2m;", tls: ca)
        defer { nginx.stop() }
        let catalog = nginx.baseURL + "/catalog.json"
        let zip = try #require(try s.files().first { $0.hasSuffix(".zip") })
        let size = try #require(Journal.size(s.out + "/" + zip))

        // A fetch is killed once part of the file is on disk…
        let journal = try Journal(container: s.dir.container)
        let standing = try journal.killDownload(["fetch", "Base", "--catalog", catalog, "--key", s.pub, "--ca-file", ca.certificate,
                                                 "--container", s.dir.container], of: "Base", after: 300_000)
        #expect(standing >= 300_000 && standing < size)

        // …and the next asks for the rest, over the same protocol, and gets only that.
        let r = try fetch(s, catalog: catalog, caFile: ca.certificate)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try CLI.assetpack(["cat", "files/big.bin", "--pack", "Base"], container: s.dir.container).stdoutBytes == big)
        let resumed = try #require(nginx.accessLog(count: 1) { $0.uri == "/" + zip && !$0.range.isEmpty }.first)
        #expect(resumed.status == 206 && resumed.range == "bytes=\(standing)-" && resumed.ifRange.hasPrefix("\""), "\(resumed)")
        #expect(resumed.serverProtocol == (nginx.servesHTTP2 ? "HTTP/2.0" : "HTTP/1.1"))
        // bytes_sent counts headers too, and over HTTP/2 9 bytes of frame
        // header per 16 KiB frame: the rest of the file, and a little more.
        let rest = size - standing
        #expect(resumed.bytesSent >= rest && resumed.bytesSent < rest + 1024 + rest / 1000, "\(resumed)")
    }
}
