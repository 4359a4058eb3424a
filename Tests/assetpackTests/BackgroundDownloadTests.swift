import Foundation
import Testing
@testable import AssetPacks
import TestSupport

/// `assetpack daemon` as the container's background download agent, with
/// real processes: `assetpack fetch` callers that hand their download to
/// it, are killed, or outlive it, against nginx on 127.0.0.1 (its access
/// log counts the requests and shows their `Range`).
@Suite(.serialized) struct BackgroundDownloadTests {
    typealias Site = PublishCommandTests.Site
    typealias Daemon = DaemonTests.Daemon

    static let size = 2 << 20

    /// A site publishing on-demand pack `Big` (2 MiB of noise), served by
    /// nginx at `rate` bytes a second per connection.
    final class Fixture {
        let site: Site
        let nginx: NginxHost
        var container: String { site.dir.file("container") }
        var catalog: String { nginx.baseURL + "/catalog.json" }
        let bytes = noise(BackgroundDownloadTests.size, seed: 11)

        init(rate: String) throws {
            site = try Site(keys: false)
            try site.dir.write("src/Big/files/big.bin", bytes)
            guard try site.publish([try site.pack("Big", "big", policy: DownloadCommandTests.onDemand)]).status == 0 else {
                throw TestFailure("publish failed")
            }
            nginx = try NginxHost(root: site.out, extra: "limit_rate \(rate);")
        }

        deinit { nginx.stop() }

        /// `assetpack fetch Big` in the background.
        func fetch() throws -> Child {
            try Child(CLI.binary, ["fetch", "Big", "--catalog", catalog, "--container", container])
        }

        /// The pack's requests nginx logged, once there are `count`.
        func gets(_ count: Int) -> [NginxHost.Access] { nginx.accessLog(count: count) { $0.uri.hasSuffix(".zip") } }

        /// Bytes of the partial download in `staging/`, 0 when there is none.
        func stagedBytes() -> Int {
            let staging = container + "/staging"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
            return names.filter { $0.hasSuffix(".download") }.compactMap {
                (try? FileManager.default.attributesOfItem(atPath: staging + "/" + $0))?[.size] as? Int
            }.max() ?? 0
        }

        /// `cat files/big.bin --pack Big`.
        func installed() throws -> Data? {
            let r = try CLI.assetpack(["cat", "files/big.bin", "--pack", "Big"], container: container)
            return r.status == 0 ? r.stdout : nil
        }
    }

    @Test(.timeLimit(.minutes(2))) func aCallerKilledMidDownloadLeavesTheDownloadToTheDaemon() throws {
        let f = try Fixture(rate: "1m")
        let daemon = try Daemon(f.container)
        let caller = try f.fetch()
        #expect(eventually(timeout: 30) { f.stagedBytes() > 0 }, "the download did not begin: \(caller.stderr) \(daemon.child.stderr)")
        caller.signal(SIGKILL)
        #expect(caller.wait(timeout: 20) && caller.wasKilled)
        #expect(f.stagedBytes() < Self.size, "the download ended before the caller was killed")
        #expect(eventually(timeout: 60) { daemon.child.stderr.contains("download of 'Big' finished: version 1 installed") },
                "\(daemon.child.stderr)")
        #expect(try f.installed() == Data(f.bytes))
        // A new caller finds it installed: no second download.
        let again = try CLI.assetpack(["fetch", "Big", "--catalog", f.catalog], container: f.container)
        #expect(again.status == 0 && again.stderr.contains("already installed"), "\(again.stderr)")
        let gets = f.gets(1)
        #expect(gets.count == 1 && gets[0].status == 200 && gets[0].range.isEmpty, "\(gets)")
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(2))) func fiveCallersAtOnceShareTheDaemonsOneDownload() throws {
        let f = try Fixture(rate: "2m")
        let daemon = try Daemon(f.container)
        let callers = try (0..<5).map { _ in try f.fetch() }
        for caller in callers {
            #expect(caller.wait(timeout: 60) && caller.exitStatus == 0, "\(caller.stderr)")
        }
        #expect(try f.installed() == Data(f.bytes))
        let gets = f.gets(1)
        #expect(gets.count == 1 && gets[0].status == 200, "\(gets)")
        #expect(daemon.child.stderr.contains("download of 'Big' finished"), "\(daemon.child.stderr)")
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(2))) func aDaemonKilledMidDownloadLeavesTheCallerToResume() throws {
        let f = try Fixture(rate: "1m")
        let daemon = try Daemon(f.container)
        let caller = try f.fetch()
        #expect(eventually(timeout: 30) { f.stagedBytes() >= 256 << 10 }, "the download did not begin: \(daemon.child.stderr)")
        daemon.child.signal(SIGKILL)
        #expect(daemon.child.wait(timeout: 20) && daemon.child.wasKilled)
        #expect(caller.wait(timeout: 60) && caller.exitStatus == 0, "\(caller.stderr)")
        #expect(try f.installed() == Data(f.bytes))
        let gets = f.gets(2)
        #expect(gets.count == 2, "\(gets)")
        guard gets.count == 2 else { return }
        #expect(gets[0].range.isEmpty && gets[1].status == 206, "\(gets)")
        let from = Int(gets[1].range.dropFirst("bytes=".count).dropLast()) ?? 0
        #expect(gets[1].range.hasPrefix("bytes=") && from >= 256 << 10, "resumed from \(gets[1].range)")
    }

    /// Download requests with fields the daemon cannot use, each refused
    /// with its own code; the daemon goes on serving.
    @Test(.timeLimit(.minutes(1))) func badDownloadRequestsAreRefusedWithTheirCodes() throws {
        let f = try Fixture(rate: "100m")
        let daemon = try Daemon(f.container)
        let client = AssetPackClient(socketPath: daemon.container.daemonSocketPath)
        func refusal(_ pack: String, _ url: String? = nil, key: String? = nil)
            -> (AssetPackError.Code, AssetPackError.Reason)? {
            let request = DaemonDownloadRequest(pack: pack, catalogURL: url ?? f.catalog, publicKey: key, caFile: nil, wait: true, discretionary: false)
            do {
                _ = try client.download(request)
                return nil
            } catch {
                return (error.code, error.reason)
            }
        }
        #expect(refusal("") ?? (.daemonFailed, .unspecified) == (.invalidPackID, .emptyID))
        #expect(refusal("../etc") ?? (.daemonFailed, .unspecified) == (.invalidPackID, .badFirstCharacter))
        #expect(refusal("a/b") ?? (.daemonFailed, .unspecified) == (.invalidPackID, .badCharacter))
        #expect(refusal("Big", "ftp://127.0.0.1/catalog.json") ?? (.daemonFailed, .unspecified) == (.unsupportedURL, .unspecified))
        #expect(refusal("Big", "catalog.json") ?? (.daemonFailed, .unspecified) == (.unsupportedURL, .unspecified))
        #expect(refusal("Big", key: "ed25519:nope") ?? (.daemonFailed, .unspecified) == (.invalidKey, .malformedPublicKey))
        // The download's own errors cross the wire with their codes.
        #expect(refusal("Nope") ?? (.daemonFailed, .unspecified) == (.assetPackNotFound, .unspecified))
        #expect(refusal("Big", f.nginx.baseURL + "/elsewhere/catalog.json") ?? (.daemonFailed, .unspecified)
                == (.catalogUnavailable, .unspecified))
        do {
            _ = try client.download(DaemonDownloadRequest(pack: "Big", catalogURL: f.nginx.baseURL + "/elsewhere/catalog.json",
                                                          publicKey: nil, caFile: nil, wait: true, discretionary: false))
        } catch {
            #expect(error.path == f.nginx.baseURL + "/elsewhere/catalog.json" && error.message.contains("404"), "\(error)")
        }
        // And a good one still works, waiting or not.
        #expect(try client.download(DaemonDownloadRequest(pack: "Big", catalogURL: f.catalog, publicKey: nil, caFile: nil,
                                                          wait: false, discretionary: true)) == .accepted)
        #expect(try client.download(DaemonDownloadRequest(pack: "Big", catalogURL: f.catalog, publicKey: nil, caFile: nil,
                                                          wait: true, discretionary: false)) == .installed(version: "1"))
        #expect(try f.installed() == Data(f.bytes))
        daemon.stop()
    }
}
