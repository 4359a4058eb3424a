import Foundation
import Testing
import TestSupport

/// `assetpack cat` streams: a member larger than its 1 MiB buffer comes out
/// byte for byte, a damaged one ends with the one-line error and exit 1, and
/// one far larger than the memory bound never makes the process hold it —
/// nor do `install` and `verify --deep` of its pack.
@Suite struct StreamingCatTests {
    /// Writes `<dir>/p.zip` with Python's zipfile: `text.txt` (deflated at
    /// `level`) and `clip.bin` (stored), of the given sizes, and the
    /// members' bytes beside it as `<dir>/text.txt` and `<dir>/clip.bin`
    /// (Python checks that it reads them back from the pack).
    func pythonPack(_ s: TemporaryDirectory, text: Int, clip: Int, level: Int) throws {
        let script = """
            import random, sys, zipfile
            root, text, clip, level = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
            letters = bytes.maketrans(bytes(range(256)), b'abcdefghijklmnop \\n.,;:ABCDEFGHIJ' * 8)
            random.seed(7)
            data = {'text.txt': random.randbytes(text).translate(letters), 'clip.bin': random.randbytes(clip)}
            with zipfile.ZipFile(root + '/p.zip', 'w') as z:
                z.writestr('text.txt', data['text.txt'], compress_type=zipfile.ZIP_DEFLATED, compresslevel=level)
                z.writestr('clip.bin', data['clip.bin'], compress_type=zipfile.ZIP_STORED)
            for name, bytes_ in data.items():
                open(root + '/' + name, 'wb').write(bytes_)
            with zipfile.ZipFile(root + '/p.zip') as z:
                assert all(z.read(n) == d for n, d in data.items())
            """
        let python = try Program.run("python3", ["-c", script, s.path, String(text), String(clip), String(level)])
        try #require(python.status == 0, "\(python.stderr)")
    }

    func install(_ s: TemporaryDirectory) throws {
        let r = try CLI.assetpack(["install", s.path + "/p.zip"], container: s.container)
        try #require(r.status == 0, "\(r.stderr)")
    }

    /// Where member `name`'s data starts in the pack (the installed archive
    /// is a byte copy of it).
    func dataOffset(_ s: TemporaryDirectory, _ name: String) throws -> Int {
        let ls = try CLI.assetpack(["inspect", s.path + "/p.zip", "--json"])
        let object = try JSONSerialization.jsonObject(with: ls.stdout) as? [String: Any]
        let members = object?["members"] as? [[String: Any]] ?? []
        return try #require(members.first { $0["path"] as? String == name }?["dataOffset"] as? Int)
    }

    func installedArchive(_ s: TemporaryDirectory) throws -> String {
        s.container + "/packs/" + (try #require(FileManager.default.contentsOfDirectory(atPath: s.container + "/packs").first))
    }

    @Test func membersBiggerThanTheBufferComeOutByteForByte() throws {
        let s = TemporaryDirectory("stream-exact")
        try pythonPack(s, text: 5_000_000, clip: 3_000_001, level: 6)
        try install(s)
        for name in ["text.txt", "clip.bin"] {
            let expected = try Data(contentsOf: URL(fileURLWithPath: s.path + "/" + name))
            for how in [[], ["--no-check"]] {
                let cat = try CLI.assetpack(["cat", name] + how, container: s.container)
                #expect(cat.status == 0, "\(name) \(how): \(cat.stderr)")
                #expect(cat.stdout == expected, "\(name) \(how): \(cat.stdout.count) bytes")
            }
        }
    }

    /// A deflate stream of stored blocks (level 0) stays valid when a data
    /// byte changes, so the damage shows only in the CRC-32 at the end.
    @Test(arguments: ["text.txt", "clip.bin"])
    func aDamagedStreamedMemberEndsWithTheCRCError(_ name: String) throws {
        let s = TemporaryDirectory("stream-crc")
        try pythonPack(s, text: 3_000_000, clip: 3_000_000, level: 0)
        try install(s)
        let archive = try installedArchive(s)
        let offset = try dataOffset(s, name)
        let fd = open(archive, O_RDWR)
        try #require(fd >= 0)
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 5)
        #expect(pread(fd, &head, 5, off_t(offset)) == 5)
        if name == "text.txt" {
            // A stored deflate block (BTYPE 00) holding more than the byte we change.
            try #require(head[0] & 0x06 == 0 && Int(head[1]) | Int(head[2]) << 8 > 200, "\(head)")
        }
        var byte: UInt8 = 0
        #expect(pread(fd, &byte, 1, off_t(offset + 105)) == 1)
        byte ^= 0x20
        #expect(pwrite(fd, &byte, 1, off_t(offset + 105)) == 1)

        let cat = try CLI.assetpack(["cat", name], container: s.container)
        #expect(cat.status == 1)
        #expect(cat.stderr.hasPrefix("assetpack cat: error: ") && cat.stderr.contains("CRC-32") && cat.stderr.contains(name),
                "\(cat.stderr)")
        #expect(cat.stderr.split(separator: "\n").count == 1)
        // The pieces before the last went out (and are not to be trusted);
        // the last waited for the check.
        #expect(cat.stdout.count >= 2 << 20 && cat.stdout.count < 3_000_000, "\(cat.stdout.count)")
        if name == "clip.bin" {
            let unchecked = try CLI.assetpack(["cat", name, "--no-check"], container: s.container)
            #expect(unchecked.status == 0 && unchecked.stdout.count == 3_000_000)
        }
    }

    /// The most a process that streams a member may hold, in KiB of VmHWM.
    static let memoryBound = 64 * 1000

    /// Runs `assetpack` with stdout to /dev/null; returns its exit status and
    /// peak resident set (KiB), as GNU time reports it.
    func peak(_ s: TemporaryDirectory, _ arguments: [String]) throws -> (status: Int32, kilobytes: Int) {
        let report = s.path + "/time.\(arguments[0])"
        let r = try Program.run("/usr/bin/time", ["-f", "%M", "-o", report, "sh", "-c", "exec \"$0\" \"$@\" >/dev/null", CLI.binary]
                                    + arguments + ["--container", s.container])
        let text = try String(contentsOfFile: report, encoding: .utf8)
        let kilobytes = Int(text.split(separator: "\n").last { Int($0) != nil } ?? "") ?? Int.max
        return (r.status, kilobytes)
    }

    @Test(.enabled(if: Program.available("python3") && FileManager.default.isExecutableFile(atPath: "/usr/bin/time")))
    func aMemberMuchLargerThanTheBoundIsNeverHeld() throws {
        let s = TemporaryDirectory("stream-rss")
        // 48 MiB each: reading either whole, or mapping the archive and
        // touching it all, goes past the bound (the process starts at ~30 MB).
        let size = ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1" ? 512 << 20 : 48 << 20
        try pythonPack(s, text: size, clip: size, level: 1)
        let install = try peak(s, ["install", s.path + "/p.zip"])
        #expect(install.status == 0 && install.kilobytes < Self.memoryBound, "install: \(install)")
        for arguments in [["text.txt"], ["clip.bin"], ["clip.bin", "--no-check"]] {
            let cat = try peak(s, ["cat"] + arguments)
            #expect(cat.status == 0 && cat.kilobytes < Self.memoryBound, "cat \(arguments): \(cat)")
        }
        let verify = try peak(s, ["verify", "--deep"])
        #expect(verify.status == 0 && verify.kilobytes < Self.memoryBound, "verify --deep: \(verify)")
    }
}
