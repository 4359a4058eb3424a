import Foundation
import Testing
import TestSupport

/// Two channels of one key, published by `assetpack publish` and fetched by
/// `assetpack fetch` from nginx on 127.0.0.1 (in process and through the
/// daemon): the beta catalog served at the stable URL is refused with its
/// own error, and the stable channel goes on after it.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ChannelCommandTests {
    typealias Site = PublishCommandTests.Site
    typealias Daemon = DaemonTests.Daemon

    final class Fixture {
        let site: Site
        let nginx: NginxHost
        var container: String { site.dir.file("container") }
        var stable: String { nginx.baseURL + "/stable/catalog.json" }
        var beta: String { nginx.baseURL + "/beta/catalog.json" }

        init() throws {
            site = try Site()
            try site.dir.write("out/stable/.keep", "")
            try site.dir.write("out/beta/.keep", "")
            nginx = try NginxHost(root: site.out)
        }

        deinit { nginx.stop() }

        /// Publishes version `version` of on-demand pack `A` holding `content` to `out/<channel dir>`.
        func publish(_ directory: String, _ content: String, version: Int, _ extra: [String] = []) throws {
            let pack = try site.pack("A", content, version: version, file: "A-\(directory)-\(version)", policy: DownloadCommandTests.onDemand)
            let r = try CLI.assetpack(["publish", pack, "--to", site.out + "/" + directory, "--sign", site.key] + extra)
            guard r.status == 0 else { throw TestFailure("publish: \(r.stderr)") }
        }

        func fetch(_ catalog: String, _ extra: [String] = []) throws -> Program.Result {
            try CLI.assetpack(["fetch", "A", "--catalog", catalog, "--key", site.pub] + extra, container: container)
        }

        func installed() throws -> String { try CLI.assetpack(["cat", "files/data.txt", "--pack", "A"], container: container).out }
    }

    @Test func aBetaCatalogAtTheStableURLIsRefusedAndTheStableChannelGoesOn() throws {
        let f = try Fixture()
        try f.publish("stable", "stable 1", version: 1)
        for v in 1...3 { try f.publish("beta", "beta \(v)", version: v, ["--channel", "beta"]) }
        let json = try jsonObject(String(decoding: f.site.dir.read("out/beta/catalog.json"), as: UTF8.self))
        #expect(json["channel"] as? String == "beta" && json["sequence"] as? Int == 3)

        let first = try f.fetch(f.stable)
        #expect(try first.status == 0 && f.installed() == "stable 1", "\(first.stderr)")

        // The beta catalog and its signature where the stable ones are.
        let genuine = try ["catalog.json", "catalog.json.sig"].map { ($0, try f.site.dir.read("out/stable/" + $0)) }
        for (name, _) in genuine { try f.site.dir.write("out/stable/" + name, try f.site.dir.read("out/beta/" + name)) }
        let refused = try f.fetch(f.stable)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(f.stable): the catalog is of channel 'beta', not the 'default' asked for: refused"), "\(refused.stderr)")
        #expect(try f.installed() == "stable 1")

        // Stable publishes version 2 (sequence 2, below beta's 3): accepted.
        for (name, bytes) in genuine { try f.site.dir.write("out/stable/" + name, bytes) }
        try f.publish("stable", "stable 2", version: 2)
        let next = try f.fetch(f.stable)
        #expect(next.status == 0 && next.stderr.contains("A: version 2 installed"), "\(next.stderr)")
        #expect(try f.installed() == "stable 2")

        // The beta catalog is for clients that ask for beta.
        let unasked = try f.fetch(f.beta)
        #expect(unasked.status == 1 && unasked.stderr.contains("the catalog is of channel 'beta', not the 'default' asked for"))
        let asked = try f.fetch(f.beta, ["--channel", "beta"])
        #expect(try asked.status == 0 && f.installed() == "beta 3", "\(asked.stderr)")
    }

    /// A caller's channel travels to the daemon with its download request.
    @Test func theDaemonDownloadsFromTheChannelTheCallerAskedFor() throws {
        let f = try Fixture()
        try f.publish("beta", "beta 1", version: 1, ["--channel", "beta"])
        let daemon = try Daemon(f.container)
        defer { daemon.stop() }
        let r = try f.fetch(f.beta, ["--channel", "beta"])
        #expect(try r.status == 0 && f.installed() == "beta 1", "\(r.stderr)")
        #expect(daemon.child.stderr.contains("download of 'A' finished"), "\(daemon.child.stderr)")
    }

    @Test func aChannelOtherThanTheCatalogsIsRefusedByPublish() throws {
        let f = try Fixture()
        try f.publish("stable", "stable 1", version: 1)
        let pack = try f.site.pack("A", "x", version: 2, file: "A-x", policy: DownloadCommandTests.onDemand)
        let r = try CLI.assetpack(["publish", pack, "--to", f.site.out + "/stable", "--sign", f.site.key, "--channel", "beta"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("the catalog is channel 'default', not 'beta': publish another channel to a directory of its own"), "\(r.stderr)")
    }
}
