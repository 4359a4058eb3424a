import Foundation
import Testing
import AssetPacks
import TestSupport

private let soakCampaign = ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1"

/// Delta updates through the real binary: `package` → `publish --sign` →
/// version 1 installed → version 2 (1 % of the members changed, 1 % added,
/// 1 % removed) published → `fetch` copies what is installed and fetches
/// the rest, counted at the server; and a delta update SIGKILLed at random
/// moments resumes without fetching again what it had.
@Suite(.timeLimit(.minutes(soakCampaign ? 30 : 2)))
struct DeltaUpdateTests {
    typealias Site = PublishCommandTests.Site

    /// A pack `P` of `count` members of `memberSize` bytes (distinct noise)
    /// under `src/P/files`, whose manifest has `version`.
    final class Pack {
        let site: Site
        let count: Int
        let memberSize: Int
        /// What each member holds now, by index; nil for a removed one.
        var members: [Int: UInt64] = [:]
        private let pool: [UInt8]

        init(_ site: Site, count: Int, memberSize: Int) throws {
            self.site = site
            self.count = count
            self.memberSize = memberSize
            pool = noise(memberSize * 64 + 4096, seed: 0xDE17A)
            try FileManager.default.createDirectory(atPath: site.dir.file("src/P/files"), withIntermediateDirectories: true)
            for i in 0..<count { try write(i, generation: 0) }
        }

        /// Member `i`'s bytes in `generation`: a window of the pool, its first
        /// 16 bytes naming it (so no two members or generations are alike).
        func bytes(_ i: Int, generation: UInt64) -> [UInt8] {
            let start = (i &* 977 &+ Int(generation) &* 131) % (pool.count - memberSize)
            var b = Array(pool[start..<start + memberSize])
            withUnsafeBytes(of: (UInt64(i), generation)) { b.replaceSubrange(0..<16, with: $0) }
            return b
        }

        func write(_ i: Int, generation: UInt64) throws {
            let path = site.dir.file(String(format: "src/P/files/%05d.bin", i))
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes(i, generation: generation))) else {
                throw TestFailure("cannot write \(path)")
            }
            members[i] = generation
        }

        func remove(_ i: Int) throws {
            try FileManager.default.removeItem(atPath: site.dir.file(String(format: "src/P/files/%05d.bin", i)))
            members[i] = nil
        }

        /// Version 2: `changed` members changed, evenly spread (apart by more
        /// than the ranges' merge gap), `added` added at the end and as many
        /// removed, each halfway between two changed ones.
        func changeForVersion2(changed: Int, added: Int) throws {
            let spacing = count / changed
            for k in 0..<changed { try write(k * spacing, generation: 1) }
            for k in 0..<added { try remove(k * spacing + spacing / 2) }
            for i in count..<count + added { try write(i, generation: 0) }
        }

        /// Packages the files as `P.zip` with `version`; returns its path.
        func package(version: Int) throws -> String {
            try site.dir.write("src/P/manifest.json", Array("""
                { "assetPackID": "P", "downloadPolicy": \(DownloadCommandTests.essential),
                  "fileSelectors": [ { "directory": "files", "compression": "stored" } ], "platforms": ["linux"], "version": \(version) }
                """.utf8))
            let path = site.dir.file("P-v\(version).zip")
            let r = try CLI.assetpack(["package", site.dir.file("src/P/manifest.json"), "-o", path])
            guard r.status == 0 else { throw TestFailure("package: \(r.stderr)") }
            return path
        }

        /// Publishes `path`; returns the published file's name.
        func publish(_ path: String) throws -> String {
            let r = try site.publish([path, "--sign", site.key])
            guard r.status == 0 else { throw TestFailure("publish: \(r.stderr)") }
            let entry = try #require(try site.entries().first { $0["assetPackID"] as? String == "P" })
            return try #require(entry["url"] as? String)
        }

        /// Checks the installed pack: the published file's SHA-256 and every member's bytes.
        func checkInstalled(_ published: String) throws {
            let manager = try AssetPackManager(container: .init(path: site.dir.container))
            let pack = try manager.assetPack(withID: "P")
            #expect(pack.sha256 == (try site.sha256(site.out + "/" + published)))
            for (i, generation) in members.sorted(by: { $0.key < $1.key }) where i % 97 == 0 || generation == 1 {
                let data = try manager.contents(at: String(format: "files/%05d.bin", i), searchingInAssetPackWithID: "P", verifyingChecksum: true)
                #expect(data == Data(bytes(i, generation: generation)), "member \(i)")
            }
            let verify = try CLI.assetpack(["verify", "--deep"], container: site.dir.container)
            #expect(verify.status == 0, "\(verify.out)\(verify.stderr)")
        }
    }

    func fetch(_ site: Site, _ base: String, _ extra: [String] = []) throws -> Program.Result {
        try CLI.assetpack(["fetch", "P", "--catalog", base + "/catalog.json", "--key", site.pub, "--container", site.dir.container] + extra)
    }

    @Test(arguments: ["0", "65", "four", "-1"])
    func maxRangeRequestsOutsideOneToSixtyFourIsAUsageError(value: String) throws {
        let site = try Site()
        let r = try fetch(site, "http://127.0.0.1:9", ["--max-range-requests", value])
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.contains("'--max-range-requests' needs a whole number from 1 to 64"), "\(r.stderr)")
    }

    /// The bytes a server sent for a delta update, counted in its own log:
    /// nginx's `$bytes_sent` (headers included), serve's body bytes.
    @Test(arguments: ["nginx", "serve"])
    func anUpdateOfOnePercentTransfersAFewPercentOfThePack(server: String) throws {
        let site = try Site()
        // 2,000 members, 64 MiB (the soak: 1 GiB). Each member costs its
        // piece map line and its glue (~0.8 % of a 32 KiB member) besides.
        let pack = try Pack(site, count: 2000, memberSize: soakCampaign ? 512 << 10 : 32 << 10)
        let v1 = try pack.package(version: 1)
        #expect(try CLI.assetpack(["install", v1, "--id", "P"], container: site.dir.container).status == 0)
        try pack.changeForVersion2(changed: 20, added: 20)
        let published = try pack.publish(try pack.package(version: 2))
        let size = try #require(Journal.size(site.out + "/" + published))

        // (method, target, status, bytes, range) of every request but the catalog's.
        let files: [(uri: String, status: Int, bytes: Int, range: String)]
        if server == "nginx" {
            let nginx = try NginxHost(root: site.out)
            defer { nginx.stop() }
            let r = try fetch(site, nginx.baseURL)
            #expect(r.status == 0, "\(r.stderr)")
            _ = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
            files = nginx.accessLog.filter { !$0.uri.hasSuffix("catalog.json") && !$0.uri.hasSuffix(".sig") }
                .map { ($0.uri, $0.status, $0.bytesSent, $0.range) }
        } else {
            let serve = try ServeHost(root: site.out, executable: CLI.binary)
            defer { serve.stop() }
            // One range at a time here (four at once against nginx).
            let r = try fetch(site, serve.baseURL, ["--max-range-requests", "1"])
            #expect(r.status == 0, "\(r.stderr)")
            _ = serve.accessLog(count: 1) { $0.target.hasSuffix(".zip") }
            files = serve.accessLog.filter { !$0.target.hasSuffix("catalog.json") && !$0.target.hasSuffix(".sig") }
                .map { ($0.target, $0.status, $0.bodyBytes, $0.range) }
        }
        try pack.checkInstalled(published)
        let sent = files.reduce(0) { $0 + $1.bytes }
        print("DeltaUpdateTests (\(server)): \(sent) bytes sent for a \(size)-byte pack (\(String(format: "%.2f", 100 * Double(sent) / Double(size))) %) " +
              "in \(files.count) requests")
        #expect(files.allSatisfy { $0.status == 200 || $0.status == 206 }, "\(files)")
        #expect(files.filter { $0.uri.hasSuffix(".zip") }.allSatisfy { $0.status == 206 && !$0.range.hasSuffix("-") })
        #expect(sent <= size * 3 / 100, "\(sent) bytes of \(size)")

        let status = try CLI.assetpack(["status", "P", "--json"], container: site.dir.container)
        let record = jsonObject(status.out)
        #expect(record["mode"] as? String == "delta" && record["state"] as? String == "finished", "\(status.out)")
        #expect((record["reused"] as? Int ?? 0) > size * 9 / 10 && (record["fetched"] as? Int ?? .max) <= sent, "\(status.out)")
    }

    @Test func aPieceMapPointingOutsideTheFileInAReSignedCatalogEndsInTheFullDownload() throws {
        let site = try Site()
        let pack = try Pack(site, count: 20, memberSize: 8 << 10)
        #expect(try CLI.assetpack(["install", try pack.package(version: 1), "--id", "P"], container: site.dir.container).status == 0)
        try pack.changeForVersion2(changed: 2, added: 1)
        let published = try pack.publish(try pack.package(version: 2))
        // The publisher's map with its last member moved past the end, and the
        // catalog's reference to it made to match and signed again by the key.
        var catalog = try #require(try JSONSerialization.jsonObject(with: Data(site.dir.read("out/catalog.json"))) as? [String: Any])
        var packs = try #require(catalog["packs"] as? [[String: Any]])
        var pieces = try #require(packs[0]["pieces"] as? [String: Any])
        let mapName = try #require(pieces["url"] as? String)
        var map = try #require(try JSONSerialization.jsonObject(with: Data(site.dir.read("out/" + mapName))) as? [String: Any])
        var members = try #require(map["members"] as? [[String: Any]])
        members[members.count - 1]["offset"] = try #require(map["size"] as? Int)
        map["members"] = members
        let mapBytes = try JSONSerialization.data(withJSONObject: map, options: [.sortedKeys])
        try site.dir.write("out/" + mapName, Array(mapBytes))
        (pieces["size"], pieces["sha256"]) = (mapBytes.count, try site.sha256(site.out + "/" + mapName))
        packs[0]["pieces"] = pieces
        catalog["packs"] = packs
        let catalogBytes = try JSONSerialization.data(withJSONObject: catalog, options: [.sortedKeys])
        try site.dir.write("out/catalog.json", Array(catalogBytes))
        try site.dir.write("out/catalog.json.sig", Array(try AssetPackSigningKey.load(path: site.key).signature(for: catalogBytes)))

        let server = try ServeHost(root: site.out, executable: CLI.binary)
        defer { server.stop() }
        let r = try fetch(site, server.baseURL)
        #expect(r.status == 0, "\(r.stderr)")
        try pack.checkInstalled(published)
        let record = jsonObject(try CLI.assetpack(["status", "P", "--json"], container: site.dir.container).out)
        let reason = record["reason"] as? String ?? ""
        #expect(record["mode"] as? String == "full" && record["state"] as? String == "finished", "\(record)")
        #expect(reason.hasPrefix("delta: ") && reason.contains("unusable piece map of 'P'") && reason.contains("past the end of the")
                && reason.hasSuffix("; full download"), "\(reason)")
        let whole = server.accessLog(count: 1) { $0.target == "/" + published && $0.status == 200 }
        #expect(whole.count == 1 && whole[0].range.isEmpty)
    }

    @Test func aDeltaUpdateKilledAtRandomMomentsResumesWhatItHad() throws {
        let kills = soakCampaign ? 50 : 10
        let seed = ProcessInfo.processInfo.environment["ASSETPACKS_KILL_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("DeltaUpdateTests: seed \(seed) (ASSETPACKS_KILL_SEED=\(seed) replays the moments), \(kills) kills")
        var moments = SplitMix64(seed: seed)

        let site = try Site()
        let pack = try Pack(site, count: 300, memberSize: 16 << 10)
        #expect(try CLI.assetpack(["install", try pack.package(version: 1), "--id", "P"], container: site.dir.container).status == 0)
        // 50 changed, 96 KiB apart: a range each, each slow.
        try pack.changeForVersion2(changed: 50, added: 10)
        let published = try pack.publish(try pack.package(version: 2))
        let server = try ServeHost(root: site.out, ["--throttle", "256K", "--fault-path", "*.zip"], executable: CLI.binary)
        defer { server.stop() }
        let arguments = ["fetch", "P", "--catalog", server.baseURL + "/catalog.json", "--key", site.pub, "--container", site.dir.container]
        let journal = try Journal(container: site.dir.container)
        /// The ranges the journal's list says were fetched.
        func fetched() -> [String] {
            guard let file = try? journal.file("P"), let text = try? String(contentsOfFile: file + ".ranges", encoding: .utf8) else { return [] }
            return text.split(separator: "\n").filter { $0.hasPrefix("f ") }.map(String.init)
        }

        var standing = 0
        for _ in 0..<kills {
            let child = try Child(CLI.binary, arguments)
            // Once one or two more ranges are in (at most 20 in all), or one
            // time in four at a random instant before that.
            let growth = 1 + Int(moments.next() % 2)
            let until = moments.next() % 4 == 0 ? Date().addingTimeInterval(Double(moments.next() % 400) / 1000) : .distantFuture
            #expect(eventually(timeout: 30) { !child.process.isRunning || Date() >= until || fetched().count >= standing + growth })
            #expect(child.process.isRunning, "the update ended before its kill: \(child.stderr)")
            child.signal(SIGKILL)
            #expect(child.wait(timeout: 20) && child.wasKilled)
            standing = fetched().count
        }
        let had = Set(fetched().map { line -> String in
            let w = line.split(separator: " ")
            return "bytes=\(w[1])-\(UInt64(w[2])! - 1)"
        })
        let before = server.accessLog.count
        let final = try CLI.assetpack(arguments)
        #expect(final.status == 0, "\(final.stderr)")
        try pack.checkInstalled(published)
        #expect(try journal.file("P") == nil && journal.partialFiles.isEmpty)
        // The last process asked for none of the ranges the list had.
        _ = server.accessLog(count: before + 1) { _ in true }
        let asked = server.accessLog.dropFirst(before).filter { $0.target.hasSuffix(".zip") }.map(\.range)
        #expect(!asked.isEmpty && asked.allSatisfy { !had.contains($0) }, "\(asked) \(had)")
        print("DeltaUpdateTests: \(had.count) ranges in place after \(kills) kills, \(asked.count) asked for by the last process")
    }
}
