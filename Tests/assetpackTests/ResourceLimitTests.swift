import Foundation
import Testing
@testable import AssetStore
import AssetIndex
import AssetArchive
import TestSupport

/// A container holding one pack, `com.example.kept`, that every test below
/// must leave installed and intact, and two more pack files: `other`
/// (small) and `many` (1500 empty members: a small archive with a large
/// index entry, so that it is the index that runs out of room).
final class LimitFixture {
    let scratch: TemporaryDirectory
    let container: String
    var kept: String { scratch.path + "/kept.zip" }
    var other: String { scratch.path + "/other.zip" }
    var many: String { scratch.path + "/many.zip" }
    let clip = noise(100_000, seed: 11)

    /// Writes the pack files into a new directory, and makes the container
    /// at `container` (default: inside that directory), with `kept`
    /// installed by `assetpack install` unless `installsKept` is false.
    init(installsKept: Bool = true, container: ((TemporaryDirectory) throws -> String)? = nil) throws {
        scratch = TemporaryDirectory("assetpack-limits")
        let packs: [(String, [ArchiveWriter.Member])] = [
            ("kept", [.init(path: "notes.txt", source: .bytes(Array(String(repeating: "notes ", count: 2000).utf8))),
                      .init(path: "media/clip.mp4", source: .bytes(clip))]),
            ("other", [.init(path: "other.txt", source: .bytes(Array("other".utf8)))]),
            ("many", (0..<1500).map { .init(path: String(format: "many/f%04d.txt", $0), source: .bytes([])) }),
        ]
        for (id, members) in packs {
            let description = PackDescription(id: "com.example.\(id)", downloadPolicy: .onDemand, platforms: [.linux])
            try ArchiveWriter.write(members, comment: description.archiveComment, to: scratch.path + "/\(id).zip")
        }
        self.container = try container?(scratch) ?? scratch.container
        guard installsKept else { return }
        let r = try CLI.assetpack(["install", kept], container: self.container)
        try #require(r.status == 0, "assetpack install: \(r.stderr)")
    }

    /// Every file of the container with its SHA-256, the index's data file
    /// included: what a run that changes nothing leaves as it was.
    func snapshot() throws -> [String: String] {
        var result: [String: String] = [:]
        let e = FileManager.default.enumerator(atPath: container)
        while let name = e?.nextObject() as? String {
            let path = container + "/" + name
            guard name != "index/lock.mdb", !name.hasPrefix("locks/") else { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                result[name] = "directory"
                continue
            }
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            result[name] = bytes.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) }
        }
        return result
    }

    /// Runs `assetpack args…` under the shell limits `limits` (such as
    /// `ulimit -n 6`), which apply to it alone.
    func run(_ limits: String, _ args: [String]) throws -> Program.Result {
        var env = ProcessInfo.processInfo.environment
        env["ASSETPACKS_CONTAINER"] = container
        return try Program.run("bash", ["-c", "\(limits); exec \"$0\" \"$@\"", CLI.binary] + args, environment: env)
    }

    /// `kept` is installed and intact: `verify --deep` exits 0 with no
    /// errors, `ls` names it, and `cat` gives its bytes.
    func expectKeptIntact(_ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let verify = try CLI.assetpack(["verify", "--deep", "--json"], container: container)
        let json = (try? JSONSerialization.jsonObject(with: verify.stdout) as? [String: Any]) ?? [:]
        let errors = ((json["findings"] as? [[String: Any]]) ?? []).filter { $0["severity"] as? String == "error" }
        #expect(verify.status == 0 && errors.isEmpty, "\(context): verify --deep: \(verify.status) \(errors) \(verify.stderr)",
                sourceLocation: sourceLocation)
        let ls = try CLI.assetpack(["ls"], container: container)
        #expect(ls.status == 0 && ls.out.contains("com.example.kept"), "\(context): ls: \(ls.out) \(ls.stderr)", sourceLocation: sourceLocation)
        let cat = try CLI.assetpack(["cat", "media/clip.mp4", "--pack", "com.example.kept"], container: container)
        #expect(cat.status == 0 && cat.stdoutBytes == clip, "\(context): cat: \(cat.status) \(cat.stderr)", sourceLocation: sourceLocation)
    }
}

/// One line of diagnostics that names `text` (an errno's message).
private func isOneLine(_ stderr: String, naming text: String) -> Bool {
    let lines = stderr.split(separator: "\n", omittingEmptySubsequences: true)
    return lines.count == 1 && lines[0].contains(text)
}

/// The limits the tests work under, and whether this machine allows a small
/// file system of the test's own.
enum ResourceLimits {
    /// Root may mount a tmpfs (not in every container): the most faithful
    /// full disk. Elsewhere `ulimit -f` stands in for it.
    static func mountTmpfs(at path: String, bytes: Int) -> Bool {
        guard getuid() == 0, Program.available("mount", "umount") else { return false }
        return (try? Program.run("mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", path]).status) == 0
    }

    /// Bytes free on the file system holding `path`, for this process.
    static func freeBytes(_ path: String) -> Int {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return 0 }
        return Int(getuid() == 0 ? s.f_bfree : s.f_bavail) * Int(s.f_frsize)
    }
}

@Suite struct ResourceLimitTests {
    /// Out of descriptors at any point, `verify` and `verify --repair` exit 8
    /// (operational error) with one line naming the errno, or finish clean;
    /// never 1 or 4: an archive that could not be opened is not a missing
    /// one, and repair does not drop the pack (issue 9).
    @Test(arguments: [["verify"], ["verify", "--deep"], ["verify", "--repair"], ["verify", "--deep", "--repair"]])
    func verifyOutOfDescriptorsIsAnOperationalError(_ args: [String]) throws {
        let f = try LimitFixture()
        let before = try f.snapshot()
        var operational: [Int] = []
        for n in 4...12 {
            let r = try f.run("ulimit -n \(n)", args)
            if r.status == 8 {
                operational.append(n)
                #expect(isOneLine(r.stderr, naming: "Too many open files") && r.stderr.contains(f.container),
                        "ulimit -n \(n) \(args): \(r.stderr)")
            } else {
                #expect(r.status == 0 && r.out.contains("no damage"), "ulimit -n \(n) \(args): exit \(r.status): \(r.out) \(r.stderr)")
            }
            #expect(try f.snapshot() == before, "ulimit -n \(n) \(args) changed the container")
        }
        #expect(operational.contains(4) && operational.contains(6), "\(args): exit 8 at \(operational)")
        try f.expectKeptIntact("\(args) out of descriptors")
    }

    /// Out of descriptors, `install`, `ls` and `cat` fail with exit 1 and one
    /// line naming the errno, or succeed; the installed pack stays as it was.
    @Test(arguments: [["ls"], ["ls", "com.example.kept"], ["cat", "notes.txt"], ["cat", "media/clip.mp4", "--no-check"], ["install"]])
    func commandsOutOfDescriptorsFailWithTheErrno(_ args: [String]) throws {
        let f = try LimitFixture()
        let command = args == ["install"] ? ["install", f.other] : args
        let before = try f.snapshot()
        var failed: [Int] = []
        for n in 4...12 {
            let r = try f.run("ulimit -n \(n)", command)
            if r.status == 0 {
                if command[0] == "install" {
                    #expect(try CLI.assetpack(["rm", "com.example.other"], container: f.container).status == 0)
                }
            } else {
                failed.append(n)
                #expect(r.status == 1 && isOneLine(r.stderr, naming: "Too many open files"),
                        "ulimit -n \(n) \(command): exit \(r.status): \(r.stderr)")
            }
            // An install that succeeded was removed, which rewrites the index.
            if command[0] != "install" { #expect(try f.snapshot() == before, "ulimit -n \(n) \(command) changed the container") }
        }
        try f.expectKeptIntact("\(command) out of descriptors")
        #expect(failed.contains(4), "\(command): failed at \(failed)")
        let ls = try CLI.assetpack(["ls"], container: f.container)
        #expect(!ls.out.contains("com.example.other"))
    }

    /// The disk fills while the index commits: the install fails with "No
    /// space left on device" naming the index (LMDB reports the short write
    /// as EIO), and changes nothing installed. On a disk too full for the
    /// copy, the copy's ENOSPC. Without root (or where mounting is not
    /// allowed) `ulimit -f` stands in for the full disk, and the error is
    /// "File too large" (EFBIG), again naming the index.
    @Test func aFullDiskNamesTheIndexAndChangesNothing() throws {
        var mounted: String?
        let f = try LimitFixture { scratch in
            let small = scratch.directory("small")
            guard ResourceLimits.mountTmpfs(at: small, bytes: 1 << 20) else { return scratch.container }
            mounted = small
            return small + "/container"
        }
        defer { if let mounted { _ = try? Program.run("umount", [mounted]) } }
        let manySize = ((try FileManager.default.attributesOfItem(atPath: f.many)[.size] as? Int) ?? 0)
        let index = f.container + "/index"
        let before = containerFiles(f.container)
        if let mounted {
            // Room for the archive, not for its index entries.
            let room = (manySize + 4095) / 4096 * 4096 + 8192
            let filler = ResourceLimits.freeBytes(mounted) - room
            try #require(filler > 0)
            #expect(FileManager.default.createFile(atPath: mounted + "/filler", contents: Data(count: filler)))
            let r = try f.run("true", ["install", f.many])
            #expect(r.status == 1 && isOneLine(r.stderr, naming: "No space left on device") && r.stderr.contains(index),
                    "full disk, index: exit \(r.status): \(r.stderr)")
            #expect(containerFiles(f.container) == before)
            try f.expectKeptIntact("full disk, index")
            // No room even for the copy.
            let rest = ResourceLimits.freeBytes(mounted)
            if rest > 0 { _ = FileManager.default.createFile(atPath: mounted + "/filler2", contents: Data(count: rest)) }
            let copy = try f.run("true", ["install", f.many])
            #expect(copy.status == 1 && isOneLine(copy.stderr, naming: "No space left on device"), "full disk, copy: \(copy.stderr)")
            #expect(containerFiles(f.container) == before)
            try f.expectKeptIntact("full disk, copy")
        } else {
            // SIGXFSZ ignored, so that a write past the limit fails with EFBIG
            // instead of killing the process.
            let blocks = (manySize + 1023) / 1024 + 4
            let r = try f.run("trap '' XFSZ; ulimit -f \(blocks)", ["install", f.many])
            #expect(r.status == 1 && isOneLine(r.stderr, naming: "File too large") && r.stderr.contains(index),
                    "ulimit -f \(blocks): exit \(r.status): \(r.stderr)")
            #expect(containerFiles(f.container) == before)
            try f.expectKeptIntact("ulimit -f \(blocks)")
        }
        let ls = try CLI.assetpack(["ls"], container: f.container)
        #expect(!ls.out.contains("com.example.many"))
    }

    /// A write that needs more than the map may grow to fails with the
    /// index's MDB_MAP_FULL, naming the index, and changes nothing installed.
    @Test func aMapThatCannotGrowNamesTheIndexAndChangesNothing() throws {
        // A new index's map is LMDB's default, 1 MiB, and may not grow: room
        // for `kept`, not for 12,000 more members. This process writes every
        // version of the index, so no other process grows its map.
        let f = try LimitFixture(installsKept: false)
        var options = AssetStore.Options()
        options.initialMapSize = 32 << 10
        options.maximumMapSize = 1 << 20
        let store = try AssetStore(container: GroupContainer(path: f.container), options: options)
        try store.install(packAt: f.kept)
        let huge = f.scratch.path + "/huge.zip"
        try ArchiveWriter.write((0..<12_000).map { .init(path: String(format: "huge/%05d", $0), source: .bytes([])) },
                                comment: PackDescription(id: "com.example.huge", downloadPolicy: .onDemand, platforms: [.linux]).archiveComment,
                                to: huge)
        let before = containerFiles(f.container)
        let error = #expect(throws: StoreError.self) { try store.install(packAt: huge) }
        if case .index(let e)? = error {
            #expect(e.isMapFull)
        } else {
            Issue.record("not an index error: \(String(describing: error))")
        }
        let text = error?.description ?? ""
        #expect(text.contains(f.container + "/index") && text.contains("the index is full"), "\(text)")
        #expect(containerFiles(f.container) == before)
        try f.expectKeptIntact("map full")
        #expect(try store.allPackRecords().map(\.id) == ["com.example.kept"])
    }
}
