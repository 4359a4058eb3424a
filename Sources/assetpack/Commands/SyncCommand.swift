import AssetPacks

/// `assetpack sync`: installs the packs a catalog's policies ask for at an
/// installation event, in the foreground.
enum SyncCommand: Command {
    static let name = "sync"
    static let summary = "Install a catalog's essential and prefetch packs for an installation event."
    static let discussion = """
        Fetches the catalog and downloads, one after the other, every essential and prefetch pack whose \
        policy names the event and that is missing or out of date, as fetch does. On-demand packs are \
        not fetched (use fetch). Packs whose platforms exclude linux are skipped, and say so. Prints a \
        line per pack; exits 1 if any pack failed, naming each. With --background, the essential packs \
        are installed before sync returns and the prefetch packs are handed to the container's daemon \
        ('assetpack daemon'), which downloads them after sync has returned; without a daemon answering, \
        sync fails at once, before downloading anything.
        """

    static let event = Option.value(
        "event", placeholder: "event", help: "first-installation or subsequent-update.",
        completion: .choices(["first-installation", "subsequent-update"]))

    static let background = Option.flag(
        "background", help: "Hand the prefetch packs to the container's daemon and return once the essential ones are installed.")

    static let options = CatalogOptions.options + [event, CommonOptions.json] + CommonOptions.containerOptions + [background]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        // The parser refuses any other word (`choices`).
        guard let name = arguments.value(event) else { throw .usage("--event is required") }
        let type: AssetPack.InstallationEventType = name == "first-installation" ? .firstInstallation : .subsequentUpdate
        let manager = try CatalogOptions.manager(arguments)
        let json = arguments.flag(CommonOptions.json)
        let background = arguments.flag(Self.background)
        if background {
            do { _ = try AssetPackClient.connect(container: manager.container) } catch {
                throw .failure("sync --background needs the container's daemon ('assetpack daemon'): \(error.message)")
            }
        }
        let packs: [AssetPack]
        do {
            packs = try CatalogOptions.wait { () async throws(AssetPackError) in try await manager.allAssetPacks() }
        } catch {
            throw .from(error)
        }
        var failed: [String] = []
        for pack in packs where pack.downloadPolicy.installationEventTypes.contains(type) && !pack.status.contains(.obsolete) {
            let line: DownloadJSON
            if !pack.platforms.contains(.linux) {
                line = DownloadJSON(id: pack.id, result: "skipped", version: pack.version,
                                    message: "its platforms (\(pack.platforms.map(\.rawValue).joined(separator: ", "))) exclude linux")
            } else if pack.status.contains(.upToDate) {
                line = DownloadJSON(id: pack.id, result: "upToDate", version: pack.version, message: nil)
            } else if background, case .prefetch = pack.downloadPolicy {
                do {
                    try manager.beginBackgroundDownload(of: pack, discretionary: true)
                    line = DownloadJSON(id: pack.id, result: "background", version: pack.version, message: nil)
                } catch {
                    failed.append(pack.id)
                    line = DownloadJSON(id: pack.id, result: "failed", version: pack.version, message: error.message)
                }
            } else {
                let bar = ProgressBar.onTerminal()
                let progress = bar?.callback
                do {
                    let installed = try CatalogOptions.wait { () async throws(AssetPackError) in
                        try await manager.ensureLocalAvailability(of: pack, progress: progress)
                        return try await manager.assetPack(withID: pack.id)
                    }
                    line = DownloadJSON(id: pack.id, result: "installed", version: installed.version, message: nil)
                } catch {
                    failed.append(pack.id)
                    line = DownloadJSON(id: pack.id, result: "failed", version: pack.version, message: error.message)
                }
                bar?.finish()
            }
            if json {
                try Output.jsonLine(line)
            } else {
                Output.error("\(line.id): " + describe(line))
            }
        }
        guard failed.isEmpty else {
            throw .failure("sync: \(failed.count) of the packs failed: \(failed.joined(separator: ", "))")
        }
        return ExitCode.success
    }

    private static func describe(_ line: DownloadJSON) -> String {
        switch line.result {
        case "installed": return "version \(line.version ?? "?") installed"
        case "upToDate": return "version \(line.version ?? "?") already installed"
        case "skipped": return "skipped: " + (line.message ?? "")
        case "background": return "version \(line.version ?? "?") handed to the daemon, downloading in the background"
        default: return "failed: " + (line.message ?? "")
        }
    }
}
