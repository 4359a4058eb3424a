import Foundation
import Testing
import AssetPacks
import TestSupport

/// Member names from other tools: CP437 names without the UTF-8 flag,
/// UTF-8 without it, and names that would collide when extracted.
@Suite(.enabled(if: Program.available("python3", "zip", "sh")))
struct ForeignNameTests {
    @Test func aPythonCP437ArchiveInstallsAndReadsByItsUnicodeName() throws {
        let directory = TemporaryDirectory("foreign-names")
        // zipfile writes a non-ASCII name as flagged UTF-8; made to encode it
        // as CP437 without the flag, it writes what older tools write, and
        // reads it back by the specification.
        let script = """
            import sys, zipfile
            zipfile.ZipInfo._encodeFilenameFlags = lambda self: (self.filename.encode('cp437'), self.flag_bits)
            with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
                z.writestr('filename_with_\\u00e6o\\u00e5.txt', b'EOF\\r\\n' * 100)
                z.writestr('r\\u00e9sum\\u00e9/\\u00c7a va.txt', b'bien')
            with zipfile.ZipFile(sys.argv[1]) as z:
                assert [i.flag_bits & 0x800 for i in z.infolist()] == [0, 0]
                print('\\n'.join(z.namelist()))
            """
        let path = directory.file("cp437.zip")
        let python = try Program.run("python3", ["-c", script, path])
        #expect(python.status == 0, "\(python.stderr)")
        #expect(python.out == "filename_with_\u{e6}o\u{e5}.txt\nr\u{e9}sum\u{e9}/\u{c7}a va.txt\n")

        let manager = try AssetPackManager(container: AssetPackManager.Container(path: directory.file("container")))
        try manager.installPack(at: path)
        #expect(try manager.members(inAssetPackWithID: "cp437").map(\.path)
            == ["filename_with_\u{e6}o\u{e5}.txt", "r\u{e9}sum\u{e9}/\u{c7}a va.txt"])
        #expect(Array(try manager.contents(at: "filename_with_\u{e6}o\u{e5}.txt")) == Array(String(repeating: "EOF\r\n", count: 100).utf8))
        #expect(Array(try manager.contents(at: "re\u{301}sume\u{301}/C\u{327}a va.txt", searchingInAssetPackWithID: "cp437")) == Array("bien".utf8))
    }

    @Test func anInfoZipArchiveOfUTF8NamesWithoutTheFlagReadsAsUTF8() throws {
        let directory = TemporaryDirectory("foreign-names")
        try FileManager.default.createDirectory(atPath: directory.file("t/caf\u{e9}"), withIntermediateDirectories: true)
        try Data("menu".utf8).write(to: URL(fileURLWithPath: directory.file("t/caf\u{e9}/cre\u{300}me.txt")))
        try Program.output("sh", ["-c", "cd t && LC_ALL=C.UTF-8 zip -q -r ../iz.zip ."], directory: directory.path)
        let manager = try AssetPackManager(container: AssetPackManager.Container(path: directory.file("container")))
        try manager.installPack(at: directory.file("iz.zip"))
        #expect(try manager.members(inAssetPackWithID: "iz").map(\.path) == ["caf\u{e9}/cr\u{e8}me.txt"])
        #expect(Array(try manager.contents(at: "caf\u{e9}/cr\u{e8}me.txt")) == Array("menu".utf8))
        #expect(Array(try manager.contents(at: "cafe\u{301}/cre\u{300}me.txt")) == Array("menu".utf8))
    }

    @Test func collisionsAreRefusedWithTheirOwnReasons() throws {
        let directory = TemporaryDirectory("foreign-names")
        let script = """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1] + '/case.zip', 'w') as z:
                z.writestr('Read.me', b'1'); z.writestr('READ.ME', b'2')
            with zipfile.ZipFile(sys.argv[1] + '/prefix.zip', 'w') as z:
                z.writestr('a', b'1'); z.writestr('a/b', b'2')
            """
        let python = try Program.run("python3", ["-c", script, directory.path])
        #expect(python.status == 0, "\(python.stderr)")
        let manager = try AssetPackManager(container: AssetPackManager.Container(path: directory.file("container")))
        for (name, reason, member) in [("case", AssetPackError.Reason.caseCollision, "READ.ME"),
                                       ("prefix", .fileDirectoryCollision, "a/b")] {
            do {
                try manager.installPack(at: directory.file(name + ".zip"))
                Issue.record("\(name) installed")
            } catch {
                #expect(error.code == .badArchive && error.reason == reason && error.member == member, "\(error)")
            }
        }
    }
}
