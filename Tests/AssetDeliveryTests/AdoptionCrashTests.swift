import Foundation
import Testing
import AssetArchive
import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// A downloader killed with SIGKILL at any point of the install that adopts
/// its file leaves either the download, whole and resumable (journal entry
/// and file: the next downloader installs it without a request), or the new
/// version installed (no journal entry) — and `assetpack verify --deep`
/// clean either way. The writer is `assetpack-testhelper download`, which
/// dies at the crash point `ASSETPACKS_CRASH_AT` names.
@Suite struct AdoptionCrashTests {
    struct KillPoint: Sendable, CustomStringConvertible {
        /// Whether version 1 is installed before the download of version 2.
        let update: Bool
        let point: String
        var description: String { (update ? "update" : "install") + " at " + point }
    }

    static let points = [
        "install.locked-container", "adopt.linked", "adopt.synced", "install.validated", "install.locked-pack",
        "install.published", "install.published-synced", "install.index.member#1", "install.index.written",
        "install.committed", "adopt.download-unlinked", "install.done",
    ]
    static let killPoints = points.map { KillPoint(update: false, point: $0) }
        + (points + ["install.retire-linked", "install.unlinked-old"]).map { KillPoint(update: true, point: $0) }

    /// The bytes of pack `P`'s members in `version`.
    static func members(_ version: UInt64) -> [String: [UInt8]] {
        ["big.bin": noise(300_000, seed: version), "notes.txt": Array(String(repeating: "v\(version) ", count: 500).utf8)]
    }

    static func write(_ version: UInt64, to path: String) throws {
        try ArchiveWriter.write(members(version).map { ArchiveWriter.Member(path: $0.key, source: .bytes($0.value), compression: .automatic) },
                                comment: PackDescription(id: "P", downloadPolicy: .onDemand, platforms: [.linux], version: version).archiveComment,
                                to: path)
    }

    @Test(.timeLimit(.minutes(4)), arguments: killPoints)
    func aDownloaderKilledInItsInstallLeavesTheDownloadOrThePack(_ at: KillPoint) throws {
        let dir = TemporaryDirectory("adopt-crash-\(at.point.replacingOccurrences(of: "#", with: "-"))")
        let site = dir.file("site"), container = dir.file("container")
        try Self.write(2, to: dir.file("P.zip"))
        _ = try Publisher.publish([dir.file("P.zip")], to: site, options: .init(now: CatalogTime(seconds: 1_796_117_400)))
        let entry = try #require(try Catalog.parse(try dir.read("site/catalog.json"), path: site + "/catalog.json").entry(withID: "P"))
        let before: PackRecord?
        do {
            let store = try AssetStore(container: GroupContainer(path: container))
            if at.update {
                try Self.write(1, to: dir.file("P1.zip"))
                try store.install(packAt: dir.file("P1.zip"))
            }
            before = try store.packRecord("P")
        }
        let nginx = try NginxHost(root: site)
        defer { nginx.stop() }
        let request = DownloadRequest(entry, url: nginx.baseURL + "/" + entry.url)

        let helper = Process()
        helper.executableURL = URL(fileURLWithPath: Program.built("assetpack-testhelper"))
        helper.arguments = ["download", "--container", container, "--id", "P", "--url", request.url,
                            "--version", String(request.version), "--size", String(request.size), "--sha256", request.sha256]
        helper.environment = ProcessInfo.processInfo.environment.merging(["ASSETPACKS_CRASH_AT": at.point]) { $1 }
        helper.standardOutput = FileHandle.nullDevice
        helper.standardError = FileHandle.nullDevice
        try helper.run()
        let deadline = Date().addingTimeInterval(60)
        while helper.isRunning && Date() < deadline { usleep(5_000) }
        if helper.isRunning { kill(helper.processIdentifier, SIGKILL) }
        helper.waitUntilExit()
        #expect(helper.terminationReason == .uncaughtSignal && helper.terminationStatus == SIGKILL,
                "\(at): the downloader was not killed there (status \(helper.terminationStatus))")

        let verify = try Program.run(Program.built("assetpack"), ["verify", "--deep", "--container", container])
        #expect(verify.status == 0, "\(at): verify --deep: \(String(decoding: verify.stdout, as: UTF8.self))\(verify.stderr)")
        // Opened after the kill, as the next process would (which clears the
        // dead writer's reader slot).
        let store = try AssetStore(container: GroupContainer(path: container))
        let journal = try store.journalEntries()
        let installed = try store.packRecord("P")
        if installed?.sha256 == DownloaderTests.hexBytes(entry.sha256) {
            #expect(journal.isEmpty, "\(at): the pack is in, and its download still journaled")
        } else {
            #expect(installed == before, "\(at): neither the old version nor the new one")
            let name = try #require(journal.first?.stagingName, "\(at): neither the pack nor a resumable download")
            let size = try FileDescriptor.status(of: container + "/staging/" + name)?.size
            #expect(size == Int64(entry.size), "\(at): the download's file is not whole")
        }

        // The download ends exactly with the commit that switches the pack in.
        let resumable = !journal.isEmpty
        let committed = ["install.committed", "adopt.download-unlinked", "install.unlinked-old", "install.done"].contains(at.point)
        #expect(resumable == !committed, "\(at): resumable \(resumable)")

        // The next downloader finishes: a resumable download without a request.
        let outcome = try Downloader(store: store).download(request)
        #expect(outcome.change == (resumable ? (at.update ? .replaced : .installed) : .unchanged), "\(at)")
        let gets = nginx.accessLog(count: resumable ? 1 : 2) { $0.uri.hasSuffix(".zip") }
        #expect(gets.count == (resumable ? 1 : 2), "\(at): \(gets)")
        for (path, bytes) in Self.members(2) {
            #expect(try store.contents(at: path, inPack: "P") == Data(bytes), "\(at): \(path)")
        }
        #expect(try store.journalEntries().isEmpty, "\(at)")
        try store.install(packAt: dir.file("P.zip"))   // a writer, which reclaims what the kill left
        let findings = try store.verify(options: .init(deep: true)).findings
        #expect(findings.isEmpty, "\(at): \(findings)")
        #expect(FileSystem.names(in: container + "/staging").isEmpty, "\(at)")
    }
}
