import Foundation
import Testing
import AssetPacks
import AssetStore  // only to compare the public defaults with the engine's
import TestSupport

/// Decompression bombs as a program meets them: `limitExceeded` with the
/// limit as its reason and the file and member named, limits a container
/// records and a manager may override, and `inspect` holding a pack file to
/// the same limits as an install.
@Suite struct LimitsTests {
    static let mebibyte: UInt64 = 1 << 20

    final class Fixture {
        let directory = TemporaryDirectory("limits")
        var container: AssetPackManager.Container { .init(path: directory.file("container")) }
        let manager: AssetPackManager

        init() throws {
            manager = try AssetPackManager(container: .init(path: directory.file("container")))
        }

        func bomb(_ name: String, _ size: UInt64) throws -> String {
            try ZeroBomb.write([("zeros.bin", size)], to: directory.file(name))
        }
    }

    @Test func theDefaultsAreTheEngines() {
        let d = AssetPackManager.Limits.defaults
        let e = PackLimits.defaults
        #expect(d.maximumMemberSize == e.maximumMemberSize && d.maximumCompressionRatio == e.maximumCompressionRatio)
        #expect(d.compressionRatioExemptSize == e.compressionRatioExemptSize && d.maximumPackSize == e.maximumPackSize)
        #expect(d.maximumMemberSize == 1 << 30 && d.maximumCompressionRatio == 200)
    }

    @Test func aBombIsRefusedWithTheLimitNamed() throws {
        let f = try Fixture()
        let path = try f.bomb("Bomb.zip", 2 << 30)
        do {
            try f.manager.installPack(at: path)
            Issue.record("installed a bomb")
        } catch {
            #expect(error.code == .limitExceeded && error.reason == .memberTooLarge, "\(error)")
            #expect(error.path == path && error.member == "zeros.bin" && error.pack == nil)
            #expect(error.message == "\(path): member 'zeros.bin' declares 2147483648 bytes inflated, more than the limit of 1073741824 bytes")
        }
        #expect(try f.manager.allAssetPacks().isEmpty)
        let ratio = try f.bomb("Ratio.zip", 64 * Self.mebibyte)
        do { try f.manager.installPack(at: ratio); Issue.record("installed a bomb") } catch {
            #expect(error.code == .limitExceeded && error.reason == .compressionRatioTooHigh, "\(error)")
            #expect(error.message.contains(" (1031:1), more than the limit of 200:1"), "\(error.message)")
        }
    }

    @Test func aContainerRecordsItsLimitsAndAManagerMayOverrideThem() throws {
        let f = try Fixture()
        #expect(try f.manager.recordedLimits() == nil && f.manager.limits() == .defaults)
        let raised = AssetPackManager.Limits(maximumCompressionRatio: 2000)
        try f.manager.setLimits(raised)
        #expect(try f.manager.recordedLimits() == raised && f.manager.limits() == raised)
        try f.manager.installPack(at: try f.bomb("Ratio.zip", 8 * Self.mebibyte))
        #expect(try f.manager.contents(at: "zeros.bin").count == 8 << 20)

        // A manager with limits of its own: the installed member is over them.
        let strict = try AssetPackManager(container: f.container, options: .init(limits: .defaults))
        #expect(try strict.limits() == .defaults)
        let reads: [(String, () throws(AssetPackError) -> Void)] = [
            ("contents", { () throws(AssetPackError) in _ = try strict.contents(at: "zeros.bin") }),
            ("descriptor", { () throws(AssetPackError) in _ = try strict.descriptor(for: "zeros.bin", searchingInAssetPackWithID: "Ratio") }),
        ]
        for (name, read) in reads {
            do { try read(); Issue.record("\(name) read a member over the limits") } catch {
                #expect(error.code == .limitExceeded && error.reason == .compressionRatioTooHigh, "\(error)")
                #expect(error.pack == "Ratio" && error.member == "zeros.bin" && error.path?.hasSuffix(".zip") == true)
            }
        }
        try f.manager.setLimits(nil)
        #expect(try f.manager.recordedLimits() == nil)
        #expect(throws: AssetPackError.self) { _ = try f.manager.contents(at: "zeros.bin") }
    }

    @Test func inspectHoldsAPackFileToTheLimits() throws {
        let f = try Fixture()
        let path = try f.bomb("Ratio.zip", 8 * Self.mebibyte)
        do { _ = try AssetPackFile.inspect(at: path); Issue.record("inspected a bomb") } catch {
            #expect(error.code == .limitExceeded && error.member == "zeros.bin" && error.path == path, "\(error)")
        }
        let lifted = try AssetPackFile.inspect(at: path, limits: nil)
        #expect(lifted.members.map(\.size) == [8 << 20])
        #expect(try AssetPackFile.inspect(at: path, limits: .init(maximumCompressionRatio: 2000)) == lifted)
    }
}
