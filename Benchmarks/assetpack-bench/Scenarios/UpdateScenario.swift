import Foundation
import AssetPacks
import TestSupport

/// `update`: a pack of 2,000 stored members of noise (1 GiB; `--quick`:
/// 8 KiB each) in version 1, and version 2 with 1 % of the members changed,
/// 1 % added and 1 % removed, published (with its piece map and glue) and
/// served by nginx on loopback. Each contender has its own nginx, so the
/// bytes its access log counts are the contender's alone:
///
/// - `delta`: a fresh container with version 1 installed (before the
///   clock), then `ensureLocalAvailability(of:)` of version 2: the update
///   reads the piece map, copies the members version 1 has, fetches the glue
///   and the rest with `Range`, checks the SHA-256 and installs;
/// - `full`: a fresh container, `ensureLocalAvailability(of:)` of version 2:
///   the whole pack file, checked and installed (the catalog is fetched
///   before the clock starts in both).
///
/// The notes give the bytes each contender made nginx send per round (every
/// request but the catalog's and its signature's), as a share of the pack,
/// and what the piece map and glue add to the published directory.
enum UpdateScenario {
    static let scenario = Scenario(
        "update", "updating a 2,000-member pack (1 GiB) to a version with 1 % of members changed, 1 % added, 1 % removed, from nginx: time and bytes at the server"
    ) { ctx in try run(ctx) }

    static let packID = "Levels"
    static let members = 2_000
    /// The members version 2 changes, removes and adds: 1 % each.
    static var changed: Range<Int> { 0 ..< members / 100 }
    static var removed: Range<Int> { members / 100 ..< members / 50 }
    static var added: Range<Int> { members ..< members + members / 100 }

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let memberSize = ctx.scale.quick ? 8 << 10 : (1 << 30) / members
        let dir = ctx.workspace.root + "/update-\(memberSize >> 10)k"
        let site = dir + "/site", v1 = dir + "/v1.zip"
        try ctx.workspace.fill(dir, label: "a \(members)-member pack in two versions, the second published") {
            try build(memberSize: memberSize, in: dir, v1: v1, site: site)
        }
        let catalogData = try Data(contentsOf: URL(fileURLWithPath: site + "/catalog.json"))
        guard let entry = try AssetPackCatalog.parse(catalogData, source: site + "/catalog.json").entry(withID: packID) else {
            throw BenchError.failed("\(site)/catalog.json does not list \(packID)")
        }
        let container = dir + "/container"
        func fresh() { try? FileManager.default.removeItem(atPath: container) }
        defer { fresh() }
        let rounds = ctx.scale.installRounds

        var servers: [(name: String, host: NginxHost)] = []
        defer { servers.forEach { $0.host.stop() } }
        func server(_ name: String) throws -> String {
            let host = try NginxHost(root: site)
            servers.append((name, host))
            return host.baseURL + "/catalog.json"
        }
        let deltaCatalog = try server("delta"), fullCatalog = try server("full")
        let all: [(String, () throws -> Double)] = [
            ("delta", {
                fresh()
                defer { fresh() }
                return try download(deltaCatalog, into: container, installing: v1, sha256: entry.sha256)
            }),
            ("full", {
                fresh()
                defer { fresh() }
                return try download(fullCatalog, into: container, sha256: entry.sha256)
            }),
        ]
        let contenders = all.filter { ctx.scale.only?.contains($0.0) ?? true }
        let seconds = try Passes.run(contenders.map { ($0.0, $0.1) }, rounds: rounds)
        let sent = servers.filter { s in contenders.contains { $0.0 == s.name } }.map { s in
            let bytes = settledAccessLog(s.host).filter { !$0.uri.hasSuffix("/catalog.json") && !$0.uri.hasSuffix(".sig") }
                .reduce(0) { $0 + $1.bytesSent } / rounds
            return "\(s.name): nginx sent \(Format.count(bytes)) bytes a round, \(Format.fixed(100 * Double(bytes) / Double(entry.size), decimals: 2)) % of "
                + "the \(Format.count(Int(entry.size)))-byte pack"
        }
        let overhead = try piecesOverhead(site: site, entry: entry)
        return [ScenarioResult(
            name: "update",
            summary: "version 1 → 2 of a \(members)-member pack of \(Format.count(Int(entry.size))) bytes (1 % changed, 1 % added, 1 % removed) "
                + "from nginx on loopback: `ensureLocalAvailability` with version 1 installed (delta) and into an empty container (full); "
                + "bytes/s count the pack's size",
            measurements: Passes.measurements(names: contenders.map(\.0), seconds: seconds, units: 1, bytes: Double(entry.size)),
            basis: .throughput, reference: contenders.first?.0 ?? "delta",
            notes: sent + [overhead, "Both contenders verify the whole file's SHA-256 and install it with the same checks and syncs; "
                           + "`delta` copies from the installed version 1 what it holds. Up to 4 range requests at once (the default)."])]
    }

    /// Writes `v1` and publishes version 2 into `site`.
    static func build(memberSize: Int, in dir: String, v1: String, site: String) throws {
        let v1Members = Array(0 ..< members)
        let v2Members = Array(changed) + Array(removed.upperBound ..< members) + Array(added)
        try package(version: 1, members: v1Members, memberSize: memberSize, in: dir, output: v1)
        let v2 = dir + "/v2.zip"
        try package(version: 2, members: v2Members, memberSize: memberSize, in: dir, output: v2)
        _ = try AssetPackPublisher.publish(packsAt: [v2], to: site)
        try FileManager.default.removeItem(atPath: v2)
    }

    /// Packages `members` (`levels/NNNN.bin`, noise seeded by the index —
    /// and by the version for the changed ones) as version `version`.
    static func package(version: Int, members: [Int], memberSize: Int, in dir: String, output: String) throws {
        let content = dir + "/content-\(version)"
        try FileManager.default.createDirectory(atPath: content + "/levels", withIntermediateDirectories: true)
        for i in members {
            let seed = UInt64(i + 1) &* 1_000_003 &+ (version > 1 && changed.contains(i) ? UInt64(version) : 0)
            let path = content + "/levels/" + String(format: "%04d.bin", i)
            guard FileManager.default.createFile(atPath: path, contents: Data(noise(memberSize, seed: seed))) else {
                throw BenchError.failed("cannot write \(path)")
            }
        }
        let manifest = AssetPackManifest(assetPackID: packID, downloadPolicy: .onDemand,
                                         fileSelectors: [.directory("levels", compression: .stored)], platforms: [.linux],
                                         version: UInt64(version))
        _ = try Packager.package(manifest, root: content, manifestPath: dir + "/manifest-\(version).json", output: output)
        try FileManager.default.removeItem(atPath: content)
    }

    /// Makes pack `Levels` available in the container at `container` from
    /// the catalog at `catalogURL`, with the pack file `installing` installed
    /// first; returns the seconds `ensureLocalAvailability` took, after
    /// checking the installed version's SHA-256 is `sha256`, the catalog's.
    static func download(_ catalogURL: String, into container: String, installing first: String? = nil, sha256: String) throws -> Double {
        let manager = try AssetPackManager(container: .init(path: container), options: .init(catalog: .init(url: catalogURL)))
        if let first { _ = try manager.installPack(at: first) }
        let pack = try blocking { try await manager.assetPack(withID: packID) }
        let seconds = try timed { try blocking { try await manager.ensureLocalAvailability(of: pack) } }
        let installed: AssetPack = try manager.assetPack(withID: packID)
        guard installed.sha256 == sha256 else {
            throw BenchError.failed("update: the installed pack's SHA-256 is \(installed.sha256), the catalog's \(sha256)")
        }
        return seconds
    }

    /// The server's access log once it stops growing (nginx logs a request
    /// after its response is sent): 200 ms without a new entry, at most 10 s.
    static func settledAccessLog(_ host: NginxHost) -> [NginxHost.Access] {
        var log = host.accessLog
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            usleep(200_000)
            let again = host.accessLog
            if again.count == log.count { return again }
            log = again
        }
        return log
    }

    /// What the piece map and glue add to the published directory, as a
    /// share of the pack.
    static func piecesOverhead(site: String, entry: AssetPackCatalog.Entry) throws -> String {
        func size(_ name: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: site + "/" + name)[.size] as? Int) ?? 0
        }
        let pieces = try size(entry.url + ".pieces"), glue = try size(entry.url + ".glue")
        let share = 100 * Double(pieces + glue) / Double(entry.size)
        return "the piece map (\(Format.count(pieces)) bytes) and glue (\(Format.count(glue)) bytes) add "
            + "\(Format.fixed(share, decimals: 2)) % to the pack's \(Format.count(Int(entry.size))) bytes"
    }
}
