import AssetPacks

/// `assetpack sync`: installs the packs a catalog's policies ask for at an
/// installation event, in the foreground.
enum SyncCommand: Command {
    static let name = "sync"
    static let summary = "Install a catalog's essential and prefetch packs for an installation event."
    static let discussion = """
        Fetches the catalog and downloads, one after the other, every essential and then every prefetch \
        pack whose policy names the event and that is missing or out of date, as fetch does. Every other \
        pack of the catalog is skipped with a line that says why: on demand (use fetch), a policy for \
        another event, a platforms list without linux (an empty list means every platform), declined, \
        no longer listed. \
        Prefetch packs are discretionary downloads: each waits while the machine is on battery or busy \
        (its 1-minute load average above --max-load), re-checking every --recheck-interval seconds, and \
        for one of the container's --max-concurrent download slots (shared by all its processes), and \
        receives at most --max-rate bytes a second; a line says when and why a pack is deferred. Essential \
        packs never wait. ASSETPACKS_SYSTEM_ROOT names another root for sys/class/power_supply and \
        proc/loadavg. Prints a line per pack; exits 1 if any pack failed, naming each. With --background, \
        the essential packs are installed before sync returns and the prefetch packs are handed to the \
        container's daemon ('assetpack daemon'), which downloads them (as discretionary downloads) after \
        sync has returned; without a daemon answering, sync fails at once, before downloading anything.
        """

    static let event = Option.value(
        "event", placeholder: "event", help: "first-installation or subsequent-update.",
        completion: .choices(["first-installation", "subsequent-update"]))
    static let maxRate = Option.value(
        "max-rate", placeholder: "bytes",
        help: "The most bytes a second each prefetch download receives, with K, M, G or T (default: no cap).")
    static let maxConcurrent = Option.value(
        "max-concurrent", placeholder: "n",
        help: "How many prefetch downloads run at once in the container, across its processes (1 to 64; default 1).")
    static let maxLoad = Option.value(
        "max-load", placeholder: "load",
        help: "Prefetch downloads wait while the 1-minute load average is above this (default: the number of processors).")
    static let recheckInterval = Option.value(
        "recheck-interval", placeholder: "seconds",
        help: "Seconds between looks at the battery and the load while a prefetch download waits (default: 30).")
    static let ignoreBattery = Option.flag("ignore-battery", help: "Do not defer prefetch downloads on battery.")

    static let background = Option.flag(
        "background", help: "Hand the prefetch packs to the container's daemon and return once the essential ones are installed.")

    static let discretionaryOptions = [maxRate, maxConcurrent, maxLoad, recheckInterval, ignoreBattery]
    static let options = CatalogOptions.options + [event, CommonOptions.json] + CommonOptions.containerOptions + discretionaryOptions
        + [background]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        // The parser refuses any other word (`choices`).
        guard let name = arguments.value(event) else { throw .usage("--event is required") }
        let type: AssetPack.InstallationEventType = name == "first-installation" ? .firstInstallation : .subsequentUpdate
        var options = AssetPackManager.Options()
        options.discretionary = try discretionary(arguments)
        let manager = try CatalogOptions.manager(arguments, options: options)
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
        // Essential packs first: they are what the event waits for.
        let ordered = packs.filter { $0.downloadPolicy.name == "essential" } + packs.filter { $0.downloadPolicy.name != "essential" }
        var failed: [String] = []
        for pack in ordered {
            let line: DownloadJSON
            if background, case .prefetch(let events) = pack.downloadPolicy, events.contains(type), pack.supports(.linux),
               !pack.status.contains(.upToDate), !pack.status.contains(.obsolete) {
                do {
                    try manager.beginBackgroundDownload(of: pack, discretionary: true)
                    line = DownloadJSON(id: pack.id, result: "background", version: pack.version, message: nil)
                } catch {
                    failed.append(pack.id)
                    line = DownloadJSON(id: pack.id, result: "failed", version: pack.version, message: error.message)
                }
                report(line, json: json)
                continue
            }
            let bar = ProgressBar.onTerminal()
            let progress = bar?.callback
            let deferred: @Sendable (String) -> Void = { reason in
                report(DownloadJSON(id: pack.id, result: "deferred", version: pack.version, message: reason), json: json)
            }
            do {
                let outcome = try CatalogOptions.wait { () async throws(AssetPackError) in
                    try await manager.ensureAvailability(of: pack, forInstallationEvent: type, progress: progress, onDeferral: deferred)
                }
                switch outcome {
                case .notForEvent:
                    line = DownloadJSON(id: pack.id, result: "skipped", version: pack.version, message: notForEvent(pack, type))
                case .unsupportedPlatform:
                    line = DownloadJSON(id: pack.id, result: "skipped", version: pack.version,
                                        message: "its platforms (\(pack.platforms.map(\.rawValue).joined(separator: ", "))) exclude linux")
                case .declined:
                    line = DownloadJSON(id: pack.id, result: "skipped", version: pack.version, message: "the downloader extension declined")
                case .upToDate:
                    line = DownloadJSON(id: pack.id, result: "upToDate", version: pack.version, message: nil)
                case .installed:
                    let installed = try CatalogOptions.wait { () async throws(AssetPackError) in try await manager.assetPack(withID: pack.id) }
                    line = DownloadJSON(id: pack.id, result: "installed", version: installed.version, message: nil)
                }
            } catch {
                failed.append(pack.id)
                line = DownloadJSON(id: pack.id, result: "failed", version: pack.version, message: error.message)
            }
            bar?.finish()
            report(line, json: json)
        }
        guard failed.isEmpty else {
            throw .failure("sync: \(failed.count) of the packs failed: \(failed.joined(separator: ", "))")
        }
        return ExitCode.success
    }

    /// The discretionary caps the options give, over the defaults.
    static func discretionary(_ arguments: Arguments) throws(CLIError) -> AssetPackManager.Discretionary {
        var d = AssetPackManager.Discretionary()
        if let rate = try arguments.byteCount(maxRate, maximum: UInt64(Int64.max)) {
            guard rate > 0 else { throw .usage("'\(maxRate.longSpelling)' must be more than 0") }
            d.maximumBytesPerSecond = rate
        }
        if let n = try arguments.wholeNumber(maxConcurrent, in: 1...AssetPackManager.Discretionary.slotLimit) {
            d.maximumConcurrentDownloads = n
        }
        if let load = try arguments.positiveNumber(maxLoad) { d.maximumLoadAverage = load }
        if let seconds = try arguments.positiveNumber(recheckInterval) {
            guard seconds <= 3600 else { throw .usage("'\(recheckInterval.longSpelling)' may be at most 3600 seconds") }
            d.recheckInterval = seconds
        }
        if arguments.flag(ignoreBattery) { d.defersOnBattery = false }
        return d
    }

    /// Why `pack`'s policy does not download it at event `type`.
    private static func notForEvent(_ pack: AssetPack, _ type: AssetPack.InstallationEventType) -> String {
        if pack.status.contains(.obsolete) { return "the catalog does not list it" }
        let events = pack.downloadPolicy.installationEventTypes.map(\.rawValue).joined(separator: ", ")
        return events.isEmpty ? "on demand (assetpack fetch downloads it)"
            : "its \(pack.downloadPolicy.name) policy is for \(events), not \(type.rawValue)"
    }

    private static func report(_ line: DownloadJSON, json: Bool) {
        if json {
            try? Output.jsonLine(line)
        } else {
            Output.error("\(line.id): " + describe(line))
        }
    }

    private static func describe(_ line: DownloadJSON) -> String {
        switch line.result {
        case "installed": return "version \(line.version ?? "?") installed"
        case "upToDate": return "version \(line.version ?? "?") already installed"
        case "skipped": return "skipped: " + (line.message ?? "")
        case "deferred": return "deferred: " + (line.message ?? "")
        case "background": return "version \(line.version ?? "?") handed to the daemon, downloading in the background"
        default: return "failed: " + (line.message ?? "")
        }
    }
}
