import AssetPacks

/// `assetpack fetch`: downloads one pack from a catalog and installs it.
enum FetchCommand: Command {
    static let name = "fetch"
    static let summary = "Download a pack from a catalog and install it (when missing or out of date)."
    static let discussion = """
        Fetches the catalog (revalidated with its ETag; the container's cached copy answers offline), \
        then downloads the pack into the container's staging/ directory, resuming a download that was \
        cut short, checks its size and SHA-256 against the catalog and installs it. The version \
        installed before stays readable whatever happens. Several processes fetching one pack share \
        one download. When the container's daemon runs ('assetpack daemon'), the download is handed to \
        it and fetch waits for its end; interrupting fetch leaves the download running in the daemon.
        """

    static let pack = Positional("pack", help: "The ID of the pack to fetch.")

    static let positionals = [pack]
    static let options = CatalogOptions.options + [CommonOptions.json] + CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let id = arguments.positional(pack)
        let manager = try CatalogOptions.manager(arguments)
        let bar = ProgressBar.onTerminal()
        let progress = bar?.callback
        let pack: AssetPack
        let wasCurrent: Bool
        do {
            (wasCurrent, pack) = try CatalogOptions.wait { () async throws(AssetPackError) in
                let before = try await manager.assetPack(withID: id)
                try await manager.ensureLocalAvailability(of: before, progress: progress)
                return (before.status.contains(.upToDate), try await manager.assetPack(withID: id))
            }
        } catch {
            bar?.finish()
            throw .from(error)
        }
        bar?.finish()
        if arguments.flag(CommonOptions.json) {
            try Output.jsonLine(DownloadJSON(id: id, result: wasCurrent ? "upToDate" : "installed", version: pack.version, message: nil))
        } else {
            Output.error("\(id): version \(pack.version) " + (wasCurrent ? "already installed" : "installed"))
        }
        return ExitCode.success
    }
}
