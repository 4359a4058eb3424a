import Foundation
import Testing
import AssetPacks
import AssetSystem
import TestSupport

/// `assetpack sync`'s policies through the real binary against nginx on
/// 127.0.0.1: prefetch packs deferred on battery and load (essential ones
/// not), the concurrency cap across processes, an essential pack that
/// failed fetched later on demand, and the refused option values.
@Suite struct SyncPolicyTests {
    typealias Site = PublishCommandTests.Site
    static let essential = DownloadCommandTests.essential

    /// The machine's conditions, as files under a root of their own.
    struct System {
        let root: String
        func write(_ relative: String, _ text: String) throws {
            let path = root + "/" + relative
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try (text + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        func onBattery() throws {
            try write("sys/class/power_supply/BAT0/type", "Battery")
            try write("sys/class/power_supply/BAT0/status", "Discharging")
            try write("sys/class/power_supply/AC/type", "Mains")
            try write("sys/class/power_supply/AC/online", "0")
        }
    }

    /// `assetpack sync --event first-installation` in the background.
    func sync(_ s: Site, _ nginx: NginxHost, catalog: String = "catalog.json", system: System, _ extra: [String]) throws -> Child {
        try Child(CLI.binary, ["sync", "--event", "first-installation", "--catalog", nginx.baseURL + "/" + catalog] + extra,
                  environment: ["ASSETPACKS_CONTAINER": s.dir.container, "ASSETPACKS_SYSTEM_ROOT": system.root])
    }

    func cat(_ s: Site, _ pack: String) throws -> Program.Result {
        try CLI.assetpack(["cat", "files/data.txt", "--pack", pack], container: s.dir.container)
    }

    /// Base (essential) and Extra (prefetch) for the first installation;
    /// sync under `conditions` must install Base, defer Extra with
    /// `reason`, and go on with it only after `relieve`.
    func deferral(_ conditions: (System) throws -> Void, reason: String, extra: [String] = [],
                  relieve: (System) throws -> Void) throws {
        let s = try Site(keys: false)
        #expect(try s.publish([try s.pack("Base", "base", policy: Self.essential), try s.pack("Extra", "extra")]).status == 0)
        let nginx = try NginxHost(root: s.out)
        defer { nginx.stop() }
        let system = System(root: s.dir.directory("system"))
        try conditions(system)
        let child = try sync(s, nginx, system: system, ["--recheck-interval", "0.1"] + extra)
        #expect(eventually(timeout: 30) { child.stderr.contains("Extra: deferred: " + reason) }, "\(child.stderr)")
        #expect(child.stderr.contains("Base: version 1 installed"), "\(child.stderr)")
        // Several re-checks later the prefetch pack still waits.
        Thread.sleep(forTimeInterval: 0.5)
        #expect(child.process.isRunning, "\(child.stderr)")
        #expect(try cat(s, "Extra").status != 0)
        #expect(nginx.accessLog.filter { $0.uri.hasPrefix("/Extra-") }.isEmpty)
        try relieve(system)
        #expect(child.wait(timeout: 30))
        #expect(child.exitStatus == 0, "\(child.stderr)")
        #expect(child.stderr.contains("Extra: version 1 installed"), "\(child.stderr)")
        #expect(child.stderr.components(separatedBy: "Extra: deferred").count == 2, "reported once: \(child.stderr)")
        #expect(try cat(s, "Extra").out == "extra")
    }

    @Test(.timeLimit(.minutes(3)))
    func onBatteryAPrefetchPackWaitsForMainsAndAnEssentialOneDoesNot() throws {
        try deferral({ try $0.onBattery() }, reason: "the machine is on battery",
                     relieve: { try $0.write("sys/class/power_supply/AC/online", "1") })
    }

    @Test(.timeLimit(.minutes(3)))
    func onAHighLoadAPrefetchPackWaitsForItToFall() throws {
        try deferral({ try $0.write("proc/loadavg", "7.50 3.00 1.00 9/300 4242") },
                     reason: "the machine is busy (1-minute load average above 2.0)", extra: ["--max-load", "2"],
                     relieve: { try $0.write("proc/loadavg", "0.50 3.00 1.00 1/300 4242") })
    }

    @Test(.timeLimit(.minutes(3)))
    func ignoreBatteryDoesNotDeferAndJSONSaysDeferredForLoad() throws {
        let s = try Site(keys: false)
        #expect(try s.publish([try s.pack("Extra", "extra")]).status == 0)
        let nginx = try NginxHost(root: s.out)
        defer { nginx.stop() }
        let system = System(root: s.dir.directory("system"))
        try system.onBattery()
        let child = try sync(s, nginx, system: system, ["--ignore-battery", "--json"])
        #expect(child.wait(timeout: 30))
        #expect(child.exitStatus == 0 && child.stdout.contains(#""id":"Extra""#) && child.stdout.contains(#""result":"installed""#),
                "\(child.stdout)")
        #expect(!child.stdout.contains("deferred"))

        #expect(try s.publish([try s.pack("Extra", "extra 2", version: 2)]).status == 0)
        try system.write("proc/loadavg", "9.00 1 1 1/1 1")
        let busy = try sync(s, nginx, system: system, ["--ignore-battery", "--json", "--max-load", "1.5", "--recheck-interval", "0.1"])
        #expect(eventually(timeout: 30) { busy.stdout.contains(#""result":"deferred""#) }, "\(busy.stdout) \(busy.stderr)")
        #expect(busy.stdout.contains(#""message":"the machine is busy (1-minute load average above 1.5)""#), "\(busy.stdout)")
        try system.write("proc/loadavg", "0.00 1 1 1/1 1")
        #expect(busy.wait(timeout: 30) && busy.exitStatus == 0, "\(busy.stderr)")
        #expect(try cat(s, "Extra").out == "extra 2")
    }

    /// Two syncs of two catalogs in one container, each with one 768 KiB
    /// prefetch pack received at 512 KiB/s. With `holdingSlot`, the test
    /// holds slot 0 until both have said they wait for it.
    func twoSyncs(maxConcurrent: Int, holdingSlot: Bool = false) throws -> (Child, Child, Site) {
        let s = try Site(keys: false)
        for (id, seed) in [("One", 1), ("Two", 2)] {
            try s.dir.write("src/\(id)/files/big.bin", noise(768 << 10, seed: UInt64(seed)))
            let r = try CLI.assetpack(["publish", try s.pack(id, id), "--to", s.out + "/" + id])
            #expect(r.status == 0, "\(r.stderr)")
        }
        let nginx = try NginxHost(root: s.out)
        defer { nginx.stop() }
        let system = System(root: s.dir.directory("system"))
        var slot: FileLock?
        if holdingSlot { slot = try FileLock(path: s.dir.directory("container/downloads/slots") + "/0.lock") }
        let caps = ["--max-rate", "512K", "--max-concurrent", String(maxConcurrent), "--recheck-interval", "0.1"]
        let one = try sync(s, nginx, catalog: "One/catalog.json", system: system, caps)
        let two = try sync(s, nginx, catalog: "Two/catalog.json", system: system, caps)
        if holdingSlot {
            let waiting = "deferred: the container's download slot is in use"
            #expect(eventually(timeout: 30) { one.stderr.contains(waiting) && two.stderr.contains(waiting) }, "\(one.stderr) | \(two.stderr)")
            slot = nil
        }
        #expect(one.wait(timeout: 30) && two.wait(timeout: 30))
        #expect(one.exitStatus == 0 && two.exitStatus == 0, "\(one.stderr) \(two.stderr)")
        _ = consume slot
        return (one, two, s)
    }

    @Test(.timeLimit(.minutes(3)))
    func oneSlotMakesTwoProcessesDownloadOneAfterTheOther() throws {
        let (one, two, s) = try twoSyncs(maxConcurrent: 1, holdingSlot: true)
        let manager = try AssetPackManager(container: .init(path: s.dir.container))
        let dates = try ["One", "Two"].map { try manager.assetPack(withID: $0).installDate }.sorted()
        // The second download began after the first ended, and takes 1.5 s at the cap.
        #expect(dates[1].timeIntervalSince(dates[0]) >= 1.0, "\(dates)")
        #expect([one, two].allSatisfy { $0.stderr.contains("version 1 installed") })
    }

    @Test(.timeLimit(.minutes(3)))
    func twoSlotsLetTwoProcessesDownloadAtOnce() throws {
        let (one, two, _) = try twoSyncs(maxConcurrent: 2)
        #expect(!one.stderr.contains("deferred") && !two.stderr.contains("deferred"), "\(one.stderr) | \(two.stderr)")
    }

    @Test(.timeLimit(.minutes(3)))
    func anEssentialPackThatFailedInSyncIsFetchedOnDemandLater() throws {
        let s = try Site(keys: false)
        #expect(try s.publish([try s.pack("Base", "base", policy: Self.essential)]).status == 0)
        let file = try #require(try s.files().first { $0.hasPrefix("Base-") })
        try FileManager.default.moveItem(atPath: s.out + "/" + file, toPath: s.dir.file(file))
        let nginx = try NginxHost(root: s.out)
        defer { nginx.stop() }
        let url = nginx.baseURL + "/catalog.json"
        let failed = try CLI.assetpack(["sync", "--event", "first-installation", "--catalog", url], container: s.dir.container)
        #expect(failed.status == 1 && failed.stderr.contains("Base: failed: download of 'Base'"), "\(failed.stderr)")
        #expect(try cat(s, "Base").status != 0)
        try FileManager.default.moveItem(atPath: s.dir.file(file), toPath: s.out + "/" + file)
        let fetched = try CLI.assetpack(["fetch", "Base", "--catalog", url], container: s.dir.container)
        #expect(fetched.status == 0 && fetched.stderr.contains("Base: version 1 installed"), "\(fetched.stderr)")
        #expect(try cat(s, "Base").out == "base")
    }

    /// A manifest without platforms is published as `"platforms":[]`, which
    /// means every platform: sync installs it. Every pack sync does not
    /// download is said, with its reason, on stderr and as a JSON line.
    @Test(.timeLimit(.minutes(3)))
    func packsWithoutPlatformsInstallAndEverySkippedPackIsSaid() throws {
        let s = try Site(keys: false)
        #expect(try s.publish([
            try s.pack("Any", "any", policy: Self.essential, platforms: nil),
            try s.pack("Empty", "empty", platforms: []),
            try s.pack("Phone", "phone", policy: Self.essential, platforms: ["iOS"]),
            try s.pack("Later", "later", policy: #"{ "prefetch": { "installationEventTypes": ["subsequentUpdate"] } }"#),
            try s.pack("Extra", "extra", policy: #"{ "onDemand": {} }"#),
        ]).status == 0)
        let listed = Dictionary(uniqueKeysWithValues: try s.entries().map { ($0["assetPackID"] as? String ?? "", $0["platforms"] as? [String]) })
        #expect(listed["Any"] == [] && listed["Empty"] == [] && listed["Phone"] == ["iOS"])
        let nginx = try NginxHost(root: s.out)
        defer { nginx.stop() }
        let sync = ["sync", "--event", "first-installation", "--catalog", nginx.baseURL + "/catalog.json"]
        let r = try CLI.assetpack(sync, container: s.dir.container)
        #expect(r.status == 0, "\(r.stderr)")
        for line in ["Any: version 1 installed", "Empty: version 1 installed", "Phone: skipped: its platforms (iOS) exclude linux",
                     "Later: skipped: its prefetch policy is for subsequentUpdate, not firstInstallation",
                     "Extra: skipped: on demand (assetpack fetch downloads it)"] {
            #expect(r.stderr.contains(line + "\n"), "\(line) in \(r.stderr)")
        }
        #expect(try cat(s, "Any").out == "any" && cat(s, "Empty").out == "empty")
        #expect(try cat(s, "Phone").status != 0)
        let json = try CLI.assetpack(sync + ["--json"], container: s.dir.container)
        #expect(json.status == 0, "\(json.stderr)")
        let lines = json.out.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] }
        let results = Dictionary(uniqueKeysWithValues: lines.map { ($0["id"] ?? "", ($0["result"] ?? "", $0["message"])) })
        #expect(results.count == 5, "\(json.out)")
        #expect(results["Any"]?.0 == "upToDate" && results["Empty"]?.0 == "upToDate")
        #expect(results["Phone"]?.0 == "skipped" && results["Phone"]?.1 == "its platforms (iOS) exclude linux")
        #expect(results["Later"]?.0 == "skipped" && results["Extra"]?.1 == "on demand (assetpack fetch downloads it)")
    }

    @Test(arguments: [
        (["--max-rate", "0"], "'--max-rate' must be more than 0"),
        (["--max-rate", "fast"], "'--max-rate' needs a number of bytes (with K, M, G or T), not 'fast'"),
        (["--max-concurrent", "0"], "'--max-concurrent' needs a whole number from 1 to 64"),
        (["--max-concurrent", "65"], "'--max-concurrent' needs a whole number from 1 to 64"),
        (["--max-load", "0"], "'--max-load' must be more than 0"),
        (["--max-load", "high"], "'--max-load' needs a non-negative number, not 'high'"),
        (["--recheck-interval", "0"], "'--recheck-interval' must be more than 0"),
        (["--recheck-interval", "3601"], "'--recheck-interval' may be at most 3600 seconds"),
    ])
    func badCapsAreUsageErrors(args: [String], message: String) throws {
        let dir = TemporaryDirectory("sync-caps")
        let r = try CLI.assetpack(["sync", "--event", "first-installation", "--catalog", "http://127.0.0.1:9/catalog.json"] + args,
                                  container: dir.container)
        #expect(r.status == 64 && r.stderr.contains(message), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.container))
    }
}
