import Foundation
import Testing
import AssetArchive
import AssetDelivery
import AssetStore
import TestSupport

/// A catalog names its channel in its signed bytes, and a client refuses
/// another channel's catalog (signed by the same key) at the URL it asked
/// — before any trust state is touched, so a beta catalog can never lock
/// the stable channel out.
@Suite struct ChannelTests {
    let dir = TemporaryDirectory("channels")
    let key: SigningKey
    let now = CatalogTime(seconds: 1_796_117_400)

    init() throws { key = try SigningKey.generate() }

    /// Publishes pack `id` holding `content` into `site/<name>` with `channel`.
    @discardableResult
    func publish(_ name: String, _ id: String, _ content: String, channel: String?, at: Int64 = 0) throws -> Publisher.Report {
        let path = dir.file("\(name)-\(id).zip")
        try ArchiveWriter.write([ArchiveWriter.Member(path: "a.txt", source: .bytes(Array(content.utf8)), compression: .automatic)],
                                comment: PackDescription(id: id, downloadPolicy: .onDemand, platforms: [.linux]).archiveComment, to: path)
        return try Publisher.publish([path], to: dir.file("site/" + name),
                                     options: .init(signingKey: key, now: CatalogTime(seconds: now.seconds + at), channel: channel))
    }

    func fetcher(_ url: String, channel: String = Catalog.defaultChannel) throws -> CatalogFetcher {
        var options = Downloader.Options()
        options.maximumAttempts = 1
        return try CatalogFetcher(catalogURL: url, publicKey: key.publicKey, channel: channel,
                                  store: AssetStore(container: GroupContainer(path: dir.file("container"))), options: options)
    }

    @Test func publishNamesTheDefaultChannelKeepsItAndRefusesAnother() throws {
        #expect(try publish("stable", "A", "a", channel: nil).catalog.channel == "default")
        #expect(try publish("stable", "A", "a2", channel: nil, at: 1).catalog.channel == "default")
        #expect(try publish("stable", "A", "a3", channel: "default", at: 2).catalog.channel == "default")
        #expect(throws: DeliveryError.publishRefused(
            path: dir.file("site/stable"), pack: nil, problem: .channelChanged,
            detail: "the catalog is channel 'default', not 'beta': publish another channel to a directory of its own")) {
            try publish("stable", "A", "a4", channel: "beta", at: 3)
        }
        #expect(try publish("beta", "A", "b", channel: "beta").catalog.channel == "beta")
        #expect(try publish("beta", "A", "b2", channel: nil, at: 1).catalog.channel == "beta")
        let bytes = try dir.read("site/beta/catalog.json")
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"channel":"beta","#))
        #expect(throws: DeliveryError.publishRefused(path: dir.file("site/x"), pack: nil, problem: .badArgument,
                                                     detail: "channel 'be ta': only letters, digits, '.', '_' and '-' are allowed")) {
            try publish("x", "A", "x", channel: "be ta")
        }
    }

    /// A catalog written before channels gets one at its next publish.
    @Test func aCatalogWithoutAChannelGetsOneWhenPublishedAgain() throws {
        try publish("old", "A", "a", channel: nil)
        var catalog = try Catalog.parse(dir.read("site/old/catalog.json"), path: "catalog.json")
        catalog.channel = nil
        try dir.write("site/old/catalog.json", catalog.encoded())
        try? FileManager.default.removeItem(atPath: dir.file("site/old/catalog.json.sig"))
        #expect(try publish("old", "A", "a2", channel: "beta", at: 1).catalog.channel == "beta")
    }

    @Test func theChannelParsesAndABadOneIsRefused() throws {
        let catalog = Catalog(sequence: 1, published: now, expires: nil, packs: [], channel: "beta.2")
        #expect(try Catalog.parse(catalog.encoded(), path: "c.json") == catalog)
        for (json, problem) in [(#"{"channel":"","format":1,"packs":[],"published":"2026-12-01T09:30:00Z","sequence":1}"#, DeliveryError.CatalogProblem.badChannel),
                                (#"{"channel":".x","format":1,"packs":[],"published":"2026-12-01T09:30:00Z","sequence":1}"#, .badChannel),
                                (#"{"channel":7,"format":1,"packs":[],"published":"2026-12-01T09:30:00Z","sequence":1}"#, .wrongType)] {
            #expect {
                try Catalog.parse(Array(json.utf8), path: "c.json")
            } throws: { error in
                guard case .invalidCatalog("c.json", "channel", problem, _) = error as? DeliveryError else { return false }
                return true
            }
        }
    }

    /// The attack: the beta catalog (same key, higher sequence) served at
    /// the stable URL, after the stable one was accepted there. Refused
    /// with its own error, the stable channel's trust state untouched; the
    /// next stable catalog is accepted after it.
    @Test(arguments: [nil, "stable"] as [String?])
    func aBetaCatalogAtTheStableURLIsRefusedAndStableStillWorks(stable: String?) throws {
        let stableChannel = stable ?? Catalog.defaultChannel
        try publish("stable", "A", "stable 1", channel: stable)
        for i in 0..<3 { try publish("beta", "A", "beta \(i)", channel: "beta", at: Int64(i)) }
        let nginx = try NginxHost(root: dir.file("site"))
        defer { nginx.stop() }
        let stableURL = nginx.baseURL + "/stable/catalog.json"
        let client = try fetcher(stableURL, channel: stableChannel)
        let first = try client.fetch(now: now)
        #expect(first.catalog.sequence == 1 && first.catalog.channel == stableChannel)

        // The beta catalog and signature where the stable ones are (a
        // mirror serving the wrong directory, or an attacker between).
        let genuine = try ["catalog.json", "catalog.json.sig"].map { ($0, try dir.read("site/stable/" + $0)) }
        for (name, _) in genuine { try dir.write("site/stable/" + name, try dir.read("site/beta/" + name)) }
        #expect(throws: DeliveryError.catalogChannelMismatch(path: stableURL, expected: stableChannel, found: "beta")) {
            try client.fetch(now: now)
        }
        #expect(DeliveryError.catalogChannelMismatch(path: stableURL, expected: stableChannel, found: "beta").description
                == "\(stableURL): the catalog is of channel 'beta', not the '\(stableChannel)' asked for: refused")
        // The stable channel's state still holds sequence 1, and the cache the stable catalog.
        #expect(try client.verifier.acceptedRecord(source: stableURL)?.sequence == 1)
        #expect(try client.cachedCatalog(now: now)?.channel == stableChannel)

        // The stable channel goes on: its next catalog (sequence 2, below beta's 3) is accepted.
        for (name, bytes) in genuine { try dir.write("site/stable/" + name, bytes) }
        try publish("stable", "A", "stable 2", channel: stable, at: 1)
        let again = try client.fetch(now: now)
        #expect(again.catalog.sequence == 2 && again.origin == .server && again.catalog.channel == stableChannel)

        // The beta channel, asked for, is accepted at its URL.
        #expect(try fetcher(nginx.baseURL + "/beta/catalog.json", channel: "beta").fetch(now: now).catalog.sequence == 3)
    }

    /// A catalog without a channel is refused, asked for the default
    /// channel or another: its bytes do not say which catalog it is.
    @Test(arguments: ["default", "beta"])
    func aCatalogThatNamesNoChannelIsRefused(channel: String) throws {
        let bytes = Catalog(sequence: 1, published: now, expires: nil, packs: []).encoded()
        let verifier = CatalogVerifier(publicKey: key.publicKey, stateDirectory: dir.file("trust"), channel: channel)
        #expect(throws: DeliveryError.catalogChannelMismatch(path: "u", expected: channel, found: nil)) {
            try verifier.accept(catalog: bytes, signature: CatalogSignature(signing: bytes, with: key).encoded, source: "u", now: now)
        }
        #expect(try verifier.acceptedRecord(source: "u") == nil)
    }

    /// Rollback state is per channel: a high beta sequence at one URL
    /// leaves the default channel's state at that URL alone.
    @Test func trustStateIsKeptPerChannel() throws {
        let state = dir.file("trust")
        for (channel, sequence) in [("beta", UInt64(9)), ("default", 2)] {
            let bytes = Catalog(sequence: sequence, published: now, expires: nil, packs: [], channel: channel).encoded()
            let verifier = CatalogVerifier(publicKey: key.publicKey, stateDirectory: state, channel: channel)
            _ = try verifier.accept(catalog: bytes, signature: CatalogSignature(signing: bytes, with: key).encoded, source: "u", now: now)
            #expect(try verifier.acceptedRecord(source: "u")?.sequence == sequence)
            #expect(try verifier.acceptedRecord(source: "u")?.channel == channel)
        }
    }
}
