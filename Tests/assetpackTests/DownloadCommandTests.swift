import Foundation
import Testing
import TestSupport

/// `assetpack sync` and `fetch` through the real binary, against nginx on
/// 127.0.0.1 serving what `assetpack publish` wrote.
@Suite struct DownloadCommandTests {
    typealias Site = PublishCommandTests.Site

    static let essential = #"{ "essential": { "installationEventTypes": ["firstInstallation", "subsequentUpdate"] } }"#
    static let onDemand = #"{ "onDemand": {} }"#

    /// `args` for `assetpack`, with the site's catalog, key and container.
    func run(_ s: Site, _ nginx: NginxHost, _ args: [String], key: Bool = true) throws -> Program.Result {
        try CLI.assetpack(args + ["--catalog", nginx.baseURL + "/catalog.json"] + (key ? ["--key", s.pub] : []),
                          container: s.dir.file("container"))
    }

    func cat(_ s: Site, _ pack: String) throws -> Program.Result {
        try CLI.assetpack(["cat", "files/data.txt", "--pack", pack], container: s.dir.file("container"))
    }

    @Test func syncInstallsTheEventsPacksAndThenTheirUpdates() throws {
        let s = try Site()
        let packs = [try s.pack("Base", "one", version: 1, policy: Self.essential),
                     try s.pack("Extra", "extra", policy: Self.onDemand),
                     try s.pack("Phone", "phone", policy: Self.essential, platforms: ["iOS"])]
        #expect(try s.publish(packs + ["--sign", s.key]).status == 0)
        let nginx = try NginxHost(root: s.out)
        defer { nginx.stop() }

        let first = try run(s, nginx, ["sync", "--event", "first-installation"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("Base: version 1 installed"))
        #expect(first.stderr.contains("Phone: skipped: its platforms (iOS) exclude linux"))
        #expect(first.stderr.contains("Extra: skipped: on demand (assetpack fetch downloads it)"))
        #expect(try cat(s, "Base").out == "one")
        #expect(try cat(s, "Extra").status != 0)

        #expect(try s.publish([try s.pack("Base", "two", version: 2, policy: Self.essential), "--sign", s.key]).status == 0)
        let update = try run(s, nginx, ["sync", "--event", "subsequent-update", "--json"])
        #expect(update.status == 0, "\(update.stderr)")
        let lines = update.out.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.contains { $0["id"] as? String == "Base" && $0["result"] as? String == "installed" && $0["version"] as? String == "2" })
        #expect(try cat(s, "Base").out == "two")

        // Nothing new: nothing downloaded.
        let again = try run(s, nginx, ["sync", "--event", "subsequent-update"])
        #expect(again.status == 0 && again.stderr.contains("Base: version 2 already installed"), "\(again.stderr)")
    }

    @Test func fetchInstallsAnOnDemandPack() throws {
        let s = try Site()
        #expect(try s.publish([try s.pack("Extra", "extra", policy: Self.onDemand), "--sign", s.key]).status == 0)
        let nginx = try NginxHost(root: s.out)
        defer { nginx.stop() }
        let r = try run(s, nginx, ["fetch", "Extra", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out.contains(#""result":"installed""#))
        #expect(try cat(s, "Extra").out == "extra")
        let missing = try run(s, nginx, ["fetch", "Nope"])
        #expect(missing.status == 1 && missing.stderr.contains("Nope"), "\(missing.stderr)")
    }

    @Test func aPackThatFailsMakesSyncFailNamingIt() throws {
        let s = try Site(keys: false)
        let packs = [try s.pack("Good", "good", policy: Self.essential), try s.pack("Gone", "gone", policy: Self.essential)]
        #expect(try s.publish(packs).status == 0)
        let gone = try #require(try s.files().first { $0.hasPrefix("Gone-") && $0.hasSuffix(".zip") })
        try FileManager.default.removeItem(atPath: s.out + "/" + gone)
        let nginx = try NginxHost(root: s.out)
        defer { nginx.stop() }
        let r = try run(s, nginx, ["sync", "--event", "first-installation"], key: false)
        #expect(r.status == 1)
        #expect(r.stderr.contains("Gone: failed: download of 'Gone' from \(nginx.baseURL)/\(gone) failed: not found (HTTP 404)"), "\(r.stderr)")
        #expect(r.stderr.contains("failed: Gone"))
        #expect(try cat(s, "Good").out == "good")
    }

    @Test func aTamperedCatalogIsRefusedWithTheKey() throws {
        let s = try Site()
        #expect(try s.publish([try s.pack("Base", "one", policy: Self.essential), "--sign", s.key]).status == 0)
        try s.flipByte("out/catalog.json", at: 30)
        let nginx = try NginxHost(root: s.out)
        defer { nginx.stop() }
        let r = try run(s, nginx, ["sync", "--event", "first-installation"])
        #expect(r.status == 1 && r.stderr.contains("the signature does not verify"), "\(r.stderr)")
        #expect(try cat(s, "Base").status != 0)
    }

    @Test func threeProcessesFetchingOnePackShareOneDownload() throws {
        let s = try Site(keys: false)
        try s.dir.write("src/Big/files/big.bin", noise(4 << 20))
        #expect(try s.publish([try s.pack("Big", "big", policy: Self.onDemand)]).status == 0)
        let nginx = try NginxHost(root: s.out, extra: "limit_rate 8m;")
        defer { nginx.stop() }
        let processes = try (0..<3).map { _ in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: CLI.binary)
            p.arguments = ["fetch", "Big", "--catalog", nginx.baseURL + "/catalog.json", "--container", s.dir.file("container")]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        for p in processes { p.waitUntilExit() }
        #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        let gets = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 1 && gets.first?.status == 200, "\(gets)")
        #expect(try cat(s, "Big").out == "big")
    }

    @Test func usageErrors() throws {
        let s = try Site(keys: false)
        let noEvent = try CLI.assetpack(["sync", "--catalog", "http://127.0.0.1:9/catalog.json"], container: s.dir.file("container"))
        #expect(noEvent.status == 64 && noEvent.stderr.contains("--event is required"))
        let badEvent = try CLI.assetpack(["sync", "--catalog", "http://127.0.0.1:9/catalog.json", "--event", "boot"],
                                         container: s.dir.file("container"))
        #expect(badEvent.status == 64)
        let ftp = try CLI.assetpack(["fetch", "A", "--catalog", "ftp://h/catalog.json"], container: s.dir.file("container"))
        #expect(ftp.status == 64 && ftp.stderr.contains("http:// or https://"))
        let none = try CLI.assetpack(["fetch", "A"], container: s.dir.file("container"))
        #expect(none.status == 64 && none.stderr.contains("--catalog is required"))
    }
}
