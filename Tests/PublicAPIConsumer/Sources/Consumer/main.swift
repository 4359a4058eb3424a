// Uses every public call of AssetPacks once, through `import AssetPacks`
// alone, and checks what each returns. Exits non-zero on the first surprise.
import AssetPacks
import Foundation

func check(_ condition: Bool, _ what: String, line: Int = #line) {
    if !condition {
        FileHandle.standardError.write(Data("consumer: line \(line): \(what)\n".utf8))
        exit(1)
    }
}

func expectError(_ code: AssetPackError.Code, _ what: String, _ body: () throws -> Void) {
    do {
        try body()
        check(false, "\(what): no error")
    } catch let error as AssetPackError {
        check(error.code == code, "\(what): \(error.code) instead of \(code): \(error)")
        check(!error.localizedDescription.contains("AssetPackError"), "\(what): localizedDescription is \(error.localizedDescription)")
    } catch {
        check(false, "\(what): not an AssetPackError: \(error)")
    }
}

let work = FileManager.default.temporaryDirectory.appendingPathComponent("consumer-\(getpid())").path
try? FileManager.default.removeItem(atPath: work)
try FileManager.default.createDirectory(atPath: work + "/content/Levels", withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }
let level = Data(String(repeating: "{\"level\": 1}\n", count: 200).utf8)
try level.write(to: URL(fileURLWithPath: work + "/content/Levels/1.json"))
let media = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
try media.write(to: URL(fileURLWithPath: work + "/content/intro.m4v"))

// Manifests and packaging.
check(AssetPackManifest.template.contains("assetPackID"), "template")
let manifest = AssetPackManifest(assetPackID: "com.example.Consumer",
                                 downloadPolicy: .prefetch([.firstInstallation]),
                                 fileSelectors: [.directory("Levels", compression: .automatic),
                                                 .file("intro.m4v", compression: .stored)],
                                 platforms: [.linux])
let manifestText = """
    // comments are allowed
    {"assetPackID": "com.example.Consumer", "downloadPolicy": {"prefetch": {"installationEventTypes": ["firstInstallation"]}},
     "fileSelectors": [{"directory": "Levels"}, {"file": "intro.m4v", "compression": "stored"}], "platforms": ["linux"]}
    """
let parsed = try AssetPackManifest.parse(Data(manifestText.utf8), path: "inline.json")
check(parsed == manifest, "parsed manifest equals the built one")
try Data("{\"assetPackID\": \"x\"".utf8).write(to: URL(fileURLWithPath: work + "/bad.json"))
expectError(.invalidManifest, "truncated manifest") { _ = try AssetPackManifest.load(path: work + "/bad.json") }
let steps = LockedCount()
let pack = try Packager.package(manifest, root: work + "/content", manifestPath: "inline.json", output: work + "/Consumer.zip",
                                progress: { _ in steps.add() })
check(pack.members.count == 2 && pack.id == "com.example.Consumer" && pack.recordsManifest, "packaged")
check(pack.members.first { $0.path == "intro.m4v" }?.method == .stored, "media stored")
try Data(manifestText.utf8).write(to: URL(fileURLWithPath: work + "/manifest.json"))
let again = try Packager.package(manifestAt: work + "/manifest.json", root: work + "/content", output: work + "/Again.zip")
check(again.sha256 == pack.sha256, "packaging is deterministic")
let inspected = try AssetPackFile.inspect(at: work + "/Consumer.zip")
check(inspected.sha256.count == 64 && inspected.totalSize == UInt64(level.count + media.count), "inspect")

// Pack IDs.
try AssetPack.validate(id: "com.example.Consumer")
expectError(.invalidPackID, "a pack ID that is a path") { try AssetPack.validate(id: "../x") }
check(AssetPackError.Code(rawValue: 70) == .requestNotPermitted && AssetPackError.Reason(rawValue: 872) == .otherUsersDownload, "codes")

// A container, installs and reads.
let container = AssetPackManager.Container(path: work + "/container")
expectError(.noContainer, "read-only open of a missing container") {
    _ = try AssetPackManager(container: container, options: .init(createsContainer: false))
}
check(AssetPackManager.Container.default(group: "g", environment: ["HOME": "/home/u"]).path == "/home/u/.local/share/assetpacks/g",
      "default container")
let manager = try AssetPackManager(container: container, options: AssetPackManager.Options(lockTimeout: 5))
check(manager.container == container, "container")
expectError(.invalidOption, "a lock timeout that is not a number of seconds") { try manager.setLockTimeout(.nan) }
try manager.setLockTimeout(nil)
try manager.setLockTimeout(5)
let result = try manager.installPack(at: work + "/Consumer.zip", progress: { _ in steps.add() })
check(result.change == .installed && result.pack.memberCount == 2, "installed")
let same = try manager.install(packAt: URL(fileURLWithPath: work + "/Consumer.zip"))
check(same.sha256 == pack.sha256, "install(packAt:)")
let background = try manager.installPack(at: work + "/Consumer.zip", priority: .background)
check(background.change == .unchanged, "installPack(priority: .background)")
let priority: AssetPackManager.WorkPriority = .normal
check(try manager.install(packAt: URL(fileURLWithPath: work + "/Consumer.zip"), priority: priority).sha256 == pack.sha256,
      "install(packAt:priority:)")
expectError(.unsupportedURL, "http URL") { _ = try manager.install(packAt: URL(string: "http://127.0.0.1/x.zip")!) }
expectError(.notAFile, "directory as pack") { _ = try manager.installPack(at: work) }
check(try manager.allAssetPacks().map(\.id) == ["com.example.Consumer"], "allAssetPacks")
let installed = try manager.assetPack(withID: "com.example.Consumer")
check(installed.downloadPolicy == .prefetch([.firstInstallation]) && installed.platforms == [.linux], "policy and platforms")
check(installed.supports(.linux) && !installed.supports(.iOS), "a pack supports the platforms it lists")
check(installed.downloadPolicy.name == "prefetch" && installed.downloadPolicy.installationEventTypes == [.firstInstallation], "policy name")
expectError(.assetPackNotFound, "missing pack") { _ = try manager.assetPack(withID: "nope") }
check(try manager.contents(at: "Levels/1.json") == level, "contents")
check(try manager.contents(at: "intro.m4v", searchingInAssetPackWithID: "com.example.Consumer", verifyingChecksum: true) == media,
      "checked contents")
expectError(.fileNotFound, "missing file") { _ = try manager.contents(at: "nope") }
let streamed = work + "/streamed.bin"
let streamFD = open(streamed, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
check(try manager.write("Levels/1.json", to: streamFD) == Int64(level.count), "write(_:to:) of a deflated file")
check(try manager.write("intro.m4v", searchingInAssetPackWithID: "com.example.Consumer", to: streamFD, verifyingChecksum: false)
      == Int64(media.count), "write(_:to:) of a stored file")
close(streamFD)
check(FileManager.default.contents(atPath: streamed) == level + media, "written bytes")
expectError(.fileNotFound, "write of a missing file") { _ = try manager.write("nope", to: 1) }
func typedThrows(_ manager: AssetPackManager) -> AssetPackError.Code? {
    do {
        _ = try manager.contents(at: "nope", searchingInAssetPackWithID: "com.example.Consumer")
        return nil
    } catch {
        return error.code  // typed throws: `error` is an AssetPackError
    }
}
check(typedThrows(manager) == .fileNotFound, "typed throws")
let members = try manager.members(inAssetPackWithID: "com.example.Consumer", under: "Levels")
check(members.map(\.path) == ["Levels/1.json"] && members[0].size == UInt64(level.count), "members")
check(members[0].isCompressed == (members[0].method == .deflated), "isCompressed")
check(AssetMember.printable("a\u{1b}[31mb") == "a\\x1b[31mb", "printable")

// Limits against decompression bombs: the container's, or a manager's own.
check(try manager.limits() == .defaults && manager.recordedLimits() == nil, "default limits")
try manager.setLimits(AssetPackManager.Limits(maximumMemberSize: 100))
check(try manager.recordedLimits()?.maximumMemberSize == 100, "recorded limits")
expectError(.limitExceeded, "a deflated member over the limits") { _ = try manager.contents(at: "Levels/1.json") }
let ownLimits = try AssetPackManager(container: container, options: .init(limits: .init(maximumCompressionRatio: 1000)))
check(try ownLimits.contents(at: "Levels/1.json") == level, "a manager's own limits")
try manager.setLimits(nil)
expectError(.limitExceeded, "inspect over the limits") {
    _ = try AssetPackFile.inspect(at: work + "/Consumer.zip", limits: .init(maximumPackSize: 1))
}

// Descriptors.
let video = try manager.descriptor(for: "intro.m4v")
check(video.source == .archive && video.length == Int64(media.count), "archive descriptor")
var head = [UInt8](repeating: 0, count: 16)
let got = try head.withUnsafeMutableBytes { try video.read(into: $0, at: Int64(media.count) - 8) }
check(got == 8 && Array(head[..<8]) == Array(media.suffix(8)), "read stops at the member's end")
check(try video.data() == media, "descriptor data")
check(video.fileDescriptor >= 0 && !video.isClosed && video.offset > 0, "fileDescriptor")
try video.close()
check(video.isClosed, "closed")
let standalone = try manager.descriptor(for: "intro.m4v", options: .standalone)
check(standalone.source == .memory && standalone.offset == 0, "standalone")
let raw = standalone.take()
check(lseek(raw, 0, SEEK_END) == off_t(media.count), "a standalone descriptor ends where the member does")
close(raw)
let own = try manager.descriptor(for: "intro.m4v", options: [.standalone, .ownOffset])
check(try lseek(own.fileDescriptor, 0, SEEK_CUR) == 0 && own.data() == media, "a standalone descriptor with its own offset")
var uncachedOptions = AssetPackManager.Options()
uncachedOptions.memoryFileCacheBytes = 0
uncachedOptions.memoryFileCacheCount = 0
let uncached = try AssetPackManager(container: container, options: uncachedOptions)
check(try uncached.descriptor(for: "intro.m4v", options: .standalone).data() == media, "a manager without a memory-file cache")

// The daemon and its client.
var daemonConfiguration = DescriptorDaemon.Configuration()
daemonConfiguration.maximumDownloads = 1
daemonConfiguration.downloadDeadlines = AssetPackManager.Deadlines(minimumBytesPerSecond: 512, minimumSpeedInterval: 30,
                                                                   maximumDownloadTime: 3600)
daemonConfiguration.acceptsSocketActivation = true  // no LISTEN_* here: it binds daemon.sock itself
let daemon = try DescriptorDaemon(manager: manager, configuration: daemonConfiguration)
check(!daemon.isSocketActivated, "a daemon that bound its socket")
let thread = Thread { daemon.run() }
thread.start()
let client = try AssetPackClient.connect(container: container, timeout: 5)
let remote = try client.descriptor(for: "Levels/1.json", searchingInAssetPackWithID: "com.example.Consumer")
check(try remote.data() == level, "daemon descriptor")
do {
    _ = try client.descriptor(for: "nope")
    check(false, "daemon: missing file")
} catch {
    check(error.code == .fileNotFound && error.member == "nope", "daemon error keeps its code: \(error)")
}
let several = try client.descriptors(for: ["Levels/1.json", "nope"], searchingInAssetPackWithID: "com.example.Consumer")
check(several.count == 2 && (try? several[0].get().data()) == level, "daemon batch")
if case .failure(let error) = several[1] { check(error.code == .fileNotFound, "daemon batch member error") } else { check(false, "daemon batch: missing file") }
daemon.stop()
check(daemon.container == container && daemon.socketPath == container.daemonSocketPath, "daemon")

// Verification, garbage collection, removal.
let report = try manager.verify(Verification.Options(deep: true, progress: { _ in steps.add() }))
check(!report.hasErrors && report.packsChecked == 1 && report.findings.allSatisfy { $0.severity != .error }, "verify")
check(Verification.Code.archiveMissing.severity == .error, "finding severity")
_ = try manager.collectGarbage()
try manager.remove(assetPackWithID: "com.example.Consumer")
expectError(.assetPackNotFound, "removed") { try manager.remove(assetPackWithID: "com.example.Consumer") }
check(steps.value > 0, "progress reported")
check(AssetPackError.Code.allCases.count == Set(AssetPackError.Code.allCases.map(\.rawValue)).count, "codes are unique")
let progress = AssetPackProgress(phase: .copying, unit: .bytes, completed: 1, total: 2)
check(progress.fraction == 0.5, "progress fraction")
// Keys, publishing, catalogs and the client's trust checks.
let signingKey = try AssetPackSigningKey.generate()
try signingKey.write(privateKeyTo: work + "/k.key", publicKeyTo: work + "/k.pub")
let publicKey = try AssetPackPublicKey.load(path: work + "/k.pub")
let reread = try AssetPackPublicKey(publicKey.description)
check(publicKey == signingKey.publicKey && reread == publicKey, "public key text")
let reloaded = try AssetPackSigningKey.load(path: work + "/k.key")
check(publicKey.keyID.count == 16 && reloaded.publicKey == publicKey, "key files")
expectError(.invalidKey, "bad public key") { _ = try AssetPackPublicKey("ed25519:nope") }
let published = try AssetPackPublisher.publish(packsAt: [work + "/Consumer.zip"], to: work + "/site",
                                               options: AssetPackPublisher.Options(signingKey: signingKey, expires: Date().addingTimeInterval(3600),
                                                                                   channel: AssetPackCatalog.defaultChannel))
check(published.changes.map(\.kind) == [.published] && published.catalog.sequence == 1, "publish")
check(published.catalog.channel == "default", "the catalog names its channel")
let entry = published.catalog.entry(withID: "com.example.Consumer")
check(entry?.version == 1 && entry?.sha256 == inspected.sha256 && entry?.size == inspected.size, "catalog entry")
check(entry?.url(relativeTo: URL(string: "https://cdn.example.com/site/catalog.json")!)?.absoluteString
      == "https://cdn.example.com/site/" + (entry?.url ?? ""), "entry URL resolves against the catalog's")
check(entry?.pieces?.url == (entry?.url ?? "") + ".pieces" && entry?.pieces?.size ?? 0 > 0 && entry?.pieces?.sha256.count == 64,
      "catalog entry names its piece map")
let piecesReference = AssetPackCatalog.PiecesReference(url: "p.zip.pieces", size: 1, sha256: String(repeating: "0", count: 64))
check(piecesReference.size == 1, "pieces reference")
let findings = try AssetPackPublisher.verifyPublished(at: work + "/site", publicKey: publicKey)
check(findings.isEmpty, "verify-published clean: \(findings)")
let catalogBytes = try Data(contentsOf: URL(fileURLWithPath: work + "/site/catalog.json"))
let signatureBytes = try Data(contentsOf: URL(fileURLWithPath: work + "/site/catalog.json.sig"))
let parsedCatalog = try AssetPackCatalog.parse(catalogBytes, source: "catalog.json")
check(parsedCatalog == published.catalog, "catalog parses")
check(published.catalog.encoded() == catalogBytes && AssetPackCatalog.format == 1, "catalog encodes to its bytes")
let verifier = AssetPackCatalogVerifier(publicKey: publicKey, container: container)
let accepted = try verifier.accept(catalog: catalogBytes, signature: signatureBytes, source: "https://cdn.example.com/site/catalog.json")
check(accepted == published.catalog, "verifier accepts")
let sequence = try verifier.acceptedSequence(source: "https://cdn.example.com/site/catalog.json")
check(sequence == 1, "accepted sequence")
expectError(.catalogUnsigned, "unsigned") { _ = try verifier.accept(catalog: catalogBytes, signature: nil, source: "s") }
let older = AssetPackCatalog(sequence: 0, published: Date(), expires: nil, packs: [], channel: "default")
expectError(.catalogRollback, "rollback") {
    _ = try verifier.accept(catalog: older.encoded(), signature: signingKey.signature(for: older.encoded()),
                            source: "https://cdn.example.com/site/catalog.json")
}
expectError(.invalidCatalog, "bad catalog") { _ = try AssetPackCatalog.parse(Data("{}".utf8), source: "c") }
let betaVerifier = AssetPackCatalogVerifier(publicKey: publicKey, container: container, channel: "beta")
check(betaVerifier.channel == "beta" && verifier.channel == "default", "verifier channels")
expectError(.catalogChannelMismatch, "another channel") {
    _ = try betaVerifier.accept(catalog: catalogBytes, signature: signatureBytes, source: "https://cdn.example.com/site/catalog.json")
}
check(AssetPackCatalogVerifier(publicKey: nil, stateDirectory: work + "/trust").publicKey == nil, "keyless verifier")

// Downloads: the published site served over HTTP on 127.0.0.1 (python3's
// http.server, port 0), fetched into the container by a manager with a catalog.
let server = Process()
server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
server.arguments = ["python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", work + "/site", "0"]
let serverOutput = Pipe()
server.standardOutput = serverOutput
server.standardError = FileHandle.nullDevice
try server.run()
var banner = ""
while !banner.contains("\n"), let byte = try serverOutput.fileHandleForReading.read(upToCount: 1), !byte.isEmpty {
    banner += String(decoding: byte, as: UTF8.self)
}
let port = banner.split(separator: " ").first { Int($0) != nil }.map(String.init) ?? ""
check(!port.isEmpty, "http.server's port: \(banner)")

// Top-level variables belong to the main actor, which waits below: the
// downloads get what they use as arguments and run on a detached task.
func downloads(port: String, work: String, container: AssetPackManager.Container, publicKey: AssetPackPublicKey,
               media: Data, manager: AssetPackManager) async {
    var source = AssetPackManager.CatalogSource(url: "http://127.0.0.1:\(port)/catalog.json", publicKey: publicKey)
    source.maximumAttempts = 2
    source.initialBackoff = 0.01
    source.stallTimeout = 10
    source.channel = AssetPackCatalog.defaultChannel
    source.deadlines.minimumBytesPerSecond = 256
    source.deadlines.maximumDownloadTime = 600
    do {
        let downloader = try AssetPackManager(container: container, options: AssetPackManager.Options(catalog: source))
        check(downloader.catalogSource == source, "catalog source")
        let listed = try await downloader.allAssetPacks()
        check(listed.map(\.id) == ["com.example.Consumer"] && listed[0].status == .downloadAvailable, "listed from the catalog")
        let available = try await downloader.assetPack(withID: "com.example.Consumer")
        let reports = LockedCount()
        try await downloader.ensureLocalAvailability(of: available, progress: { p in
            if p.phase == .downloading { reports.add() }
        })
        check(reports.value > 0, "download progress")
        let installed = try await downloader.assetPack(withID: "com.example.Consumer")
        check(installed.status == [.downloaded, .upToDate] && installed.sha256 == available.sha256, "installed: \(installed.status)")
        check(try downloader.contents(at: "intro.m4v", searchingInAssetPackWithID: "com.example.Consumer") == media, "downloaded bytes")
        let policed = try AssetPackManager(container: container, options: AssetPackManager.Options(
            catalog: source,
            discretionary: AssetPackManager.Discretionary(maximumBytesPerSecond: 1 << 20, maximumConcurrentDownloads: 2,
                                                          defersOnBattery: false, maximumLoadAverage: nil, recheckInterval: 1),
            systemRoot: work + "/system", downloaderExtension: Declines()))
        let updates = try await policed.checkForUpdates()
        check(updates.updating.isEmpty && updates.removed.isEmpty, "nothing to update: \(updates)")
        let automatic = try await policed.ensureAvailability(of: installed, forInstallationEvent: .firstInstallation, progress: nil,
                                                             onDeferral: { _ in })
        check(automatic == .upToDate && AssetPackManager.AutomaticDownloadOutcome.allCases.count == 5, "automatic: \(automatic)")
        check(AssetPackManager.Discretionary().maximumConcurrentDownloads == 1 && AssetPackManager.Discretionary.slotLimit == 64,
              "discretionary defaults")
        do {
            _ = try AssetPackManager(container: container, options: AssetPackManager.Options(
                discretionary: AssetPackManager.Discretionary(maximumConcurrentDownloads: 0)))
            check(false, "no download slots")
        } catch {
            check(error.code == .invalidOption && error.field == "discretionary.maximumConcurrentDownloads", "invalid option: \(error)")
        }
        let other: AssetPack.Status = [.updateAvailable, .outOfDate, .obsolete, .downloading]
        check(!other.contains(.upToDate) && other.contains(.obsolete), "status set")
        do {
            _ = try await downloader.assetPack(withID: "com.example.Nope")
            check(false, "a pack no one has")
        } catch {
            check(error.code == .assetPackNotFound, "not in the catalog: \(error)")
        }
        let offline = try AssetPackManager(
            container: AssetPackManager.Container(path: work + "/offline"),
            options: AssetPackManager.Options(catalog: AssetPackManager.CatalogSource(url: "http://127.0.0.1:1/catalog.json")))
        do {
            try await offline.ensureLocalAvailability(of: available)
            check(false, "no server, no cache")
        } catch {
            check(error.code == .catalogUnavailable, "unreachable catalog: \(error)")
        }
        do {
            try offline.beginBackgroundDownload(of: available, discretionary: true)
            check(false, "a background download without a daemon")
        } catch {
            check(error.code == .daemonUnavailable && error.path == offline.container.daemonSocketPath, "no daemon: \(error)")
        }
        check(AssetPackManager.Options(catalog: source, downloadsInProcess: true).downloadsInProcess, "downloadsInProcess")
        // The catalog cache's limits, and the sources the daemon downloads from for other users.
        var cached = AssetPackManager.Options(catalog: source)
        cached.catalogCache = AssetPackManager.Options.CatalogCache(maximumCatalogs: 1, maximumBytes: 1 << 20, maximumAge: 86_400)
        check(try await AssetPackManager(container: container, options: cached).allAssetPacks().count == 1, "a capped cache answers")
        var uncapped = AssetPackManager.Options()
        uncapped.catalogCache.maximumCatalogs = 0
        expectError(.invalidOption, "a catalog cache of no catalogs") { _ = try AssetPackManager(container: container, options: uncapped) }
        let configured = AssetPackManager.ConfiguredSource(url: source.url, publicKey: publicKey, channel: "stable", caFile: nil)
        try manager.addConfiguredSource(configured)
        check(try manager.configuredSources() == [configured] && manager.configuredSources(owner: getuid()).count == 1, "configured")
        expectError(.unsupportedURL, "a source that is not http(s)") {
            try manager.addConfiguredSource(.init(url: "ftp://127.0.0.1/catalog.json", publicKey: publicKey))
        }
        check(AssetPackManager.ConfiguredSource(url: source.url, publicKey: publicKey).channel == AssetPackCatalog.defaultChannel,
              "a source's channel is the default one unless given")
        expectError(.invalidOption, "a source's channel that is not a channel name") {
            try manager.addConfiguredSource(.init(url: source.url, publicKey: publicKey, channel: "a/b"))
        }
        check(AssetPackError.Reason(rawValue: 873) == .channelNotConfigured, "the reason of another channel than the configured one")
        check(try manager.removeConfiguredSource(url: source.url, publicKey: publicKey) == 1 && manager.configuredSources().isEmpty, "removed")
        let local = try await manager.allAssetPacks()
        check(local.map(\.id) == ["com.example.Consumer"] && local[0].status == .downloaded,
              "a manager without a catalog lists what is installed")
    } catch {
        check(false, "downloads: \(error)")
    }
}
let downloaded = DispatchSemaphore(value: 0)
Task.detached { [port, work, container, publicKey, media, manager] in
    await downloads(port: port, work: work, container: container, publicKey: publicKey, media: media, manager: manager)
    downloaded.signal()
}
downloaded.wait()
server.terminate()
server.waitUntilExit()

print("public API: ok")

/// A downloader extension that declines every pack.
struct Declines: AssetPackDownloaderExtension {
    func shouldDownload(_ assetPack: AssetPack) -> Bool { false }
}

final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
