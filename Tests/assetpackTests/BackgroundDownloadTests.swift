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

        /// With `essential`, also an essential pack `Base`, and `Big` is
        /// prefetch; each of `extra` is an on-demand pack holding its name.
        init(rate: String, essential: Bool = false, extra: [String] = []) throws {
            let site = try Site(keys: false)
            try site.dir.write("src/Big/files/big.bin", bytes)
            var packs = essential
                ? [try site.pack("Base", "base", policy: DownloadCommandTests.essential), try site.pack("Big", "big")]
                : [try site.pack("Big", "big", policy: DownloadCommandTests.onDemand)]
            for id in extra { packs.append(try site.pack(id, id, policy: DownloadCommandTests.onDemand)) }
            guard try site.publish(packs).status == 0 else { throw TestFailure("publish failed") }
            self.site = site
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

        /// `cat files/big.bin --pack Big` (or another member and pack).
        func installed(_ path: String = "files/big.bin", pack: String = "Big") throws -> Data? {
            let r = try CLI.assetpack(["cat", path, "--pack", pack], container: container)
            return r.status == 0 ? r.stdout : nil
        }

        /// `assetpack sync --event first-installation --background`.
        func syncInTheBackground() throws -> Program.Result {
            try CLI.assetpack(["sync", "--event", "first-installation", "--background", "--json", "--catalog", catalog],
                              container: container)
        }
    }

    @Test(.timeLimit(.minutes(4))) func aCallerKilledMidDownloadLeavesTheDownloadToTheDaemon() throws {
        let f = try Fixture(rate: "1m")
        let daemon = try Daemon(f.container)
        let caller = try f.fetch()
        #expect(eventually(timeout: 30) { f.stagedBytes() > 0 }, "the download did not begin: \(caller.stderr) \(daemon.child.stderr)")
        caller.signal(SIGKILL)
        #expect(caller.wait(timeout: 20) && caller.wasKilled)
        // 2 MiB at 1 MiB/s: the caller died mid-download.
        #expect(try f.installed() == nil, "the download ended before the caller was killed")
        // A restarted caller asks again, attaches to the download under way, and returns when it ends.
        let restarted = try f.fetch()
        #expect(restarted.wait(timeout: 60) && restarted.exitStatus == 0, "\(restarted.stderr)")
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

    @Test(.timeLimit(.minutes(4))) func fiveCallersAtOnceShareTheDaemonsOneDownload() throws {
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

    @Test(.timeLimit(.minutes(4))) func theCallersProgressAndStatusUpdatesFollowTheDaemonsDownload() async throws {
        let f = try Fixture(rate: "2m")
        let daemon = try Daemon(f.container)
        let manager = try AssetPackManager(container: .init(path: f.container), options: .init(catalog: .init(url: f.catalog)))
        let updates = manager.statusUpdates(forAssetPackWithID: "Big")
        let seen = Task { () -> (pids: Set<Int32>, finished: Bool) in
            var pids = Set<Int32>()
            for await update in updates {
                if case .downloading(_, let progress) = update, progress.completedUnitCount > 0,
                   let pid = manager.downloadStatus(ofAssetPackWithID: "Big")?.processID { pids.insert(pid) }
                if case .finished = update { return (pids, true) }
                if case .failed = update { return (pids, false) }
            }
            return (pids, false)
        }
        let reported = Shared<[UInt64]>([])
        try await manager.ensureLocalAvailability(of: try await manager.assetPack(withID: "Big")) { p in
            reported.withLock { $0.append(p.completed) }
        }
        let (pids, finished) = await seen.value
        #expect(finished && pids == [daemon.child.pid], "the daemon ran it: \(pids) vs \(daemon.child.pid)")
        let steps = reported.withLock { $0 }
        #expect(steps.count >= 2 && steps.last ?? 0 > 0 && steps == steps.sorted(), "progress followed the daemon's record: \(steps)")
        #expect(try f.installed() == Data(f.bytes))
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(4))) func aDaemonKilledMidDownloadLeavesTheCallerToResume() throws {
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

    @Test(.timeLimit(.minutes(4))) func syncInTheBackgroundInstallsTheEssentialsAndLeavesThePrefetchPacksToTheDaemon() throws {
        let f = try Fixture(rate: "1m", essential: true)
        let socket = AssetPackManager.Container(path: f.container).daemonSocketPath
        // Without a daemon: one line naming the socket, before any request.
        let none = try f.syncInTheBackground()
        #expect(none.status == 1 && none.out.isEmpty)
        #expect(none.stderr.hasPrefix("assetpack sync: error: sync --background needs the container's daemon ('assetpack daemon'): descriptor daemon at \(socket) is unavailable")
                && none.stderr.split(separator: "\n").count == 1, "\(none.stderr)")
        #expect(f.nginx.accessLog.isEmpty, "\(f.nginx.accessLog)")

        let daemon = try Daemon(f.container)
        let started = Date()
        let r = try f.syncInTheBackground()
        let took = Date().timeIntervalSince(started)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.out.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(lines.contains { $0["id"] as? String == "Base" && $0["result"] as? String == "installed" }, "\(r.out)")
        #expect(lines.contains { $0["id"] as? String == "Big" && $0["result"] as? String == "background" }, "\(r.out)")
        #expect(try f.installed("files/data.txt", pack: "Base") == Data("base".utf8))
        // 2 MiB at 1 MiB/s take 2 s: sync returned before they arrived.
        #expect(try f.installed() == nil || took >= 2, "sync took \(took) s")
        #expect(eventually(timeout: 60) { daemon.child.stderr.contains("download of 'Big' finished") }, "\(daemon.child.stderr)")
        #expect(daemon.child.stderr.contains("download of 'Big' requested by uid \(getuid()) (discretionary)"))
        #expect(try f.installed() == Data(f.bytes))
        daemon.stop()
    }

    /// A download that fails in the daemon fails the caller with the
    /// daemon's error, and the caller does not try again itself.
    @Test(.timeLimit(.minutes(3))) func theDaemonsFailureIsTheCallersAndIsNotRetriedInProcess() throws {
        let f = try Fixture(rate: "100m")
        let zip = try #require(try f.site.files().first { $0.hasPrefix("Big-") && $0.hasSuffix(".zip") })
        try FileManager.default.removeItem(atPath: f.site.out + "/" + zip)
        let daemon = try Daemon(f.container)
        let r = try CLI.assetpack(["fetch", "Big", "--catalog", f.catalog], container: f.container)
        #expect(r.status == 1 && r.stderr.contains("download of 'Big' from \(f.nginx.baseURL)/\(zip) failed: not found (HTTP 404)"),
                "\(r.stderr)")
        #expect(daemon.child.stderr.contains("download of 'Big' failed"), "\(daemon.child.stderr)")
        let gets = f.gets(1)
        #expect(gets.count == 1 && gets[0].status == 404, "\(gets)")
        daemon.stop()
    }

    /// `--max-downloads 1`: one download at a time; of the queued ones, those
    /// that are not discretionary go first.
    @Test(.timeLimit(.minutes(4))) func downloadsWaitTheirTurnDiscretionaryOnesLast() throws {
        let f = try Fixture(rate: "2m", extra: ["Later", "Sooner"])
        let daemon = try Daemon(f.container, ["--max-downloads", "1"])
        let client = AssetPackClient(socketPath: daemon.container.daemonSocketPath)
        for (pack, discretionary) in [("Big", false), ("Later", true), ("Sooner", false)] {
            let request = DaemonDownloadRequest(pack: pack, catalogURL: f.catalog, publicKey: nil, caFile: nil,
                                                wait: false, discretionary: discretionary)
            #expect(try client.download(request) == .accepted)
        }
        #expect(eventually(timeout: 60) { daemon.child.stderr.contains("download of 'Later' finished") }, "\(daemon.child.stderr)")
        let log = daemon.child.stderr
        let order = ["'Big' began", "'Big' finished", "'Sooner' began", "'Sooner' finished", "'Later' began", "'Later' finished"]
            .map { log.range(of: "download of " + $0)?.lowerBound }
        #expect(order.allSatisfy { $0 != nil } && zip(order, order.dropFirst()).allSatisfy { $0! < $1! }, "\(log)")
        #expect(try f.installed("files/data.txt", pack: "Later") == Data("Later".utf8))
        daemon.stop()
    }

    /// Past `Downloads.maximumJobs` queued or running, a request for another
    /// pack is answered `daemonBusy` (its caller would download itself); one
    /// for a pack already queued still attaches.
    @Test(.timeLimit(.minutes(3))) func pastTheJobLimitANewDownloadIsToldTheDaemonIsBusy() throws {
        let s = TemporaryDirectory("assetpack-daemon-download-limit")
        let daemon = try Daemon(s.container, ["--max-downloads", "1"])
        let client = AssetPackClient(socketPath: daemon.container.daemonSocketPath)
        // Nothing listens on port 9: the running download retries for seconds, the rest wait.
        func request(_ pack: String) -> DaemonDownloadRequest {
            DaemonDownloadRequest(pack: pack, catalogURL: "http://127.0.0.1:9/catalog.json", publicKey: nil, caFile: nil,
                                  wait: false, discretionary: true)
        }
        var accepted = 0
        for i in 0..<DescriptorDaemon.Downloads.maximumJobs where try client.download(request("P\(i)")) == .accepted { accepted += 1 }
        #expect(accepted == DescriptorDaemon.Downloads.maximumJobs)
        do {
            _ = try client.download(request("OneMore"))
            Issue.record("a download past the limit was accepted")
        } catch {
            #expect(error.code == .daemonBusy && error.path == daemon.container.daemonSocketPath, "\(error)")
        }
        #expect(try client.download(request("P7")) == .accepted)
        daemon.stop()
    }

    /// The peer checks (`SO_PEERCRED`) hold for download requests: `nobody`
    /// reaches the socket and is refused, until allowed by uid — and then
    /// gets descriptors only: its download of a source the owner did not
    /// configure is refused as not permitted (DaemonPermissionTests has the rest).
    @Test(.enabled(if: DaemonTests.canSwitchUser), .timeLimit(.minutes(3)))
    func aPeerTheDaemonDoesNotServeCannotAskForDownloads() throws {
        let s = TemporaryDirectory("assetpack-daemon-download-peer")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: s.path)
        let request = DaemonDownloadRequest(pack: "Big", catalogURL: "http://127.0.0.1:9/catalog.json", publicKey: nil, caFile: nil,
                                            wait: false, discretionary: true).encoded
        let hex = request.map { String(format: "%02x", $0) }.joined()
        /// The reply's status, as `nobody` sends the request.
        func statusAsNobody(_ socket: String) throws -> String {
            // A refused peer is answered at once and the connection closed:
            // the send may fail, the reply is there to read.
            let script = """
                import socket, sys
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
                try: s.sendall(bytes.fromhex(sys.argv[2]))
                except OSError: pass
                print(int.from_bytes(s.recv(16)[6:8], 'little'))
                """
            let r = try Program.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                         "/usr/bin/python3", "-c", script, socket, hex])
            return r.out.trimmingCharacters(in: .whitespacesAndNewlines) + r.stderr
        }
        var daemon = try Daemon(s.container, ["--socket-group", "nogroup"])
        let refused = try statusAsNobody(daemon.container.daemonSocketPath)
        #expect(refused == "64", "\(refused)")
        #expect(!daemon.child.stderr.contains("download of 'Big' requested"), "\(daemon.child.stderr)")
        daemon.stop()
        daemon = try Daemon(s.container, ["--socket-group", "nogroup", "--allow-uid", "nobody"])
        #expect(try statusAsNobody(daemon.container.daemonSocketPath) == "70")
        #expect(eventually(timeout: 10) { daemon.child.stderr.contains("refused a download of 'Big' from http://127.0.0.1:9/catalog.json for uid 65534") },
                "\(daemon.child.stderr)")
        #expect(!daemon.child.stderr.contains("download of 'Big' requested"), "\(daemon.child.stderr)")
        daemon.stop()
    }

    /// Download requests with fields the daemon cannot use, each refused
    /// with its own code; the daemon goes on serving.
    @Test(.timeLimit(.minutes(3))) func badDownloadRequestsAreRefusedWithTheirCodes() throws {
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
