import Foundation
import Testing
import TestSupport

/// Archives written by other tools install, and `assetpack cat` gives exactly
/// what `unzip -p` gives for every member.
@Suite(.serialized) struct WitnessTests {
    /// A tree of files with text, binary, nested and UTF-8 names.
    func makeTree(_ s: TemporaryDirectory) throws {
        try s.write("tree/readme.txt", String(repeating: "plain text ", count: 500))
        try s.write("tree/data/blob.bin", noise(70_000, seed: 1))
        try s.write("tree/data/empty", [])
        try s.write("tree/données/日本.txt", "unicode names")
        try s.write("tree/deep/a/b/c/d.json", "{\"x\": 1}")
    }

    /// Member names as `zipinfo` prints them: the stored bytes, which for
    /// Info-ZIP are UTF-8 without the UTF-8 flag (Python would decode CP437).
    func memberNames(_ zip: String) throws -> [String] {
        let listing = try Program.run("unzip", ["-Z1", zip])
        return listing.out.split(separator: "\n").map(String.init).filter { !$0.hasSuffix("/") }
    }

    /// Installs `zip` and compares every member via `cat` with `unzip -p`.
    func installAndCompare(_ zip: String, id: String, _ s: TemporaryDirectory, expectedCount: Int? = nil) throws {
        let install = try CLI.assetpack(["install", zip, "--id", id], container: s.container)
        #expect(install.status == 0, "\(install.stderr)")
        let names = try memberNames(zip)
        if let expectedCount { #expect(names.count == expectedCount) }
        #expect(!names.isEmpty)
        for name in names {
            let ours = try CLI.assetpack(["cat", name, "--pack", id], container: s.container)
            // unzip treats its member arguments as wildcards; escape them.
            let escaped = name.replacingOccurrences(of: "[", with: "[[]")
            let theirs = try Program.run("unzip", ["-p", zip, escaped])
            #expect(ours.status == 0, "\(name): \(ours.stderr)")
            #expect(ours.stdout == theirs.stdout, "\(name) differs from unzip -p")
            let viaFD = try CLI.assetpack(["cat", name, "--pack", id, "--descriptor"], container: s.container)
            #expect(viaFD.stdout == theirs.stdout, "\(name) via descriptor differs")
        }
    }

    @Test func infoZipRecursive() throws {
        let s = TemporaryDirectory("assetpack-zip-r")
        try makeTree(s)
        #expect(try Program.run("zip", ["-q", "-r", s.path + "/t.zip", "."], directory: s.path + "/tree").status == 0)
        try installAndCompare(s.path + "/t.zip", id: "infozip", s, expectedCount: 5)
    }

    @Test func infoZipStoredOnly() throws {
        let s = TemporaryDirectory("assetpack-zip-0")
        try makeTree(s)
        #expect(try Program.run("zip", ["-q", "-0", "-r", s.path + "/t.zip", "."], directory: s.path + "/tree").status == 0)
        try installAndCompare(s.path + "/t.zip", id: "stored", s)
    }

    @Test func infoZipStreamedFromStdin() throws {
        let s = TemporaryDirectory("assetpack-zip-stdin")
        let r = try Program.run("sh", ["-c", "head -c 100000 /dev/zero | tr '\\0' 'x' | zip -q - - > \(s.path)/s.zip"])
        #expect(r.status == 0)
        try installAndCompare(s.path + "/s.zip", id: "streamed", s, expectedCount: 1)
    }

    @Test func pythonZipfileStreamedAndZip64() throws {
        let s = TemporaryDirectory("assetpack-python")
        let script = """
            import sys, zipfile, io
            out = sys.argv[1]
            class Unseekable(io.RawIOBase):
                def __init__(self, f): self.f = f
                def writable(self): return True
                def write(self, b): return self.f.write(b)
            with open(out + '/streamed.zip', 'wb') as raw:
                with zipfile.ZipFile(Unseekable(raw), 'w', zipfile.ZIP_DEFLATED) as z:
                    z.writestr('text/a.txt', 'streamed ' * 1000)
                    z.writestr(zipfile.ZipInfo('raw/b.bin'), bytes(range(256)) * 40)
                    with z.open('big/c.txt', 'w', force_zip64=True) as w:
                        w.write(b'zip64 ' * 50000)
            with zipfile.ZipFile(out + '/z64.zip', 'w', zipfile.ZIP_STORED) as z:
                with z.open('forced.bin', 'w', force_zip64=True) as w:
                    w.write(bytes(range(256)) * 100)
                z.writestr('名前/ファイル.txt', 'utf-8 name')
            """
        #expect(try Program.run("python3", ["-c", script, s.path]).status == 0)
        try installAndCompare(s.path + "/streamed.zip", id: "pystreamed", s, expectedCount: 3)
        try installAndCompare(s.path + "/z64.zip", id: "pyzip64", s, expectedCount: 2)
    }

    @Test func seventyThousandEntries() throws {
        let s = TemporaryDirectory("assetpack-70k")
        let script = """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
                for i in range(70001):
                    z.writestr('d%03d/f%05d.txt' % (i % 500, i), 'entry %d ' % i * (i % 7 + 1))
            """
        let zip = s.path + "/many.zip"
        #expect(try Program.run("python3", ["-c", script, zip]).status == 0)
        let install = try CLI.assetpack(["install", zip], container: s.container)
        #expect(install.status == 0, "\(install.stderr)")
        let listed = try CLI.assetpack(["ls", "many", "--json"], container: s.container)
        let members = try JSONSerialization.jsonObject(with: listed.stdout) as? [[String: Any]]
        #expect(members?.count == 70001)
        // Every member read back through the library path equals Python's
        // view; spot-check the command line against unzip on a sample.
        let check = try CLI.assetpack(["verify", "--deep"], container: s.container)
        #expect(check.status == 0, "\(check.out)")
        for i in [0, 1, 4999, 35_000, 70_000] {
            let name = String(format: "d%03d/f%05d.txt", i % 500, i)
            let ours = try CLI.assetpack(["cat", name], container: s.container)
            let theirs = try Program.run("unzip", ["-p", zip, name])
            #expect(ours.stdout == theirs.stdout && !ours.stdout.isEmpty, "\(name)")
        }
    }
}
