import Foundation
import Testing
import TestSupport

/// The sync order of docs/coordination.md (section 10), read off the real
/// `assetpack` with `strace -f -y`: an install into a new container (three
/// missing ancestors), an update, a removal, a repair, a publish into a new
/// directory and a download (`fetch` from `assetpack serve` on 127.0.0.1)
/// into a new container. Each trace must keep every rule (every directory made flushed
/// into its parent; every rename, link and acknowledged unlink followed by a
/// flush of its directory; every file flushed before it is renamed into
/// place; the archive and its twin durable before the commit that names
/// it, the commit before the old archive goes; a catalog after the files it
/// names) — and, but for the repair's (which flushes every directory of the
/// layout at its end), every flush in it must be one a rule needs: the same
/// trace with every flush of any one path taken out breaks a rule, so a
/// change that drops one fails here.
@Suite(.enabled(if: SyscallTrace.isAvailable, "strace is missing or cannot trace a child here (ptrace refused, e.g. by a seccomp sandbox)"))
struct SyncOrderTests {
    /// `assetpack args…` under strace, with the test environment `CLI` gives.
    func traced(_ args: [String]) throws -> (Program.Result, SyscallTrace) {
        var env = ProcessInfo.processInfo.environment
        env["ASSETPACKS_SYSTEM_ROOT"] = CLI.neutralSystemRoot
        env.removeValue(forKey: "ASSETPACKS_CONTAINER")
        return try SyscallTrace.record([CLI.binary] + args, environment: env)
    }

    /// Checks `trace` against `rules`, and that each flushed path (and the
    /// index's commits) is needed by a rule.
    func check(_ what: String, _ trace: SyscallTrace, _ rules: SyscallTrace.Rules, commits: Bool) {
        #expect(trace.violations(rules) == [], "\(what)")
        #expect(trace.operations.contains(.indexSync) == commits, "\(what): index commits")
        var flushed = Set<String>()
        for case .sync(let path) in trace.operations { flushed.insert(path) }
        #expect(!flushed.isEmpty, "\(what): nothing flushed")
        for path in flushed.sorted() {
            let offsets = trace.operations.indices.filter { trace.operations[$0] == .sync(path: path) }
            #expect(!trace.removing(offsets).violations(rules).isEmpty, "\(what): no rule needs the flushes of \(path)")
        }
        if commits {
            let offsets = trace.operations.indices.filter { trace.operations[$0] == .indexSync }
            #expect(!trace.removing(offsets).violations(rules).isEmpty, "\(what): no rule needs the index's commits")
        }
    }

    @Test func anInstallAnUpdateAndARemovalFlushWhatTheyAcknowledge() throws {
        let site = try PublishCommandTests.Site(keys: false)
        let v1 = try site.pack("Base", "one", version: 1, file: "v1")
        let v2 = try site.pack("Base", "two", version: 2, file: "v2")
        let container = site.dir.file("a/b/container")
        let rules = SyscallTrace.Rules(container: container)

        let (install, installTrace) = try traced(["install", "--container", container, v1])
        #expect(install.status == 0, "\(install.stderr)")
        #expect(installTrace.operations.contains(.mkdir(path: site.dir.file("a"))))
        check("install into a new container", installTrace, rules, commits: true)

        let (update, updateTrace) = try traced(["install", "--container", container, v2])
        #expect(update.status == 0, "\(update.stderr)")
        #expect(updateTrace.operations.contains { if case .unlink(let p) = $0 { return p.hasPrefix(container + "/packs/") } else { return false } })
        check("update", updateTrace, rules, commits: true)

        let (remove, removeTrace) = try traced(["rm", "--container", container, "Base"])
        #expect(remove.status == 0, "\(remove.stderr)")
        check("removal", removeTrace, rules, commits: true)

        let verify = try CLI.assetpack(["verify", "--container", container])
        #expect(verify.status == 0, "\(verify.out)\(verify.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: container + "/packs") == [])

        // A repair: an orphan moved to a new quarantine/, a cache leftover deleted.
        try site.dir.write("a/b/container/packs/stray.zip", [1, 2, 3])
        try site.dir.write("a/b/container/cache/left", [1])
        let (repair, repairTrace) = try traced(["verify", "--repair", "--container", container])
        #expect(repair.status == 1, "\(repair.out)\(repair.stderr)")
        #expect(repairTrace.operations.contains(.mkdir(path: container + "/quarantine")))
        #expect(repairTrace.violations(rules) == [])
        #expect(repairTrace.operations.contains(.sync(path: container + "/cache")))
    }

    @Test func aPublishAndADownloadFlushWhatTheyAcknowledge() throws {
        let site = try PublishCommandTests.Site()
        let pack = try site.pack("Extra", "extra", policy: #"{ "onDemand": {} }"#)
        let published = site.dir.file("site/www/out")
        let (publish, publishTrace) = try traced(["publish", pack, "--sign", site.key, "--to", published])
        #expect(publish.status == 0, "\(publish.stderr)")
        check("publish", publishTrace, SyscallTrace.Rules(published: published), commits: false)

        let serve = try ServeProcess(published)
        defer { serve.stop() }
        let container = site.dir.file("c/container")
        let (fetch, fetchTrace) = try traced(["fetch", "Extra", "--container", container,
                                              "--catalog", serve.url + "catalog.json", "--key", site.pub])
        #expect(fetch.status == 0, "\(fetch.stderr)")
        #expect(fetchTrace.operations.contains { if case .link(_, let to) = $0 { return to.hasPrefix(container + "/packs/") } else { return false } })
        check("download", fetchTrace, SyscallTrace.Rules(container: container), commits: true)
        let cat = try CLI.assetpack(["cat", "files/data.txt", "--pack", "Extra"], container: container)
        #expect(cat.out == "extra")
        let verify = try CLI.assetpack(["verify", "--container", container])
        #expect(verify.status == 0, "\(verify.out)\(verify.stderr)")
    }

    /// The checker itself, on a trace written here: a rename whose
    /// directory is never flushed, and a directory made and never flushed
    /// into its parent, are both reported, naming the call.
    @Test func theCheckerReportsAMissingDirectoryFlush() {
        let trace = SyscallTrace(parsing: """
            100 mkdirat(AT_FDCWD</w>, "/w/c", 0755) = 0
            100 openat(3</w/c>, ".tmp-x", O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0644) = 4</w/c/.tmp-x>
            100 fsync(4</w/c/.tmp-x>) = 0
            100 renameat2(3</w/c>, ".tmp-x", 3</w/c>, "x", 0 <unfinished ...>
            101 fsync(5</elsewhere>) = 0
            100 <... renameat2 resumed>) = 0
            100 unlinkat(3</w/c>, "gone", 0) = -1 ENOENT (No such file or directory)
            """)
        #expect(trace.operations == [.mkdir(path: "/w/c"), .create(path: "/w/c/.tmp-x"), .sync(path: "/w/c/.tmp-x"),
                                     .sync(path: "/elsewhere"), .rename(from: "/w/c/.tmp-x", to: "/w/c/x")])
        let found = trace.violations(.init())
        #expect(found.count == 2)
        #expect(found.contains { $0.hasPrefix("a directory made is never flushed into its parent: 100 mkdirat") })
        #expect(found.contains { $0.hasPrefix("a rename's directory is never flushed:") && $0.contains("renameat2") })
    }

    /// strace pads a resumed call's result to a column (under load a
    /// directory's flush often comes in two halves): the flush still counts.
    @Test func aResumedCallWithAPaddedResultIsRead() {
        let trace = SyscallTrace(parsing: """
            25307 fsync(6</w/c/staging> <unfinished ...>
            25310 openat(AT_FDCWD</w>, "/w/c/packs/x.zip", O_RDONLY|O_CLOEXEC) = 9</w/c/packs/x.zip>
            25307 <... fsync resumed>)              = 0
            25307 fsync(5</w/c/packs>)      = -1 EIO (Input/output error)
            """)
        #expect(trace.operations == [.sync(path: "/w/c/staging")])
    }
}
