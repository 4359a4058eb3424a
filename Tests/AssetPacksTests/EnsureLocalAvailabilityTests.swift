import Foundation
import Testing
import AssetPacks
import TestSupport

/// `AssetPackManager` with a catalog, against nginx on 127.0.0.1: statuses,
/// one download for concurrent callers, the public errors of downloads.
@Suite struct EnsureLocalAvailabilityTests {
    let site = BigPackSite("ensure-local")
    var dir: TemporaryDirectory { site.dir }

    func publish(version: UInt64) throws { try site.publish(version: version) }
    func manager(_ nginx: NginxHost) throws -> AssetPackManager { try site.manager(nginx) }

    @Test func concurrentCallersShareOneDownloadAndStatusesFollow() async throws {
        try publish(version: 1)
        let nginx = try NginxHost(root: dir.file("site"), extra: "limit_rate 8m;")
        defer { nginx.stop() }
        let manager = try manager(nginx)
        let pack = try await manager.assetPack(withID: "Big")
        #expect(pack.status == .downloadAvailable && pack.version == "1")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { try await manager.ensureLocalAvailability(of: pack) } }
            try await group.waitForAll()
        }
        let gets = nginx.accessLog(count: 1) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == 1 && gets.first?.status == 200, "\(gets)")
        #expect(try manager.contents(at: "big.bin", searchingInAssetPackWithID: "Big") == Data(noise(2 << 20, seed: 1)))
        #expect(try await manager.assetPack(withID: "Big").status == [.downloaded, .upToDate])

        try publish(version: 2)
        let outdated = try await manager.assetPack(withID: "Big")
        #expect(outdated.status == [.downloaded, .outOfDate, .updateAvailable] && outdated.version == "1")
        try await manager.ensureLocalAvailability(of: outdated)
        #expect(try manager.contents(at: "big.bin", searchingInAssetPackWithID: "Big") == Data(noise(2 << 20, seed: 2)))
        #expect(try await manager.allAssetPacks().map(\.status) == [[.downloaded, .upToDate]])
    }

    @Test func aDamagedPackFileOnTheServerIsAChecksumMismatchAndNothingIsInstalled() async throws {
        try publish(version: 1)
        let zip = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.file("site")).first { $0.hasSuffix(".zip") })
        var bytes = try dir.read("site/" + zip)
        bytes[bytes.count / 2] ^= 1
        try dir.write("site/" + zip, bytes)
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let manager = try manager(nginx)
        let pack = try await manager.assetPack(withID: "Big")
        do {
            try await manager.ensureLocalAvailability(of: pack)
            Issue.record("a damaged file was installed")
        } catch {
            #expect(error.code == .downloadChecksumMismatch && error.pack == "Big" && error.path == nginx.baseURL + "/" + zip, "\(error)")
        }
        #expect(try await manager.assetPack(withID: "Big").status == .downloadAvailable)
    }

    @Test func aMissingPackFileIsDownloadNotFound() async throws {
        try publish(version: 1)
        let zip = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.file("site")).first { $0.hasSuffix(".zip") })
        try FileManager.default.removeItem(atPath: dir.file("site/" + zip))
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let manager = try manager(nginx)
        do {
            try await manager.ensureLocalAvailability(of: try await manager.assetPack(withID: "Big"))
            Issue.record("no error")
        } catch {
            #expect(error.code == .downloadNotFound && error.pack == "Big", "\(error)")
        }
    }
}
