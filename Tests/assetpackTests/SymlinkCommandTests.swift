import Foundation
import Testing
import TestSupport

/// Issue 9, finding 3, through the real `assetpack`: a symlink planted at a
/// pack's lock file makes `install` fail with one line naming it, and the
/// file it points at is not created; `verify` reports the link and
/// `verify --repair` moves it aside.
@Suite struct SymlinkCommandTests {
    @Test func installRefusesASymlinkedPackLock() throws {
        let s = TemporaryDirectory("symlink-cli")
        try s.write("src/manifest.json", """
            {"assetPackID": "com.example.link", "downloadPolicy": {"onDemand": {}}, "fileSelectors": [{"file": "notes.txt"}]}
            """)
        try s.write("src/notes.txt", String(repeating: "notes ", count: 100))
        #expect(try CLI.assetpack(["package", s.path + "/src/manifest.json", "-o", s.path + "/p.zip"]).status == 0)
        #expect(try CLI.assetpack(["ls"], container: s.container).status != 0)   // nothing there yet
        try FileManager.default.createDirectory(atPath: s.container + "/locks/packs", withIntermediateDirectories: true)
        let link = s.container + "/locks/packs/com.example.link.lock"
        let outside = s.path + "/planted"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside)

        let install = try CLI.assetpack(["install", s.path + "/p.zip"], container: s.container)
        let lines = install.stderr.split(separator: "\n")
        #expect(install.status == 1 && lines.count == 1, "\(install.status): \(install.stderr)")
        #expect(install.stderr.contains(link) && install.stderr.contains("symbolic link"), "\(install.stderr)")
        #expect(!FileManager.default.fileExists(atPath: outside), "install created the lock's target (uid \(getuid()))")

        let verify = try CLI.assetpack(["verify"], container: s.container)
        #expect(verify.status == 4 && verify.out.contains("layout.symlink"), "\(verify.status): \(verify.out) \(verify.stderr)")
        let repair = try CLI.assetpack(["verify", "--repair"], container: s.container)
        #expect(repair.status == 1, "\(repair.status): \(repair.out) \(repair.stderr)")
        #expect(try CLI.assetpack(["install", s.path + "/p.zip"], container: s.container).status == 0)
        #expect(!FileManager.default.fileExists(atPath: outside))
    }
}
