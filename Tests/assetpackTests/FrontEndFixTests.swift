import Foundation
import Testing
import TestSupport

/// What issue 8 found at the command line: a damaged stored member printed
/// with exit 0, read-only commands that created a mistyped container, and
/// Foundation's words in place of an error a person can act on.
@Suite struct FrontEndFixTests {
    /// A container holding a pack with a stored member `media/clip.mp4`.
    func installed(_ s: TemporaryDirectory) throws {
        try s.write("src/manifest.json", """
            {"assetPackID": "com.example.fix", "downloadPolicy": {"onDemand": {}},
             "fileSelectors": [{"directory": "media"}, {"file": "notes.txt"}]}
            """)
        try s.write("src/notes.txt", String(repeating: "notes ", count: 1000))
        try s.write("src/media/clip.mp4", noise(100_000, seed: 5))
        #expect(try CLI.assetpack(["package", s.path + "/src/manifest.json", "-o", s.path + "/p.zip"]).status == 0)
        #expect(try CLI.assetpack(["install", s.path + "/p.zip"], container: s.container).status == 0)
    }

    /// Flips one byte of the stored member inside the installed archive.
    func damageStoredMember(_ s: TemporaryDirectory) throws {
        let ls = try CLI.assetpack(["inspect", s.path + "/p.zip", "--json"])
        let object = try JSONSerialization.jsonObject(with: ls.stdout) as? [String: Any]
        let members = object?["members"] as? [[String: Any]] ?? []
        let offset = try #require(members.first { $0["path"] as? String == "media/clip.mp4" }?["dataOffset"] as? Int)
        let archive = try #require(FileManager.default.contentsOfDirectory(atPath: s.container + "/packs").first)
        let fd = open(s.container + "/packs/" + archive, O_RDWR)
        try #require(fd >= 0)
        defer { close(fd) }
        var byte: UInt8 = 0
        #expect(pread(fd, &byte, 1, off_t(offset + 1000)) == 1)
        byte ^= 0x55
        #expect(pwrite(fd, &byte, 1, off_t(offset + 1000)) == 1)
    }

    @Test(arguments: [[], ["--descriptor"], ["--standalone"]])
    func catRefusesADamagedStoredMember(_ how: [String]) throws {
        let s = TemporaryDirectory("cat-damaged")
        try installed(s)
        try damageStoredMember(s)
        let cat = try CLI.assetpack(["cat", "media/clip.mp4"] + how, container: s.container)
        #expect(cat.status == 1, "\(how)")
        #expect(cat.stderr.hasPrefix("assetpack cat: error: ") && cat.stderr.contains("CRC-32"), "\(cat.stderr)")
        #expect(cat.stderr.contains("media/clip.mp4"))
        #expect(cat.stderr.split(separator: "\n").count == 1)
        // Told not to check, it prints what is there — except through a
        // standalone copy, which the library checks as it makes it.
        let unchecked = try CLI.assetpack(["cat", "media/clip.mp4", "--no-check"] + how, container: s.container)
        if how == ["--standalone"] {
            #expect(unchecked.status == 1 && unchecked.stderr.contains("CRC"), "\(unchecked.stderr)")
        } else {
            #expect(unchecked.status == 0 && unchecked.stdout.count == 100_000)
            #expect(unchecked.stdoutBytes != noise(100_000, seed: 5))
        }
        // An intact member still reads, checked.
        let notes = try CLI.assetpack(["cat", "notes.txt"] + how, container: s.container)
        #expect(notes.status == 0 && notes.stdoutBytes == Array(String(repeating: "notes ", count: 1000).utf8))
    }

    @Test(arguments: [["ls"], ["ls", "com.example.fix"], ["cat", "notes.txt"], ["rm", "com.example.fix"], ["verify"]])
    func readOnlyCommandsDoNotCreateAMistypedContainer(_ command: [String]) throws {
        let s = TemporaryDirectory("typo")
        try installed(s)
        let typo = s.path + "/contianer"
        let r = try CLI.assetpack(command + ["--container", typo])
        #expect(r.status == (command[0] == "verify" ? 8 : 1), "\(command): \(r.stderr)")
        #expect(r.stderr.contains("no asset pack container at \(typo)"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: typo))
    }

    @Test func aManifestThatIsADirectoryIsNamedPlainly() throws {
        let s = TemporaryDirectory("manifest-dir")
        s.directory("manifest.json")
        let r = try CLI.assetpack(["package", s.path + "/manifest.json", "-o", s.path + "/p.zip"])
        #expect(r.status == 1)
        #expect(r.stderr == "assetpack package: error: \(s.path)/manifest.json: not a regular file\n", "\(r.stderr)")
    }

    @Test func invalidManifestJSONSaysLineAndColumn() throws {
        let s = TemporaryDirectory("manifest-json")
        try s.write("manifest.json", "{\n  \"assetPackID\": \"a\",\n  \"downloadPolicy\": {\"onDemand\": {}}\n  \"fileSelectors\": []\n}\n")
        let r = try CLI.assetpack(["package", s.path + "/manifest.json", "-o", s.path + "/p.zip"])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("assetpack package: error: \(s.path)/manifest.json:4:3: not valid JSON: "), "\(r.stderr)")
    }

    @Test func installRefusesAnHTTPURLAndTakesAFileURL() throws {
        let s = TemporaryDirectory("install-url")
        let r = try CLI.assetpack(["install", "http://127.0.0.1:9/p.zip"], container: s.container)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("assetpack install: error: cannot install from http://127.0.0.1:9/p.zip"), "\(r.stderr)")
        try installed(s)
        let again = try CLI.assetpack(["install", "file://" + s.path + "/p.zip", "--json"], container: s.container)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.out.contains("\"change\" : \"unchanged\""), "\(again.out)")
    }
}
