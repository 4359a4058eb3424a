import Foundation
import Testing
import AssetPacks
import TestSupport

/// `assetpack status`, `pause`, `resume` and `cancel` against a download run
/// by another real process (`assetpack fetch`), from nginx on 127.0.0.1
/// slowed with `limit_rate`; and another process's `statusUpdates` seeing
/// that download's progress.
@Suite struct StatusCommandTests {
    typealias Site = PublishCommandTests.Site

    /// `Big` (3 MiB of noise) published, nginx serving it at 1 MiB/s.
    func start() throws -> (Site, NginxHost) {
        let s = try Site(keys: false)
        try s.dir.write("src/Big/files/big.bin", noise(3 << 20, seed: 11))
        #expect(try s.publish([try s.pack("Big", "big", policy: DownloadCommandTests.onDemand)]).status == 0)
        return (s, try NginxHost(root: s.out, extra: "limit_rate 1m;"))
    }

    func fetch(_ s: Site, _ nginx: NginxHost) throws -> Child {
        try Child(CLI.binary, ["fetch", "Big", "--catalog", nginx.baseURL + "/catalog.json", "--container", s.dir.file("container")])
    }

    func run(_ s: Site, _ args: [String]) throws -> Program.Result { try CLI.assetpack(args, container: s.dir.file("container")) }

    /// The `status Big --json` record, once `condition` holds for it.
    func record(_ s: Site, where condition: ([String: Any]) -> Bool) throws -> [String: Any]? {
        var found: [String: Any]?
        _ = try eventually(timeout: 20) {
            let r = try run(s, ["status", "Big", "--json"])
            let o = jsonObject(r.out)
            if r.status == 0, condition(o) { found = o }
            return found != nil
        }
        return found
    }

    func downloading(_ o: [String: Any]) -> Bool { o["state"] as? String == "downloading" && (o["bytes"] as? Int ?? 0) > 0 }

    @Test func statusShowsARunningDownloadAndWatchEndsWhenItFinishes() throws {
        let (s, nginx) = try start()
        defer { nginx.stop() }
        let fetcher = try fetch(s, nginx)
        let live = try #require(try record(s, where: downloading))
        #expect(live["running"] as? Bool == true && live["pack"] as? String == "Big" && live["pid"] as? Int == Int(fetcher.pid))
        #expect((live["total"] as? Int ?? 0) > 3 << 20 && (live["download"] as? String)?.count == 16)
        let watch = try run(s, ["status", "Big", "--watch", "--json"])
        #expect(watch.status == 0, "\(watch.stderr)")
        let lines = watch.out.split(separator: "\n").map { jsonObject(String($0)) }
        #expect(lines.count >= 2 && lines.last?["state"] as? String == "finished", "\(watch.out)")
        #expect(fetcher.wait(timeout: 20) && fetcher.exitStatus == 0, "\(fetcher.stderr)")
        #expect(try run(s, ["cat", "files/big.bin", "--pack", "Big"]).stdoutBytes == noise(3 << 20, seed: 11))
        let all = try run(s, ["status", "--json"])
        #expect(all.status == 0 && jsonObject(all.out)["state"] as? String == "finished")
    }

    @Test func cancelStopsAnotherProcesssDownloadAndLeavesNothing() throws {
        let (s, nginx) = try start()
        defer { nginx.stop() }
        let fetcher = try fetch(s, nginx)
        _ = try #require(try record(s, where: downloading))
        let cancel = try run(s, ["cancel", "Big"])
        #expect(cancel.status == 0 && cancel.stderr.contains("Big: cancelled"), "\(cancel.stderr)")
        #expect(fetcher.wait(timeout: 20) && fetcher.exitStatus == 1)
        #expect(fetcher.stderr.contains("download of 'Big'") && fetcher.stderr.contains("cancelled"), "\(fetcher.stderr)")
        #expect(try run(s, ["cat", "files/big.bin", "--pack", "Big"]).status != 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir.file("container/staging")).filter { $0.hasSuffix(".download") }.isEmpty)
        let after = try run(s, ["cancel", "Big"])
        #expect(after.status == 1 && after.stderr.contains("no download of 'Big' is in progress"), "\(after.stderr)")
    }

    @Test func pauseAndResumeAnotherProcesssDownload() throws {
        let (s, nginx) = try start()
        defer { nginx.stop() }
        let fetcher = try fetch(s, nginx)
        _ = try #require(try record(s, where: downloading))
        let pause = try run(s, ["pause", "Big"])
        #expect(pause.status == 0 && pause.stderr.contains("Big: paused at"), "\(pause.stderr)")
        let text = try run(s, ["status", "Big"])
        #expect(text.out.hasPrefix("Big  paused  ") && text.out.contains("(paused by request)"), "\(text.out)")
        #expect(fetcher.process.isRunning)
        let resume = try run(s, ["resume", "Big"])
        #expect(resume.status == 0 && resume.stderr.contains("Big: downloading"), "\(resume.stderr)")
        #expect(fetcher.wait(timeout: 20) && fetcher.exitStatus == 0, "\(fetcher.stderr)")
        #expect(try run(s, ["cat", "files/big.bin", "--pack", "Big"]).stdoutBytes == noise(3 << 20, seed: 11))
    }

    @Test func aKilledDownloaderLeavesAnInterruptedRecordThatCancelClears() throws {
        let (s, nginx) = try start()
        defer { nginx.stop() }
        let fetcher = try fetch(s, nginx)
        _ = try #require(try record(s, where: downloading))
        fetcher.signal(SIGKILL)
        #expect(fetcher.wait(timeout: 20) && fetcher.wasKilled)
        let stale = try #require(try record(s) { $0["running"] as? Bool == false })
        #expect(stale["state"] as? String == "downloading")
        #expect(try run(s, ["status", "Big"]).out.hasPrefix("Big  interrupted  "))
        let watch = try run(s, ["status", "Big", "--watch"])
        #expect(watch.status == 1 && watch.stderr.contains("its process died"), "\(watch.stderr)")
        let staging = { try FileManager.default.contentsOfDirectory(atPath: s.dir.file("container/staging")).filter { $0.hasSuffix(".download") } }
        #expect(try staging().count == 1)
        let cancel = try run(s, ["cancel", "Big"])
        #expect(cancel.status == 0 && cancel.stderr.contains("Big: cancelled"), "\(cancel.stderr)")
        #expect(try staging().isEmpty)
        #expect(jsonObject(try run(s, ["status", "Big", "--json"]).out)["state"] as? String == "cancelled")
    }

    @Test func anotherProcesssStatusUpdatesSeeTheDaemonsProgressWithinMilliseconds() throws {
        let (s, nginx) = try start()
        defer { nginx.stop() }
        _ = try AssetPackManager(container: .init(path: s.dir.file("container")))
        // The daemon downloads (fetch hands its download to it); the observer
        // is a process of its own, so that what is measured is the record's
        // way from writer to reader, not this test process's load.
        let daemon = try DaemonTests.Daemon(s.dir.file("container"))
        let watcher = try Child(Helper.binary, ["watch-status", "--container", s.dir.file("container"), "--id", "Big"])
        _ = eventually(timeout: 10) { FileManager.default.fileExists(atPath: s.dir.file("container/downloads")) }
        let fetcher = try fetch(s, nginx)
        #expect(try record(s, where: downloading)?["pid"] as? Int == Int(daemon.child.pid), "the daemon writes the record")
        #expect(fetcher.wait(timeout: 30) && fetcher.exitStatus == 0, "\(fetcher.stderr)")
        defer { daemon.stop() }
        #expect(watcher.wait(timeout: 30) && watcher.exitStatus == 0, "\(watcher.stderr)")
        let report = jsonObject(watcher.stdout)
        #expect(report["states"] as? [String] == ["began", "downloading", "finished"], "\(report)")
        let updates = report["updates"] as? Int ?? 0
        let median = report["median"] as? Double ?? 1
        // nginx's limit_rate sends in bursts of some 400 KiB: a handful of updates.
        #expect(updates >= 3 && median < 0.1, "\(report)")
    }

    @Test func refusals() throws {
        let s = try Site(keys: false)
        _ = try AssetPackManager(container: .init(path: s.dir.file("container")))
        for verb in ["pause", "resume", "cancel"] {
            let r = try run(s, [verb, "Nope"])
            #expect(r.status == 1 && r.stderr.contains("no download of 'Nope' is in progress"), "\(verb): \(r.stderr)")
        }
        let none = try run(s, ["status", "Nope"])
        #expect(none.status == 1 && none.stderr.contains("no download of 'Nope' is recorded"), "\(none.stderr)")
        let timeout = try run(s, ["pause", "Nope", "--timeout", "0"])
        #expect(timeout.status == 64 && timeout.stderr.contains("'--timeout' must be more than 0"), "\(timeout.stderr)")
        let empty = try run(s, ["status", "--json"])
        #expect(empty.status == 0 && empty.out.isEmpty)
    }
}
