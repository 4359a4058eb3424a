import Foundation
import Testing
import TestSupport

@Suite struct CommandLineTests {
    func sample(_ s: TemporaryDirectory) throws -> String {
        try s.write("src/manifest.json", """
            {
              // comments are allowed
              "assetPackID": "com.example.cli",
              "downloadPolicy": { "essential": { "installationEventTypes": ["firstInstallation"] } },
              "fileSelectors": [ { "file": "notes.txt" }, { "directory": "media" } ],
              "platforms": ["linux"]
            }
            """)
        try s.write("src/notes.txt", String(repeating: "notes ", count: 1000))
        try s.write("src/media/clip.mp4", noise(100_000, seed: 2))
        try s.write("src/media/icon.png", noise(3_000, seed: 3))
        return s.path + "/src/manifest.json"
    }

    @Test func packageIsDeterministicAndUnzipAccepts() throws {
        let s = TemporaryDirectory("assetpack-package")
        let manifest = try sample(s)
        #expect(try CLI.assetpack(["package", manifest, "-o", s.path + "/a.zip"]).status == 0)
        // Touch the sources: timestamps must not leak into the pack.
        try s.write("src/notes.txt", String(repeating: "notes ", count: 1000))
        #expect(try CLI.assetpack(["package", manifest, "-o", s.path + "/b.zip"]).status == 0)
        #expect(try s.read("a.zip") == s.read("b.zip"))
        let test = try Program.run("unzip", ["-t", s.path + "/a.zip"])
        #expect(test.status == 0, "\(test.out)")
        #expect(test.out.contains("No errors detected"))
        let list = try Program.run("unzip", ["-Z1", s.path + "/a.zip"])
        #expect(list.out.split(separator: "\n").sorted() == ["media/clip.mp4", "media/icon.png", "notes.txt"])
    }

    @Test func installListCatRemove() throws {
        let s = TemporaryDirectory("assetpack-flow")
        let manifest = try sample(s)
        #expect(try CLI.assetpack(["package", manifest, "-o", s.path + "/p.zip"]).status == 0)
        let install = try CLI.assetpack(["install", s.path + "/p.zip"], container: s.container)
        #expect(install.status == 0, "\(install.stderr)")
        let ls = try CLI.assetpack(["ls", "--json"], container: s.container)
        let packs = try JSONSerialization.jsonObject(with: ls.stdout) as? [[String: Any]]
        #expect(packs?.first?["id"] as? String == "com.example.cli")
        #expect(packs?.first?["downloadPolicy"] as? String == "essential")
        let members = try CLI.assetpack(["ls", "com.example.cli", "--prefix", "media"], container: s.container)
        #expect(members.out.contains("media/clip.mp4") && !members.out.contains("notes.txt"))
        #expect(try CLI.assetpack(["cat", "media/clip.mp4"], container: s.container).stdoutBytes == s.read("src/media/clip.mp4"))
        #expect(try CLI.assetpack(["cat", "notes.txt", "--descriptor"], container: s.container).stdoutBytes == s.read("src/notes.txt"))
        #expect(try CLI.assetpack(["verify", "--deep"], container: s.container).status == 0)
        #expect(try CLI.assetpack(["rm", "com.example.cli"], container: s.container).status == 0)
        let gone = try CLI.assetpack(["cat", "notes.txt", "--pack", "com.example.cli"], container: s.container)
        #expect(gone.status == 1)
        #expect(gone.stderr == "assetpack cat: error: asset pack 'com.example.cli' is not installed\n")
    }

    /// Writes a bad pack of the given kind and returns its path.
    func badPack(_ kind: String, _ s: TemporaryDirectory) throws -> String {
        switch kind {
        case "junk":
            try s.write("junk.zip", noise(500, seed: 5))
            return s.path + "/junk.zip"
        case "truncated":
            _ = try Program.run("zip", ["-q", s.path + "/t.zip", "-"], stdin: Data(noise(20_000, seed: 6)))
            let d = try s.read("t.zip")
            try s.write("t.zip", Array(d.prefix(d.count / 2)))
            return s.path + "/t.zip"
        case "traversal":
            let script = "import zipfile,sys\nwith zipfile.ZipFile(sys.argv[1],'w') as z: z.writestr('../evil.txt','x')"
            _ = try Program.run("python3", ["-c", script, s.path + "/evil.zip"])
            return s.path + "/evil.zip"
        default:
            return s.path + "/nothing-here.zip"
        }
    }

    @Test(arguments: ["junk", "truncated", "traversal", "missing"])
    func badInstallExitsOneWithOneLineAndChangesNothing(kind: String) throws {
        let s = TemporaryDirectory("assetpack-bad-\(kind)")
        let manifest = try sample(s)
        #expect(try CLI.assetpack(["package", manifest, "-o", s.path + "/good.zip"]).status == 0)
        #expect(try CLI.assetpack(["install", s.path + "/good.zip"], container: s.container).status == 0)
        let before = containerFiles(s.container)
        let bad = try badPack(kind, s)
        let r = try CLI.assetpack(["install", bad, "--id", "bad"], container: s.container)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("assetpack install: error: "))
        #expect(r.stderr.filter { $0 == "\n" }.count == 1, "\(r.stderr)")
        #expect(containerFiles(s.container) == before)
        #expect(try CLI.assetpack(["verify", "--deep"], container: s.container).status == 0)
        #expect(try CLI.assetpack(["cat", "notes.txt"], container: s.container).stdoutBytes == s.read("src/notes.txt"))
    }

    /// `install --background` is the same install at nice 19
    /// (``BackgroundInstallTests`` checks the priority): a good pack
    /// installs, a bad one is refused in one line and changes nothing.
    @Test(arguments: ["junk", "truncated", "missing"])
    func backgroundInstallInstallsAndRefusesBadInputTheSame(kind: String) throws {
        let s = TemporaryDirectory("assetpack-background-\(kind)")
        let manifest = try sample(s)
        #expect(try CLI.assetpack(["package", manifest, "-o", s.path + "/good.zip"]).status == 0)
        let good = try CLI.assetpack(["install", "--background", s.path + "/good.zip", "--json"], container: s.container)
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.out.contains("\"com.example.cli\""))
        let before = containerFiles(s.container)
        let bad = try badPack(kind, s)
        let r = try CLI.assetpack(["install", "--background", bad, "--id", "bad"], container: s.container)
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("assetpack install: error: ") && r.stderr.contains(bad), "\(r.stderr)")
        #expect(r.stderr.filter { $0 == "\n" }.count == 1, "\(r.stderr)")
        #expect(containerFiles(s.container) == before)
        #expect(try CLI.assetpack(["cat", "notes.txt"], container: s.container).stdoutBytes == s.read("src/notes.txt"))
    }

    @Test func traversalErrorNamesTheMember() throws {
        let s = TemporaryDirectory("assetpack-traversal")
        let script = "import zipfile,sys\nwith zipfile.ZipFile(sys.argv[1],'w') as z: z.writestr('a/../../evil.txt','x')"
        _ = try Program.run("python3", ["-c", script, s.path + "/evil.zip"])
        let r = try CLI.assetpack(["install", s.path + "/evil.zip"], container: s.container)
        #expect(r.status == 1)
        #expect(r.stderr.contains("a/../../evil.txt"))
    }

    @Test func usageErrorsExit64WithUsageLine() throws {
        for args in [["install"], ["install", "a", "b"], ["ls", "--bogus"], ["frobnicate"], ["package", "m.json"], []] {
            let r = try CLI.assetpack(args, container: "/nonexistent-for-usage")
            #expect(r.status == 64, "\(args): \(r.stderr)")
        }
        let r = try CLI.assetpack(["install"])
        #expect(r.stderr.contains("Error: missing <pack>"))
        #expect(r.stderr.contains("Usage: assetpack install"))
        #expect(r.stderr.contains("See 'assetpack install --help'."))
    }

    @Test func helpAndVersion() throws {
        let help = try CLI.assetpack(["install", "--help"])
        #expect(help.status == 0 && help.out.contains("OVERVIEW:") && help.out.contains("USAGE: assetpack install"))
        #expect(try CLI.assetpack(["help", "install"]).out == help.out)
        #expect(try CLI.assetpack(["-h"]).out.contains("SUBCOMMANDS:"))
        #expect(try CLI.assetpack(["--version"]).out.hasPrefix("assetpack "))
    }

    @Test func templatePackagesAfterFillingIn() throws {
        let s = TemporaryDirectory("assetpack-template")
        let t = try CLI.assetpack(["template"])
        #expect(t.status == 0)
        try s.write("manifest.json", t.out)
        try s.write("Videos/Introduction.m4v", noise(1000, seed: 1))
        try s.write("Levels/1.json", "{}")
        let r = try CLI.assetpack(["package", s.path + "/manifest.json", "-o", s.path + "/t.zip"])
        #expect(r.status == 0, "\(r.stderr)")
        let inspect = try CLI.assetpack(["inspect", s.path + "/t.zip", "--json"])
        let object = try JSONSerialization.jsonObject(with: inspect.stdout) as? [String: Any]
        #expect(object?["assetPackID"] as? String == "com.example.Tutorial")
    }

    @Test func manifestErrorNamesTheField() throws {
        let s = TemporaryDirectory("assetpack-manifest")
        try s.write("m.json", "{\"assetPackID\": \"x\", \"downloadPolicy\": {\"sometimes\": {}}, \"fileSelectors\": [{\"file\": \"a\"}]}")
        let r = try CLI.assetpack(["package", s.path + "/m.json", "-o", s.path + "/o.zip"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("downloadPolicy.sometimes"))
        #expect(!FileManager.default.fileExists(atPath: s.path + "/o.zip"))
    }

    @Test func demoRunsEndToEnd() throws {
        let r = try CLI.assetpack(["demo"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.out.contains("demo complete"))
        #expect(r.out.contains("zero-copy"))
        // The pack arrives from a signed catalog over HTTP, twice (version 1, then the update).
        #expect(r.out.contains("signed by key "))
        #expect(r.out.contains("serving ") && r.out.contains(" at http://127.0.0.1:"))
        #expect(r.out.contains("downloaded com.example.Demo version 1"))
        // The update is a delta: the unchanged members are copied from version 1.
        #expect(r.out.contains("downloaded version 2 as a delta update (") && r.out.contains(" copied from version 1) and switched to it atomically"),
                "\(r.out)")
    }
}
