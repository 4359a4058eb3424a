import Foundation
import Testing
import AssetPacks
import TestSupport

/// Every refusal through the C API: its negative code, the reason, what it
/// names, and the one-line message — as the driver prints them.
@Suite struct ErrorTests {
    let f: CFixture
    init() throws { f = try CFixture() }

    /// Runs the driver (open options like `-w` first in `arguments`), which
    /// must fail; returns the error it printed.
    func refusal(_ arguments: [String], container: String? = nil) throws -> DriverError {
        let options = arguments.prefix { ["-w", "-c", "-x"].contains($0) }
        let r = try CLibrary.drive(options + [container ?? f.container] + arguments.dropFirst(options.count))
        #expect(r.status == 1, "\(arguments): status \(r.status), \(r.stderr)")
        return try #require(DriverError(r.stderr), "\(r.stderr)")
    }

    @Test func missingPackMemberAndAmbiguousPath() throws {
        let pack = try refusal(["read", "nope", "hello.txt"])
        #expect(pack.code == -1 && pack.name == "no such pack" && pack.pack == "nope")
        #expect(pack.message.contains("nope"))
        let member = try refusal(["copy", "base", "no/such.txt"])
        #expect(member.code == -2 && member.pack == "base" && member.member == "no/such.txt")
        #expect(member.message.contains("no/such.txt"))
        let ambiguous = try refusal(["stat", "-", "shared.txt"])
        #expect(ambiguous.code == -3 && ambiguous.member == "shared.txt")
        #expect(ambiguous.message.contains("base") && ambiguous.message.contains("extra"))
        #expect(try refusal(["members", "nope"]).code == -1)
        #expect(try refusal(["fd", "base", "nope"]).code == -2)
    }

    /// `ap_set_lock_timeout` bounds the wait for a pack lock another
    /// process holds: `AP_ELOCKTIMEOUT`, naming the lock, its file and the
    /// holder's pid. A NaN or an infinite wait is refused.
    @Test func aLockTimeoutBoundsTheWaitAndNamesTheHolder() throws {
        let lock = f.container + "/locks/packs/base.lock"
        let holder = try LockPeer([lock], exclusive: true)
        defer { holder.release() }
        #expect(holder.outcomes == [.held])
        let r = try CLibrary.drive(["-w", "-t", "0.5", f.container, "install", f.directory.file("base.zip")])
        let e = try #require(DriverError(r.stderr), "\(r.stderr)")
        #expect(e.code == -18 && e.path == lock)
        #expect(e.message == "timed out after 0.5 s waiting for the pack lock of 'base' (\(lock)), held by pid \(holder.pid)")
        for bad in ["nan", "inf"] {
            let refused = try CLibrary.drive(["-t", bad, f.container, "packs"])
            #expect(DriverError(refused.stderr)?.code == -100 && refused.stderr.contains("ap_set_lock_timeout: seconds"), "\(refused.stderr)")
        }
        holder.release()
        let again = try CLibrary.drive(["-w", "-t", "0.5", f.container, "install", f.directory.file("base.zip")])
        #expect(again.status == 0 && again.out == "unchanged\n", "\(again.stderr)")
    }

    @Test func aMissingContainerIsNotCreatedByAReadOnlyOpen() throws {
        let missing = f.directory.file("missing")
        let e = try refusal(["packs"], container: missing)
        #expect(e.code == -20 && e.path == missing)
        #expect(!FileManager.default.fileExists(atPath: missing))
        let rw = try refusal(["-w", "packs"], container: missing)
        #expect(rw.code == -20)
        let created = try CLibrary.drive(["-w", "-c", missing, "packs"])
        #expect(created.status == 0 && created.out == "", "\(created.stderr)")
        #expect(FileManager.default.fileExists(atPath: missing + "/index"))
    }

    @Test func badArgumentsAreInvalid() throws {
        let flags = try refusal(["-x", "packs"])
        #expect(flags.code == -100 && flags.name == "invalid argument")
        #expect(flags.message.contains("ap_open") && flags.message.contains("flags"))
        let create = try refusal(["-c", "packs"])
        #expect(create.code == -100 && create.message.contains("AP_OPEN_CREATE"))
        let verify = try refusal(["verify", "bogus"])
        #expect(verify.code == -100 && verify.message.contains("ap_verify"))
        let dry = try refusal(["verify", "dry-run"])
        #expect(dry.code == -100 && dry.message.contains("AP_VERIFY_DRY_RUN"))
    }

    @Test func changesThroughAReadOnlyContainerAreRefused() throws {
        let install = try refusal(["install", f.directory.file("base.zip")])
        #expect(install.code == -102 && install.name == "container opened read-only" && install.path == f.container)
        #expect(try refusal(["remove", "base"]).code == -102)
        #expect(try refusal(["verify", "repair"]).code == -102)
        // A dry run changes nothing, so a read-only container may do one.
        #expect(try CLibrary.drive([f.container, "verify", "repair", "dry-run"]).status == 0)
        #expect(try f.manager.allAssetPacks().count == 2)
    }

    @Test func installRefusals() throws {
        let garbage = try f.directory.write("garbage.zip", noise(1000, seed: 7))
        let bad = try refusal(["-w", "install", garbage])
        #expect(bad.code == -8 && bad.reason == 400 && bad.path == garbage)
        let directory = f.directory.directory("a-directory")
        let notFile = try refusal(["-w", "install", directory])
        #expect(notFile.code == -19 && notFile.path == directory)
        let missing = f.directory.file("missing.zip")
        let system = try refusal(["-w", "install", missing])
        #expect(system.code == -9 && system.path == missing)
        let errno = try CLibrary.drive(["-w", f.container, "install", missing])
        #expect(errno.stderr.contains("errno=2 "), "ENOENT: \(errno.stderr)")
        let id = try refusal(["-w", "install", f.directory.file("base.zip"), "other"])
        #expect(id.code == -4 && id.reason == 104 && id.pack == "other")
        try f.directory.write("s.txt", "plain\n")
        let zip = try Program.run("zip", ["-q", "-0", "plain.zip", "s.txt"], directory: f.directory.path)
        try #require(zip.status == 0, "\(zip.stderr)")
        let badID = try refusal(["-w", "install", f.directory.file("plain.zip"), "-bad"])
        #expect(badID.code == -4 && badID.reason == 102 && badID.pack == "-bad")
    }

    @Test func aPathTooLongToIndexIsAnInvalidPath() throws {
        let long = Array(repeating: String(repeating: "d", count: 100), count: 6).joined(separator: "/")
        try f.directory.write("long/" + long, "x\n")
        let zip = try Program.run("zip", ["-q", "-0", "-r", "../long.zip", "."], directory: f.directory.file("long"))
        try #require(zip.status == 0, "\(zip.stderr)")
        let e = try refusal(["-w", "install", f.directory.file("long.zip"), "long"])
        #expect(e.code == -5 && e.reason == 200 && e.member == long && e.name == "invalid member path")
    }

    @Test func aDeflatedMemberOverTheLimitsIsRefusedAtInstall() throws {
        var limits = AssetPackManager.Limits.defaults
        limits.maximumMemberSize = 1000
        try f.manager.setLimits(limits)
        try f.manager.remove(assetPackWithID: "base")
        let e = try refusal(["-w", "install", f.directory.file("base.zip")])
        #expect(e.code == -24 && e.reason == 600 && e.member == "hello.txt")
    }

    /// Damage found by reads: a stored member's bytes are not checked by
    /// the zero-copy read but are by the copy; a deflated member's always.
    @Test func damagedMembersAreBadArchives() throws {
        try damage("media/clip.bin")
        try damage("hello.txt")
        #expect(try CLibrary.drive([f.container, "read", "base", "media/clip.bin"]).status == 0)
        let stored = try refusal(["copy", "base", "media/clip.bin"])
        #expect(stored.code == -8 && stored.reason == 412 && stored.member == "media/clip.bin")
        let deflated = try refusal(["read", "base", "hello.txt"])
        #expect(deflated.code == -8 && [412, 414].contains(deflated.reason) && deflated.member == "hello.txt")
    }

    @Test func aMissingArchiveIsReported() throws {
        let d = try f.manager.descriptor(for: "media/clip.bin", searchingInAssetPackWithID: "base")
        defer { try? d.close() }
        let archive = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(d.fileDescriptor)")
        try FileManager.default.removeItem(atPath: archive)
        let e = try refusal(["read", "base", "media/clip.bin"])
        #expect(e.code == -7 && e.pack == "base" && e.path == archive)
    }

    @Test func aSymlinkInTheContainerIsRefused() throws {
        let other = f.directory.directory("elsewhere")
        let packs = f.container + "/packs"
        try FileManager.default.moveItem(atPath: packs, toPath: other + "/packs")
        try FileManager.default.createSymbolicLink(atPath: packs, withDestinationPath: other + "/packs")
        let e = try refusal(["read", "base", "media/clip.bin"])
        #expect(e.code == -25 && e.path?.hasSuffix("/packs") == true)
    }

    /// Flips a byte in the middle of `path`'s data in the installed archive.
    func damage(_ path: String) throws {
        let d = try f.manager.descriptor(for: path, searchingInAssetPackWithID: "base")
        defer { try? d.close() }
        // A deflated member's descriptor is a memory file: find its range in the archive instead.
        let member = try #require(try f.manager.members(inAssetPackWithID: "base").first { $0.path == path })
        let archive = try archivePath()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
        let offset: Int
        if d.source == .archive {
            offset = Int(d.offset) + Int(member.storedSize) / 2
        } else {
            let name = Data(path.utf8)
            let header = try #require(bytes.range(of: name), "local header of \(path)")
            offset = header.upperBound + Int(member.storedSize) / 2
        }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: archive))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data([bytes[offset] ^ 0xFF]))
    }

    func archivePath() throws -> String {
        let d = try f.manager.descriptor(for: "media/clip.bin", searchingInAssetPackWithID: "base")
        defer { try? d.close() }
        return try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(d.fileDescriptor)")
    }
}
