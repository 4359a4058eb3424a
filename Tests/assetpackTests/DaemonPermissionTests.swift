import Foundation
import Testing
import AssetPacks
import TestSupport

/// Who may ask the daemon for what, with real processes: a daemon run as
/// root (the container's owner), a peer run as uid 4242 through `setpriv`
/// that `--allow-uid` admits, and two sites on 127.0.0.1 — the owner's,
/// signed, and another, unsigned, serving a higher version of the owner's pack.
@Suite(.serialized) struct DaemonPermissionTests {
    typealias Site = PublishCommandTests.Site
    typealias Daemon = DaemonTests.Daemon

    /// A download request (kind 2) sent by a process of its own, and its
    /// reply as one line of JSON: `{"status":0,"result":0,"version":"2"}`,
    /// or `{"status":70,"fields":[pack, url, reason, message]}`. A sixth
    /// argument is the channel, sent as the fourth field.
    static let requester = #"""
    import json, socket, struct, sys
    path, pack, url, key, ca = sys.argv[1:6]
    def field(text):
        b = text.encode()
        return struct.pack('<H', len(b)) + b
    body = pack.encode() + field(url) + field(key) + field(ca)
    if len(sys.argv) > 6:
        body += field(sys.argv[6])
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(120)
    s.connect(path)
    s.sendall(b'APDQ' + struct.pack('<HHIHH', 1, 2, len(body), 1, len(pack.encode())) + body)
    def receive(n):
        data = b''
        while len(data) < n:
            piece = s.recv(n - len(data))
            if not piece:
                sys.exit('the daemon closed the connection')
            data += piece
        return data
    status, length = struct.unpack('<HI', receive(16)[6:12])
    b = receive(length)
    if status == 0:
        n = struct.unpack('<H', b[1:3])[0]
        print(json.dumps({'status': 0, 'result': b[0], 'version': b[3:3 + n].decode()}))
    else:
        count, at, fields = struct.unpack('<H', b[8:10])[0], 10, []
        for _ in range(count):
            n = struct.unpack('<H', b[at:at + 2])[0]
            fields.append(b[at + 2:at + 2 + n].decode())
            at += 2 + n
        print(json.dumps({'status': status, 'fields': fields}))
    """#

    struct Reply: Decodable, Equatable {
        var status: Int
        var result: Int?
        var version: String?
        var fields: [String]?

        /// The reason field of a refusal: the third of 70's three fields, or
        /// of the four a download's other failures carry.
        var reason: String? { fields.flatMap { $0.count == 4 || $0.count == 5 ? $0[2] : nil } }
        var message: String { fields?.last ?? "" }
    }

    /// The owner's site (signed, pack `Big` "signed one", of `channel`),
    /// another one (unsigned, `Big` version 9 "not yours"), a container
    /// holding the owner's pack, and a daemon admitting uid 4242.
    final class Fixture {
        let owner: Site
        let other: Site
        let ownerHost: NginxHost
        let otherHost: NginxHost
        var container: String { owner.dir.file("container") }
        var ownerCatalog: String { ownerHost.baseURL + "/catalog.json" }
        var otherCatalog: String { otherHost.baseURL + "/catalog.json" }
        var publicKey: String { try! String(contentsOfFile: owner.pub, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) }
        var daemon: Daemon!

        init(channel: String? = nil) throws {
            owner = try Site()
            let channelArguments = channel.map { ["--channel", $0] } ?? []
            other = try Site(keys: false)
            // uid 4242 must reach the socket through the directories above it.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: owner.dir.path)
            guard try owner.publish([try owner.pack("Big", "signed one", policy: DownloadCommandTests.onDemand), "--sign", owner.key]
                                    + channelArguments).status == 0,
                  try other.publish([try other.pack("Big", "not yours", version: 9, policy: DownloadCommandTests.onDemand)]).status == 0 else {
                throw TestFailure("publish failed")
            }
            ownerHost = try NginxHost(root: owner.out)
            otherHost = try NginxHost(root: other.out)
            let fetched = try CLI.assetpack(["fetch", "Big", "--catalog", ownerCatalog, "--key", owner.pub] + channelArguments,
                                            container: container)
            guard fetched.status == 0 else { throw TestFailure("fetch: \(fetched.stderr)") }
            daemon = try Daemon(container, ["--allow-uid", String(OtherUser.uid)])
        }

        deinit {
            ownerHost.stop()
            otherHost.stop()
        }

        /// What uid 4242 gets asking the daemon for `Big` from `url` (of
        /// `channel`: none sends three fields, which asks for `default`).
        func request(_ url: String, key: String? = nil, caFile: String? = nil, channel: String? = nil) throws -> Reply {
            let r = try OtherUser.run(["/usr/bin/python3", "-c", DaemonPermissionTests.requester, daemon.container.daemonSocketPath,
                                       "Big", url, key ?? "", caFile ?? ""] + (channel.map { [$0] } ?? []))
            guard r.status == 0 else { throw TestFailure("requester: \(r.stderr)") }
            return try JSONDecoder().decode(Reply.self, from: Data(r.out.utf8))
        }

        /// `files/data.txt` of `Big`, as uid 4242 gets it from the daemon.
        func readAsPeer() throws -> Program.Result {
            try OtherUser.run([CLI.binary, "cat", "files/data.txt", "--pack", "Big", "--daemon", "--container", container])
        }

        /// `files/data.txt` of `Big` as installed (read by root from the container).
        func installed() throws -> String {
            try CLI.assetpack(["cat", "files/data.txt", "--pack", "Big"], container: container).out
        }

        var peer: Int { OtherUser.uid }
    }

    @Test(.enabled(if: OtherUser.isAvailable), .timeLimit(.minutes(4)))
    func aPeerGetsDescriptorsAndDownloadsOnlyFromConfiguredSources() throws {
        let f = try Fixture()
        // Descriptors: served.
        let read = try f.readAsPeer()
        #expect(read.status == 0 && read.out == "signed one", "\(read.stderr)")

        // The other site, unsigned: refused before anything is fetched.
        let unsigned = try f.request(f.otherCatalog)
        #expect(unsigned.status == 70 && unsigned.reason == "871", "\(unsigned)")
        #expect(unsigned.fields?.prefix(2) == ["Big", f.otherCatalog])
        #expect(unsigned.message.contains("an unsigned catalog is never a source"), "\(unsigned.message)")
        // Naming the owner's key does not make it a source either.
        let borrowedKey = try f.request(f.otherCatalog, key: f.publicKey)
        #expect(borrowedKey.status == 70 && borrowedKey.reason == "870", "\(borrowedKey)")
        // Nor is the owner's own site until the owner configures it.
        let unconfigured = try f.request(f.ownerCatalog, key: f.publicKey)
        #expect(unconfigured.status == 70 && unconfigured.reason == "870", "\(unconfigured)")
        #expect(unconfigured.message.contains("not a source the container's owner configured"), "\(unconfigured.message)")
        #expect(f.otherHost.accessLog(count: 0) { _ in true }.isEmpty, "the daemon fetched from the other site")
        #expect(try f.installed() == "signed one")
        #expect(f.daemon.child.stderr.contains("refused a download of 'Big' from \(f.otherCatalog) for uid \(f.peer)"), "\(f.daemon.child.stderr)")

        // The owner configures its source; version 2 is published on it.
        let added = try CLI.assetpack(["sources", "add", f.ownerCatalog, "--key", f.owner.pub], container: f.container)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try f.owner.publish([try f.owner.pack("Big", "signed two", version: 2, policy: DownloadCommandTests.onDemand),
                                     "--sign", f.owner.key]).status == 0)
        // The peer may not pick the daemon's certificate authorities.
        let otherCA = try f.request(f.ownerCatalog, key: f.publicKey, caFile: "/etc/ssl/certs/ca-certificates.crt")
        #expect(otherCA.status == 70 && otherCA.reason == "870" && otherCA.message.contains("CA file"), "\(otherCA)")
        // Without a key the configured URL is still unsigned.
        #expect(try f.request(f.ownerCatalog).reason == "871")
        // The configured source, key and all: downloaded and installed by the daemon.
        let configured = try f.request(f.ownerCatalog, key: f.publicKey)
        #expect(configured == Reply(status: 0, result: 0, version: "2", fields: nil), "\(configured) \(f.daemon.child.stderr)")
        #expect(try f.installed() == "signed two")
        #expect(try f.readAsPeer().out == "signed two")
        // The other site's pack never got in, and the other site was never asked.
        #expect(f.otherHost.accessLog(count: 0) { _ in true }.isEmpty)
        f.daemon.stop()
    }

    /// A configured source admits its channel only: the owner's site is
    /// channel `stable` and configured so; uid 4242 asking the daemon for
    /// `beta` (or for `default`, no fourth field) at the same URL and key is
    /// refused with 70 `channelNotConfigured` (873) before anything is
    /// fetched, and `stable` is downloaded. A source the file lists without a
    /// channel is of `default`: `stable` is then refused, `default` admitted
    /// — and the daemon's fetch refuses the stable catalog it finds there
    /// (42 `catalogChannelMismatch`, 812), so neither check lets the other's
    /// channel through.
    @Test(.enabled(if: OtherUser.isAvailable), .timeLimit(.minutes(4)))
    func aConfiguredSourceAdmitsItsOwnChannelOnly() throws {
        let f = try Fixture(channel: "stable")
        let added = try CLI.assetpack(["sources", "add", f.ownerCatalog, "--key", f.owner.pub, "--channel", "stable"], container: f.container)
        #expect(added.status == 0 && added.stderr.contains("added (key ") && added.stderr.contains("channel stable"), "\(added.stderr)")
        #expect(try f.owner.publish([try f.owner.pack("Big", "signed two", version: 2, policy: DownloadCommandTests.onDemand),
                                     "--sign", f.owner.key]).status == 0)
        let fetchedBefore = f.ownerHost.accessLog(count: 0) { _ in true }.count

        for (asked, shown) in [("beta", "beta"), (nil, "default")] as [(String?, String)] {
            let refused = try f.request(f.ownerCatalog, key: f.publicKey, channel: asked)
            #expect(refused.status == 70 && refused.reason == "873", "\(asked ?? "no channel"): \(refused)")
            #expect(refused.fields?.prefix(2) == ["Big", f.ownerCatalog])
            #expect(refused.message == "uid \(f.peer) may not have the daemon download 'Big' from \(f.ownerCatalog): the container's owner "
                    + "configured it for channel 'stable', not '\(shown)' ('assetpack sources add --channel')", "\(refused.message)")
        }
        #expect(f.ownerHost.accessLog(count: 0) { _ in true }.count == fetchedBefore, "the daemon fetched for a refused channel")
        #expect(try f.installed() == "signed one")
        #expect(f.daemon.child.stderr.contains("refused a download of 'Big' from \(f.ownerCatalog) for uid \(f.peer)"), "\(f.daemon.child.stderr)")

        let stable = try f.request(f.ownerCatalog, key: f.publicKey, channel: "stable")
        #expect(stable == Reply(status: 0, result: 0, version: "2", fields: nil), "\(stable) \(f.daemon.child.stderr)")
        #expect(try f.installed() == "signed two")

        // The owner's file of before channels, its source without one: `default`.
        let file = f.container + "/trust/sources.json"
        let line = #"{"format":1,"sources":[{"key":"\#(f.publicKey)","url":"\#(f.ownerCatalog)"}]}"# + "\n"
        try Data(line.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try CLI.assetpack(["sources", "ls"], container: f.container).out == "\(f.ownerCatalog)  \(f.publicKey)  channel=default\n")
        let stableNow = try f.request(f.ownerCatalog, key: f.publicKey, channel: "stable")
        #expect(stableNow.status == 70 && stableNow.reason == "873" && stableNow.message.contains("channel 'default', not 'stable'"), "\(stableNow)")
        let asDefault = try f.request(f.ownerCatalog, key: f.publicKey)
        #expect(asDefault.status == 42 && asDefault.reason == "812", "\(asDefault)")
        #expect(asDefault.message.contains("the catalog is of channel 'stable', not the 'default' asked for"), "\(asDefault.message)")
        #expect(try f.installed() == "signed two")
        f.daemon.stop()
    }

    /// The daemon trusts `trust/sources.json` only as its owner's own file:
    /// another user's, or one its group or others may write, is ignored
    /// (the peer is refused, the daemon says why).
    @Test(.enabled(if: OtherUser.isAvailable), .timeLimit(.minutes(4)))
    func aSourcesFileTheOwnerDoesNotControlIsIgnored() throws {
        let f = try Fixture()
        let added = try CLI.assetpack(["sources", "add", f.ownerCatalog, "--key", f.owner.pub], container: f.container)
        #expect(added.status == 0, "\(added.stderr)")
        let file = f.container + "/trust/sources.json"
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect(attributes[.posixPermissions] as? Int == 0o644 && attributes[.ownerAccountID] as? Int == 0)

        try FileManager.default.setAttributes([.posixPermissions: 0o664], ofItemAtPath: file)
        let writable = try f.request(f.ownerCatalog, key: f.publicKey)
        #expect(writable.status == 70 && writable.reason == "870" && writable.message.contains("may write it (mode 664)"), "\(writable)")

        try FileManager.default.setAttributes([.posixPermissions: 0o644, .ownerAccountID: f.peer], ofItemAtPath: file)
        let foreign = try f.request(f.ownerCatalog, key: f.publicKey)
        #expect(foreign.status == 70 && foreign.reason == "870" && foreign.message.contains("owned by uid \(f.peer), not by uid 0"), "\(foreign)")
        #expect(f.daemon.child.stderr.contains("configured sources ignored"), "\(f.daemon.child.stderr)")

        // A FIFO there blocks nobody.
        try FileManager.default.removeItem(atPath: file)
        #expect(mkfifo(file, 0o644) == 0)
        let fifo = try f.request(f.ownerCatalog, key: f.publicKey)
        #expect(fifo.status == 70 && fifo.message.contains("not a regular file"), "\(fifo)")

        // Back to the owner's file: the peer is served.
        try FileManager.default.removeItem(atPath: file)
        #expect(try CLI.assetpack(["sources", "add", f.ownerCatalog, "--key", f.owner.pub], container: f.container).status == 0)
        #expect(try f.request(f.ownerCatalog, key: f.publicKey).status == 0)
        f.daemon.stop()
    }

    /// `assetpack sources add|ls|rm`: the owner's list, replaced by URL and
    /// key, refused without a key or with another scheme.
    @Test func sourcesAreAddedListedReplacedAndRemoved() throws {
        let s = TemporaryDirectory("assetpack-sources")
        #expect(try CLI.assetpack(["keygen", "--out", s.file("k")]).status == 0)
        let key = try String(contentsOfFile: s.file("k.pub"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let url = "https://cdn.example/packs/catalog.json"
        let added = try Program.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$2\" sources add \"$3\" --key k.pub --channel beta --ca-file cdn.pem --container container",
                                                "sh", s.path, CLI.binary, url])
        #expect(added.status == 0 && added.stderr.contains("\(url): added"), "\(added.stderr)")
        // The CA file made absolute.
        let first = try CLI.assetpack(["sources", "ls"], container: s.container)
        #expect(first.out == "\(url)  \(key)  channel=beta  ca-file=\(s.file("cdn.pem"))\n", "\(first.out)")
        // The same URL and key again: replaced, not added.
        #expect(try CLI.assetpack(["sources", "add", url, "--key", s.file("k.pub"), "--channel", "stable", "--ca-file", s.file("other.pem")],
                                  container: s.container).status == 0)
        let listed = try CLI.assetpack(["sources", "ls"], container: s.container)
        #expect(listed.status == 0 && listed.out == "\(url)  \(key)  channel=stable  ca-file=\(s.file("other.pem"))\n", "\(listed.out)")
        let json = jsonObject(try CLI.assetpack(["sources", "ls", "--json"], container: s.container).out)
        #expect(json["url"] as? String == url && json["key"] as? String == key && json["channel"] as? String == "stable")
        let attributes = try FileManager.default.attributesOfItem(atPath: s.container + "/trust/sources.json")
        #expect(attributes[.posixPermissions] as? Int == 0o644)

        // Without --channel: the default channel, said and listed.
        let other = "https://cdn.example/other/catalog.json"
        let plain = try CLI.assetpack(["sources", "add", other, "--key", s.file("k.pub")], container: s.container)
        #expect(plain.status == 0 && plain.stderr.hasPrefix("\(other): added (key ") && plain.stderr.hasSuffix(", channel default)\n"),
                "\(plain.stderr)")
        #expect(try CLI.assetpack(["sources", "ls"], container: s.container).out.hasSuffix("\(other)  \(key)  channel=default\n"))
        #expect(try CLI.assetpack(["sources", "rm", other], container: s.container).status == 0)
        // A channel that is not a channel name: refused, the file unchanged; one in the file: the file refused.
        let badChannel = try CLI.assetpack(["sources", "add", url, "--key", s.file("k.pub"), "--channel", "../beta"], container: s.container)
        #expect(badChannel.status == 1 && badChannel.stderr.contains("catalog channel '../beta' cannot be used"), "\(badChannel.stderr)")
        #expect(try CLI.assetpack(["sources", "ls"], container: s.container).out == listed.out)
        let file = s.container + "/trust/sources.json"
        let saved = try Data(contentsOf: URL(fileURLWithPath: file))
        let planted = #"{"format":1,"sources":[{"channel":"a/b","key":"\#(key)","url":"\#(url)"}]}"# + "\n"
        try Data(planted.utf8).write(to: URL(fileURLWithPath: file))
        let damaged = try CLI.assetpack(["sources", "ls"], container: s.container)
        #expect(damaged.status == 1 && damaged.stderr.contains("\(file): damaged trust state: sources[0]: channel 'a/b'"), "\(damaged.stderr)")
        try saved.write(to: URL(fileURLWithPath: file))

        let ftp = try CLI.assetpack(["sources", "add", "ftp://cdn.example/catalog.json", "--key", s.file("k.pub")], container: s.container)
        #expect(ftp.status == 1 && ftp.stderr.contains("must be http:// or https://"), "\(ftp.stderr)")
        let unsigned = try CLI.assetpack(["sources", "add", url], container: s.container)
        #expect(unsigned.status == 64 && unsigned.stderr.contains("add needs --key"), "\(unsigned.stderr)")

        #expect(try CLI.assetpack(["sources", "rm", url], container: s.container).status == 0)
        #expect(try CLI.assetpack(["sources", "ls"], container: s.container).out.isEmpty)
        let again = try CLI.assetpack(["sources", "rm", url], container: s.container)
        #expect(again.status == 1 && again.stderr.contains("\(url): no such configured source"), "\(again.stderr)")
    }
}
