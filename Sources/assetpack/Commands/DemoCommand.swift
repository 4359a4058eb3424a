import Foundation
import AssetPacks
import AssetServer

/// `assetpack demo`: the whole life of a pack, end to end, on built-in sample content.
enum DemoCommand: Command {
    static let name = "demo"
    static let summary = "Package, publish (signed), serve, download, read (bytes and descriptors), update, verify and remove a sample pack."

    static let keep = Option.flag("keep", help: "Keep the temporary directory (sample, pack, container).")
    /// Not the shared container option: without it the demo uses a temporary
    /// container, and it takes no `--group`.
    static let container = Option.value("container", placeholder: "dir",
                                        help: "Install into this container instead of a temporary one.",
                                        completion: .directory)

    static let options = [keep, container]

    struct Failure: Error { let message: String }

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let work = FileManager.default.temporaryDirectory.path + "/assetpack-demo-\(getpid())"
        defer { if !arguments.flag(keep) { try? FileManager.default.removeItem(atPath: work) } }
        do {
            try runDemo(work: work, containerPath: arguments.value(container) ?? work + "/container")
            if arguments.flag(keep) { Output.line("kept \(work)") }
            return ExitCode.success
        } catch let error as AssetPackError {
            throw .from(error)
        } catch let error as Failure {
            throw .failure("demo check failed: \(error.message)")
        } catch {
            throw .failure("\(error)")
        }
    }

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw Failure(message: message()) }
    }

    static func step(_ text: String) { Output.line("==> " + text) }

    static func runDemo(work: String, containerPath: String) throws {
        let sample = work + "/sample"
        let files = try SampleContent.write(to: sample)
        step("sample content in \(sample): \(TextLayout.count(files.count, "file")), \(TextLayout.count(files.values.reduce(0) { $0 + $1.count }, "byte"))")

        // Package twice: the packager is deterministic.
        let pack = work + "/Demo.zip"
        let archive = try Packager.package(manifestAt: sample + "/manifest.json", output: pack)
        try Packager.package(manifestAt: sample + "/manifest.json", output: work + "/Demo-again.zip")
        let first = try Data(contentsOf: URL(fileURLWithPath: pack))
        try check(first == (try Data(contentsOf: URL(fileURLWithPath: work + "/Demo-again.zip"))), "packaging twice gave different bytes")
        step("packaged \(TextLayout.count(archive.members.count, "file")) into \(pack) (\(first.count) bytes); packaging again gave identical bytes")
        for m in archive.members {
            let align = m.method == .stored ? ", data at offset \(m.dataOffset) (\(m.dataOffset % 4096 == 0 ? "page" : "16-byte") aligned)" : ""
            Output.line("    \(m.method == .stored ? "stored  " : "deflated") \(m.path): \(m.size) → \(m.storedSize) bytes\(align)")
        }

        // Publish it signed, host the directory on loopback, and let the
        // pack arrive the way a program's packs do: from the catalog.
        let site = work + "/site"
        let key = try AssetPackSigningKey.generate()
        let published = try AssetPackPublisher.publish(packsAt: [pack], to: site, options: .init(signingKey: key))
        step("published \(pack) to \(site) as \(published.catalog.packs.map(\.url).joined(separator: ", ")), catalog sequence \(published.catalog.sequence), signed by key \(key.publicKey.keyID)")
        let server = try DemoServer(directory: site)
        defer { server.stop() }
        step("serving \(site) at \(server.url)")
        let source = AssetPackManager.CatalogSource(url: server.url + "catalog.json", publicKey: key.publicKey)
        let manager = try AssetPackManager(container: .init(path: containerPath), options: .init(catalog: source))
        let offered = try CatalogOptions.wait { () async throws(AssetPackError) in try await manager.assetPack(withID: "com.example.Demo") }
        try check(offered.status.contains(.downloadAvailable), "the catalog's pack is not offered for download: \(offered.status)")
        try CatalogOptions.wait { () async throws(AssetPackError) in try await manager.ensureLocalAvailability(of: offered) }
        let installed = try CatalogOptions.wait { () async throws(AssetPackError) in try await manager.assetPack(withID: offered.id) }
        try check(installed.status.contains(.upToDate), "the downloaded pack is not up to date: \(installed.status)")
        step("downloaded \(installed.id) version \(installed.version) (\(installed.downloadPolicy.name)) over HTTP, checked against the signed catalog's SHA-256, installed into \(containerPath)")
        try check(try manager.installPack(at: pack).change == .unchanged, "installing the published file again was not a no-op")
        step("installing the same file by hand changed nothing: the bytes that arrived are the packaged ones")

        // Read every member both ways and compare with the source files.
        let id = installed.id
        var zeroCopy = 0
        for (path, expected) in files.sorted(by: { $0.key < $1.key }) {
            let data = try manager.contents(at: path, searchingInAssetPackWithID: id)
            try check(data == expected, "contents(at: \(path)) differ from the source")
            let member = try manager.members(inAssetPackWithID: id).first { $0.path == path }
            if member?.isCompressed == false, let mapping = ProcessMaps.mapping(containing: data, file: "/packs/") {
                zeroCopy += 1
                Output.line("    \(path): \(data.count) bytes, zero-copy from \(mapping)")
            } else {
                Output.line("    \(path): \(data.count) bytes, inflated and CRC-checked")
            }
            for options in [AssetDescriptor.Options(), .standalone] {
                let d = try manager.descriptor(for: path, searchingInAssetPackWithID: id, options: options)
                defer { try? d.close() }
                try check(try d.data() == expected, "descriptor(for: \(path)) gave other bytes")
                try check(!options.contains(.standalone) || d.offset == 0, "standalone descriptor not at offset 0")
            }
        }
        step("read all \(files.count) files as bytes (\(zeroCopy) zero-copy) and as descriptors (archive range, sealed memfd, standalone): all match")

        let shared = try manager.contents(at: "Levels/level1.json")
        try check(shared == files["Levels/level1.json"], "path-only lookup gave other bytes")
        step("path-only lookup of Levels/level1.json found it in \(id)")

        // Update while holding bytes of the old version.
        let held = try manager.contents(at: "Media/intro.png", searchingInAssetPackWithID: id)
        let updated = try SampleContent.update(sample)
        try Packager.package(manifestAt: sample + "/manifest.json", output: work + "/Demo-2.zip")
        let republished = try AssetPackPublisher.publish(packsAt: [work + "/Demo-2.zip"], to: site, options: .init(signingKey: key))
        let stale = try CatalogOptions.wait { () async throws(AssetPackError) in try await manager.assetPack(withID: id) }
        try check(stale.status.contains(.updateAvailable), "the new version is not offered as an update: \(stale.status)")
        step("published version 2 (catalog sequence \(republished.catalog.sequence)); the pack now shows an update")
        try CatalogOptions.wait { () async throws(AssetPackError) in try await manager.ensureLocalAvailability(of: stale) }
        let second = try CatalogOptions.wait { () async throws(AssetPackError) in try await manager.assetPack(withID: id) }
        try check(second.version == "2" && second.status.contains(.upToDate), "the update did not replace version 1")
        try check(try manager.contents(at: "README.txt") == updated, "the update's README.txt is not visible")
        try check(held == files["Media/intro.png"], "bytes held across the update changed")
        let delta = manager.downloadStatus(ofAssetPackWithID: id)
        try check(delta?.isDelta == true && (delta?.bytesReused ?? 0) > 0,
                  "version 2 did not arrive as a delta update: \(delta.map { "\($0.reason ?? "full download")" } ?? "no status record")")
        step("downloaded version \(second.version) as a delta update (\(delta?.bytesFetched ?? 0) bytes fetched, "
             + "\(delta?.bytesReused ?? 0) copied from version 1) and switched to it atomically; bytes held from version 1 still read correctly")

        let report = try manager.verify(Verification.Options(deep: true))
        try check(!report.hasErrors, "verify found: \(report.findings.map(\.message))")
        step("verify --deep: \(TextLayout.count(report.packsChecked, "pack")), \(TextLayout.count(report.membersChecked, "member")), \(TextLayout.count(report.bytesChecked, "byte")) checked, no damage")

        try manager.remove(assetPackWithID: id)
        do {
            _ = try manager.contents(at: "README.txt", searchingInAssetPackWithID: id)
            throw Failure(message: "removed pack still readable")
        } catch let error as AssetPackError where error.code == .assetPackNotFound {
            try check(error.pack == id, "wrong pack named in the error")
        }
        try check(held == files["Media/intro.png"], "bytes held across the removal changed")
        step("removed \(id); lookups now fail with assetPackNotFound, held bytes still valid")
        Output.line("demo complete")
    }
}

/// `assetpack serve`'s server on 127.0.0.1 (a free port), on a thread of
/// its own, for as long as the demo needs it.
final class DemoServer: @unchecked Sendable {
    let url: String
    private let server: HTTPServer
    private let done = DispatchSemaphore(value: 0)

    init(directory: String) throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        do { server = try HTTPServer(directory: directory, configuration: configuration) } catch {
            throw DemoCommand.Failure(message: "cannot serve \(directory): \(error)")
        }
        url = server.url
        Thread { [self] in
            try? server.run()
            done.signal()
        }.start()
    }

    func stop() {
        server.stopHandle.stop()
        done.wait()
    }
}
