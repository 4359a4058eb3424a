import Foundation
import Testing
import AssetPacks
import TestSupport

/// What another local user can plant in `downloads/` and `catalog/`, tried
/// with the real `assetpack` against nginx on 127.0.0.1: pack IDs that are
/// paths, FIFOs where records and locks belong, a control record written by
/// another uid, and symlinks where the container's directories belong. Each
/// command ends (bounded waits, never a hang) with its specific error, and
/// nothing outside the container is written.
@Suite(.serialized) struct DownloadRecordTests {
    typealias Site = PublishCommandTests.Site

    /// `Big` (3 MiB of noise, on demand) published, nginx serving it at
    /// `rate`; a prefetch pack `Pre` too; the container made (its layout
    /// with `downloads/`, `downloads/slots/`, `catalog/`).
    final class Fixture {
        let site: Site
        let nginx: NginxHost
        var container: String { site.dir.file("container") }
        var catalog: String { nginx.baseURL + "/catalog.json" }

        /// With `group`, the container is shared with that group (mode 2775,
        /// made before the store, as GroupSharedContainerTests does).
        init(rate: String = "50m", group: UInt32? = nil) throws {
            site = try Site(keys: false)
            try site.dir.write("src/Big/files/big.bin", noise(3 << 20, seed: 11))
            guard try site.publish([try site.pack("Big", "big", policy: DownloadCommandTests.onDemand), try site.pack("Pre", "pre")]).status == 0 else {
                throw TestFailure("publish failed")
            }
            nginx = try NginxHost(root: site.out, extra: "limit_rate \(rate);")
            if let group {
                guard chmod(site.dir.path, 0o755) == 0, mkdir(container, 0o755) == 0, chown(container, 0, group) == 0,
                      chmod(container, 0o2775) == 0 else { throw TestFailure("cannot share \(container) with group \(group)") }
            }
            _ = try AssetPackManager(container: .init(path: container))
        }

        deinit { nginx.stop() }

        /// `assetpack args…` as a process of its own, given `seconds` to end.
        func run(_ args: [String], seconds: Double = 60) throws -> (status: Int32, out: String, err: String) {
            let child = try Child(CLI.binary, args + ["--container", container])
            guard child.wait(timeout: seconds) else {
                child.signal(SIGKILL)
                _ = child.wait(timeout: 10)
                throw TestFailure("'assetpack \(args.joined(separator: " "))' did not end within \(seconds) s: \(child.stderr)")
            }
            return (child.exitStatus ?? -1, child.stdout, child.stderr)
        }

        func fetch(seconds: Double = 60) throws -> (status: Int32, out: String, err: String) {
            try run(["fetch", "Big", "--catalog", catalog], seconds: seconds)
        }

        /// Every path under the test's directory but the container, with its size.
        func outside() -> [String: Int] {
            containerFiles(site.dir.path).filter { !$0.key.hasPrefix("container") }
        }

        /// The name `catalog/` gives the catalog's cache entry: the first 16
        /// hex digits of the URL's SHA-256.
        func cacheEntry() throws -> String {
            let file = site.dir.file("url")
            try site.dir.write("url", Array(catalog.utf8))
            return String(try Program.run("sha256sum", [file]).out.prefix(16))
        }

        /// `args` run as uid 4242.
        func asPeer(_ args: [String]) throws -> Program.Result { try OtherUser.run(args) }

        /// `args` run as uid 4242 in group `group` (its primary group), under umask 022.
        func asMember(of group: UInt32, _ args: [String]) throws -> Program.Result {
            try Program.run("/usr/bin/setpriv", ["--reuid=\(peer)", "--regid=\(group)", "--clear-groups", "/bin/sh", "-c",
                                                 "umask 022 && exec \"$0\" \"$@\""] + args)
        }

        var peer: Int { OtherUser.uid }
    }

    /// The objects of the `layout.symlink` findings in `verify --json` output.
    static func symlinks(_ json: String) -> [String] {
        let report = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
        return ((report["findings"] as? [[String: Any]]) ?? []).filter { $0["code"] as? String == "layout.symlink" }.compactMap { $0["object"] as? String }
    }

    // MARK: Pack IDs (item 8)

    /// A pack ID that is a path (`../../../x`) is refused by every command
    /// that makes a file name of it, before any file is opened.
    @Test(arguments: ["cancel", "pause", "resume", "status"])
    func aPackIDThatIsAPathIsRefusedAndNothingIsMadeOutside(command: String) throws {
        let s = TemporaryDirectory("pack-id-\(command)")
        let container = s.file("a/b/container")
        _ = try AssetPackManager(container: .init(path: container))
        let before = containerFiles(s.path).filter { !$0.key.hasPrefix("a/b/container") }
        let r = try CLI.assetpack([command, "../../../x"], container: container)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr == "assetpack \(command): error: invalid asset pack ID '../../../x': must start with a letter or digit\n", "\(r.stderr)")
        #expect(containerFiles(s.path).filter { !$0.key.hasPrefix("a/b/container") } == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container + "/downloads") == ["slots"])
        // Inside the rule, a name that only looks like a path is refused for its character.
        let slash = try CLI.assetpack([command, "a/../x"], container: container)
        #expect(slash.status == 1 && slash.stderr.contains("only letters, digits, '.', '_' and '-' are allowed"), "\(slash.stderr)")
    }

    // MARK: FIFOs and foreign records (item 7)

    @Test(.timeLimit(.minutes(3))) func aFIFOAsAStatusRecordIsSkippedNotWaitedFor() throws {
        let f = try Fixture()
        #expect(mkfifo(f.container + "/downloads/Big.status", 0o666) == 0)
        let all = try f.run(["status"], seconds: 20)
        #expect(all.status == 0 && all.out.isEmpty, "\(all)")
        let one = try f.run(["status", "Big"], seconds: 20)
        #expect(one.status == 1 && one.err.contains("no download of 'Big' is recorded"), "\(one)")
        // A download replaces it with its record.
        let fetched = try f.fetch()
        #expect(fetched.status == 0, "\(fetched.err)")
        let record = try f.run(["status", "Big", "--json"], seconds: 20)
        #expect(record.status == 0 && jsonObject(record.out)["state"] as? String == "finished", "\(record)")
    }

    @Test(.timeLimit(.minutes(3))) func aFIFOAsAControlRecordIsIgnoredAndSaidSo() throws {
        let f = try Fixture()
        #expect(mkfifo(f.container + "/downloads/Big.control", 0o666) == 0)
        let fetched = try f.fetch()
        #expect(fetched.status == 0, "\(fetched.err)")
        let record = jsonObject(try f.run(["status", "Big", "--json"], seconds: 20).out)
        #expect(record["state"] as? String == "finished")
        #expect((record["reason"] as? String)?.contains("ignored: \(f.container)/downloads/Big.control is not a regular file") == true, "\(record)")
    }

    @Test(.timeLimit(.minutes(3))) func aFIFOAsTheDownloadLockOrASlotFailsTheDownloadNamingIt() throws {
        let f = try Fixture()
        #expect(mkfifo(f.container + "/downloads/Big.lock", 0o666) == 0)
        let fetched = try f.fetch(seconds: 30)
        #expect(fetched.status == 1 && fetched.err.contains("\(f.container)/downloads/Big.lock: not a regular file"), "\(fetched)")
        #expect(try CLI.assetpack(["cat", "files/data.txt", "--pack", "Big"], container: f.container).status != 0)

        // A discretionary download's slot.
        #expect(mkfifo(f.container + "/downloads/slots/0.lock", 0o666) == 0)
        let synced = try f.run(["sync", "--event", "first-installation", "--catalog", f.catalog], seconds: 30)
        #expect(synced.status == 1 && synced.err.contains("\(f.container)/downloads/slots/0.lock: not a regular file"), "\(synced)")
    }

    /// In a container shared with a group, uid 4242, a member, writes a
    /// cancel request for root's download: the download ignores it, says so
    /// in its record, and installs; `assetpack cancel` run by the member is
    /// refused as not permitted.
    @Test(.enabled(if: OtherUser.isAvailable), .timeLimit(.minutes(3)))
    func aControlRecordOfAnotherUserIsNotObeyed() throws {
        let group: UInt32 = 4300
        let f = try Fixture(rate: "1m", group: group)
        let fetcher = try Child(CLI.binary, ["fetch", "Big", "--catalog", f.catalog, "--container", f.container])
        var download = ""
        #expect(eventually(timeout: 30) {
            let o = jsonObject((try? CLI.assetpack(["status", "Big", "--json"], container: f.container).out) ?? "")
            download = o["download"] as? String ?? ""
            return o["state"] as? String == "downloading" && (o["bytes"] as? Int ?? 0) > 0
        }, "\(fetcher.stderr)")

        let refused = try f.asMember(of: group, [CLI.binary, "cancel", "Big", "--container", f.container])
        #expect(refused.status == 1 && refused.stderr.contains("the download of 'Big' is run by uid 0; only that user, the container's owner and root may cancel it"),
                "\(refused.stderr)")
        let written = try f.asMember(of: group, ["/bin/sh", "-c", "printf '%s\\n' \"$1\" > \"$2\"", "sh",
                                    "{\"download\":\"\(download)\",\"request\":\"cancel\"}", f.container + "/downloads/Big.control"])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(fetcher.wait(timeout: 60) && fetcher.exitStatus == 0, "\(fetcher.stderr)")
        #expect(try CLI.assetpack(["cat", "files/big.bin", "--pack", "Big"], container: f.container).stdoutBytes == noise(3 << 20, seed: 11))
        let record = jsonObject(try CLI.assetpack(["status", "Big", "--json"], container: f.container).out)
        #expect(record["state"] as? String == "finished")
        #expect((record["reason"] as? String)?.contains("a cancel request in \(f.container)/downloads/Big.control was written by uid \(f.peer)") == true,
                "\(record)")
    }

    // MARK: Symlinks (item 3)

    /// Another uid that may write `catalog/` links the catalog's cache entry
    /// to a directory of its own: root's fetch refuses to write through it
    /// (the directory stays empty), and verify reports the link.
    @Test(.enabled(if: OtherUser.isAvailable), .timeLimit(.minutes(3)))
    func aSymlinkedCatalogCacheEntryIsNotWrittenThrough() throws {
        let f = try Fixture()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: f.site.dir.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: f.container + "/catalog")
        let entry = f.container + "/catalog/" + (try f.cacheEntry())
        let theirs = f.site.dir.file("theirs")
        #expect(try f.asPeer(["/bin/mkdir", theirs]).status == 0)
        #expect(try f.asPeer(["/bin/ln", "-s", theirs, entry]).status == 0)

        let fetched = try f.fetch(seconds: 30)
        #expect(fetched.status == 1 && fetched.err.contains("\(entry) is a symbolic link"), "\(fetched)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs).isEmpty)
        let verify = try CLI.assetpack(["verify", "--json"], container: f.container)
        let name = try f.cacheEntry()
        #expect(verify.status == 4 && Self.symlinks(verify.out) == ["catalog/" + name], "\(verify.out)")
        #expect(try CLI.assetpack(["verify", "--repair"], container: f.container).status == 1)
        #expect(try f.fetch().status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs).isEmpty)
    }

    /// `downloads/` linked to a directory holding a status record: writers
    /// refuse the container, readers read nothing through the link, and the
    /// record outside is never overwritten.
    @Test(.timeLimit(.minutes(3))) func aSymlinkedDownloadsDirectoryIsNeitherReadNorWritten() throws {
        let f = try Fixture()
        let theirs = f.site.dir.file("theirs")
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: true)
        let record = #"{"format":1,"pack":"Big","download":"00000000000000aa","state":"downloading","bytes":1,"total":2,"rate":0,"version":"1","url":"http://x/","pid":1,"started":1,"updated":1}"# + "\n"
        try f.site.dir.write("theirs/Big.status", record)
        try FileManager.default.removeItem(atPath: f.container + "/downloads")
        try FileManager.default.createSymbolicLink(atPath: f.container + "/downloads", withDestinationPath: theirs)
        let before = f.outside()

        let fetched = try f.fetch(seconds: 30)
        #expect(fetched.status == 1 && fetched.err.contains("\(f.container)/downloads is a symbolic link"), "\(fetched)")
        let status = try f.run(["status"], seconds: 20)
        #expect(status.status == 0 && status.out.isEmpty, "\(status)")
        let cancel = try f.run(["cancel", "Big"], seconds: 20)
        #expect(cancel.status == 1 && cancel.err.contains("\(f.container)/downloads is a symbolic link"), "\(cancel)")
        #expect(f.outside() == before)
        #expect(try String(contentsOfFile: theirs + "/Big.status", encoding: .utf8) == record)
        let verify = try CLI.assetpack(["verify", "--json"], container: f.container)
        #expect(verify.status == 4 && Self.symlinks(verify.out) == ["downloads"], "\(verify.out)")
    }
}
