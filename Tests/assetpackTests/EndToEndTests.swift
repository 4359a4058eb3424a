import Foundation
import Testing
import AssetPacks
import TestSupport

/// The whole path a pack travels, through the real binary, against each
/// host a published directory meets on 127.0.0.1 — `assetpack serve`, nginx
/// with `contrib/nginx`, and nginx over HTTPS with a CA the test makes —:
/// `package` → `publish --sign` → `sync --event first-installation` → `cat`;
/// then version 2, `sync --event subsequent-update`, readers move to it,
/// and bytes this process holds from version 1 stay valid.
@Suite(.timeLimit(.minutes(4)))
struct EndToEndTests {
    typealias Site = PublishCommandTests.Site

    enum Host: String, CaseIterable, CustomTestStringConvertible {
        case serve, nginx, nginxHTTPS
        var testDescription: String { rawValue }
    }

    /// A host serving a published directory; the value keeps it running.
    final class Server {
        let url: String
        /// `--ca-file` for HTTPS, else nil.
        let caFile: String?
        let serve: ServeHost?
        let nginx: NginxHost?
        private let ca: TestCA?

        init(_ host: Host, root: String) throws {
            switch host {
            case .serve:
                serve = try ServeHost(root: root, executable: CLI.binary)
                (nginx, ca) = (nil, nil)
                url = serve!.baseURL
            case .nginx:
                nginx = try NginxHost(root: root)
                (serve, ca) = (nil, nil)
                url = nginx!.baseURL
            case .nginxHTTPS:
                let ca = try TestCA()
                nginx = try NginxHost(root: root, tls: ca)
                (serve, self.ca) = (nil, ca)
                url = nginx!.baseURL
            }
            caFile = ca?.certificate
        }

        func stop() {
            serve?.stop()
            nginx?.stop()
        }

        /// The pack files' GETs the server logged, as (status, URI), once
        /// there are `count`.
        func packRequests(_ count: Int) -> [(status: Int, uri: String)] {
            if let serve {
                return serve.accessLog(count: count) { $0.target.hasSuffix(".zip") }.map { ($0.status, $0.target) }
            }
            return nginx!.accessLog(count: count) { $0.uri.hasSuffix(".zip") }.map { ($0.status, $0.uri) }
        }
    }

    static let essential = DownloadCommandTests.essential

    /// Packs version `version` of `Base`: `files/data.txt` holding `text`
    /// and `files/media.bin`, 256 KiB of noise (stored, page-aligned, so
    /// reads of it are zero-copy).
    static func pack(_ s: Site, version: Int, text: String) throws -> String {
        try s.dir.write("src/Base/files/media.bin", media(version))
        return try s.pack("Base", text, version: version, policy: essential)
    }

    static func media(_ version: Int) -> [UInt8] { noise(256 << 10, seed: UInt64(version) &* 0x9E37) }

    func sync(_ s: Site, _ server: Server, _ event: String) throws -> Program.Result {
        try CLI.assetpack(["sync", "--event", event, "--catalog", server.url + "/catalog.json", "--key", s.pub]
                          + (server.caFile.map { ["--ca-file", $0] } ?? []), container: s.dir.container)
    }

    func cat(_ s: Site, _ path: String) throws -> Program.Result {
        try CLI.assetpack(["cat", path, "--pack", "Base"], container: s.dir.container)
    }

    @Test(arguments: Host.allCases)
    func packagePublishSyncCatThenUpdateWhileVersionOneIsHeld(_ host: Host) throws {
        let s = try Site()
        let v1 = try Self.pack(s, version: 1, text: "one")
        #expect(try s.publish([v1, "--sign", s.key]).status == 0)
        let server = try Server(host, root: s.out)
        defer { server.stop() }

        let first = try sync(s, server, "first-installation")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("Base: version 1 installed"), "\(first.stderr)")
        #expect(try cat(s, "files/data.txt").out == "one")
        #expect(try cat(s, "files/media.bin").stdoutBytes == Self.media(1))

        // A reader in this process holds version 1: a zero-copy buffer and a descriptor.
        let reader = try AssetPackManager(container: .init(path: s.dir.container))
        let held = try reader.contents(at: "files/media.bin", searchingInAssetPackWithID: "Base")
        let descriptor = try reader.descriptor(for: "files/media.bin", searchingInAssetPackWithID: "Base")
        defer { try? descriptor.close() }
        #expect(descriptor.source == .archive && descriptor.length == Int64(256 << 10))

        let v2 = try Self.pack(s, version: 2, text: "two")
        #expect(try s.publish([v2, "--sign", s.key]).status == 0)
        let update = try sync(s, server, "subsequent-update")
        #expect(update.status == 0, "\(update.stderr)")
        #expect(update.stderr.contains("Base: version 2 installed"), "\(update.stderr)")

        // New readers see version 2, in other processes and in this one.
        #expect(try cat(s, "files/data.txt").out == "two")
        #expect(try cat(s, "files/media.bin").stdoutBytes == Self.media(2))
        #expect(try reader.contents(at: "files/media.bin", searchingInAssetPackWithID: "Base") == Data(Self.media(2)))
        #expect(try reader.assetPack(withID: "Base").version == "2")
        // What was held from version 1 is still version 1's bytes.
        #expect(held == Data(Self.media(1)))
        #expect(try descriptor.data() == Data(Self.media(1)))
        var tail = [UInt8](repeating: 0, count: 4096)
        let n = try tail.withUnsafeMutableBytes { try descriptor.read(into: $0, at: descriptor.length - 4096) }
        #expect(n == 4096 && tail == Array(Self.media(1).suffix(4096)))

        // One GET per version, each answered whole.
        let gets = server.packRequests(2)
        #expect(gets.count == 2 && gets.allSatisfy { $0.status == 200 } && Set(gets.map(\.uri)).count == 2, "\(gets)")
        if let nginx = server.nginx {
            let protocols = Set(nginx.accessLog.map(\.serverProtocol))
            #expect(protocols == [nginx.servesHTTP2 ? "HTTP/2.0" : "HTTP/1.1"], "\(protocols)")
            if host == .nginxHTTPS && !nginx.servesHTTP2 { print("EndToEndTests: this nginx has no http_v2_module; HTTPS ran over HTTP/1.1") }
        }
        let verify = try CLI.assetpack(["verify", "--deep"], container: s.dir.container)
        #expect(verify.status == 0, "\(verify.out)\(verify.stderr)")
    }
}
