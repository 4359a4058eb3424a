import Foundation
import Testing
import AssetPacks
import TestSupport

/// Installs, removals and verification through the C API, seen by the Swift API.
@Suite struct ChangeTests {
    let f: CFixture
    init() throws { f = try CFixture() }

    func drive(_ arguments: [String]) throws -> Program.Result { try CLibrary.drive(["-w", f.container] + arguments) }

    @Test func installReportsWhatChanged() throws {
        try f.manager.remove(assetPackWithID: "base")
        let first = try drive(["install", f.directory.file("base.zip")])
        #expect(first.status == 0 && first.out == "installed\n", "\(first.stderr)")
        #expect(try drive(["install", f.directory.file("base.zip")]).out == "unchanged\n")
        try f.directory.write("base/media/tiny.bin", [9, 9, 9])
        try CFixture.pack("base", root: f.directory.file("base"), to: f.directory.file("base2.zip"),
                          selectors: [.directory(".", compression: .stored)])
        #expect(try drive(["install", f.directory.file("base2.zip")]).out == "replaced\n")
        #expect(try f.manager.contents(at: "media/tiny.bin", searchingInAssetPackWithID: "base") == Data([9, 9, 9]))
    }

    /// `ap_install_flags` with `AP_INSTALL_BACKGROUND` installs (at nice 19 on
    /// a thread of the library's: BackgroundInstallTests) and leaves the
    /// calling thread's priority as it was; unknown flags are refused.
    @Test func aBackgroundInstallThroughTheCAPI() throws {
        try f.manager.remove(assetPackWithID: "base")
        let r = try drive(["install-flags", "1", f.directory.file("base.zip")])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.first == "installed")
        let nice = lines.first { $0.hasPrefix("nice ") }?.split(separator: " ").dropFirst().map(String.init)
        let policy = lines.first { $0.hasPrefix("policy ") }?.split(separator: " ").dropFirst().map(String.init)
        #expect(nice?.count == 2 && nice?.first == nice?.last, "\(r.out)")
        #expect(policy?.count == 2 && policy?.first == policy?.last, "\(r.out)")
        #expect(try f.manager.assetPack(withID: "base").id == "base")
        let bad = try drive(["install-flags", "0x4", f.directory.file("base.zip")])
        #expect(bad.status != 0)
        let refusal = DriverError(bad.stderr)
        #expect(refusal?.code == -100 && bad.stderr.contains("unknown bits 0x4"), "\(bad.stderr)")
    }

    @Test func aPlainZipIsInstalledUnderTheIDGiven() throws {
        let zip = f.directory.file("plain.zip")
        try Data(try f.manager.contents(at: "shared.txt", searchingInAssetPackWithID: "extra")).write(to: URL(fileURLWithPath: f.directory.file("s.txt")))
        let z = try Program.run("zip", ["-q", "-0", zip, "s.txt"], directory: f.directory.path)
        try #require(z.status == 0, "\(z.stderr)")
        let r = try drive(["install", zip, "plain.pack"])
        #expect(r.status == 0 && r.out == "installed\n", "\(r.stderr)")
        #expect(try f.manager.contents(at: "s.txt", searchingInAssetPackWithID: "plain.pack") == Data("extra's\n".utf8))
    }

    @Test func removeTakesThePackAway() throws {
        #expect(try drive(["remove", "extra"]).status == 0)
        #expect(try f.manager.allAssetPacks().map(\.id) == ["base"])
        #expect(DriverError(try drive(["remove", "extra"]).stderr)?.code == -1)
        // With extra gone, shared.txt is no longer ambiguous.
        #expect(try drive(["read", "-", "shared.txt"]).out == "base's\n")
    }

    @Test func verifyOfAHealthyContainerFindsNothing() throws {
        let r = try drive(["verify", "deep"])
        #expect(r.status == 0 && r.out == "status 0 findings 0\n", "\(r.out) \(r.stderr)")
    }

    @Test func verifyReportsDamageWithFsckStatuses() throws {
        // An archive no pack names is damage that repair removes.
        try f.directory.write("container/packs/stray.zip", noise(100, seed: 3))
        let found = try CLibrary.drive([f.container, "verify"])
        #expect(found.status == 4, "\(found.out) \(found.stderr)")
        #expect(found.out.contains("archive.orphan 2 0 - ") && found.out.hasSuffix("status 4 findings 1\n"), "\(found.out)")
        let dry = try CLibrary.drive([f.container, "verify", "repair", "dry-run"])
        #expect(dry.status == 4)
        #expect(FileManager.default.fileExists(atPath: f.container + "/packs/stray.zip"))
        let repaired = try drive(["verify", "repair"])
        #expect(repaired.status == 1, "\(repaired.out) \(repaired.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.container + "/packs/stray.zip"))
        #expect(try drive(["verify"]).status == 0)
    }
}
