import Foundation
import AssetArchive
import AssetDelivery
import AssetStore
import AssetSystem

extension AssetPackManager {
    /// A catalog packs are downloaded from: `catalog.json` at ``url``, with
    /// `catalog.json.sig` beside it, of channel ``channel``.
    public struct CatalogSource: Sendable, Hashable {
        /// The catalog's URL (`https://cdn.example/packs/catalog.json`).
        public var url: String
        /// The key the catalog must be signed by; `nil` accepts an unsigned
        /// one (its integrity then rests on the transport alone).
        public var publicKey: AssetPackPublicKey?
        /// The channel the catalog must name (`publish --channel`): a
        /// catalog of another channel — another catalog the same key signs,
        /// served at this URL — is refused (`.catalogChannelMismatch`), as
        /// is one that names none. Default `default`, the channel `publish`
        /// names unless told.
        public var channel = AssetPackCatalog.defaultChannel
        /// A PEM file of certificate authorities trusted besides the system's.
        public var caFile: String?
        /// Requests per file, the first included, before a download gives up
        /// on transient failures (no connection, a broken or stalled one, 408, 429, 5xx).
        public var maximumAttempts = 6
        /// Seconds before the first retry, doubled each time up to 30 s, with jitter.
        public var initialBackoff = 0.5
        /// Seconds without a byte after which a response counts as stalled:
        /// a transient failure, retried from where the file stands.
        public var stallTimeout = 30.0
        /// Range requests a delta update (a pack whose catalog entry has a
        /// piece map, with members to copy from installed packs) runs at
        /// once; 1 to 64.
        public var maximumRangeRequests = 4
        /// The minimum speed and the total deadline of each download and
        /// catalog fetch (``Deadlines``).
        public var deadlines = Deadlines()

        public init(url: String, publicKey: AssetPackPublicKey? = nil, caFile: String? = nil) {
            self.url = url
            self.publicKey = publicKey
            self.caFile = caFile
        }
    }

    /// The pack with this ID, as the catalog lists it and the container has
    /// it, with its ``AssetPack/status``. A pack the catalog lists that is
    /// not installed has the catalog's version, size and SHA-256, no files
    /// counted, and `installDate` `.distantPast`.
    ///
    /// The catalog is fetched (revalidated with its `ETag`) or, offline,
    /// read from the container's cache. Without a ``CatalogSource`` this is
    /// the installed pack alone.
    ///
    /// - Throws: `.assetPackNotFound` when neither has it; the catalog's
    ///   errors (`.catalogUnavailable`, `.catalogSignatureInvalid`, …).
    public func assetPack(withID id: String) async throws(AssetPackError) -> AssetPack {
        try await offload { () throws(AssetPackError) in
            guard let pack = try self.merged().first(where: { $0.id == id }) else { throw AssetPackError(.notInstalled(id)) }
            return pack
        }
    }

    /// Every pack the catalog lists or the container has, sorted by ID,
    /// each with its ``AssetPack/status`` (see ``assetPack(withID:)``).
    public func allAssetPacks() async throws(AssetPackError) -> [AssetPack] {
        try await offload { () throws(AssetPackError) in try self.merged() }
    }

    /// Downloads `pack` when it is missing or out of date, and returns when
    /// the catalog's version is installed and readable.
    ///
    /// The download resumes a partial one the journal records, is checked
    /// (size, SHA-256) as it arrives and installed through the same path as
    /// ``installPack(at:id:priority:progress:)``. Callers in this and other processes
    /// asking for one pack at once share one download: the others wait for
    /// it, then find the pack installed.
    ///
    /// When the container's daemon (`assetpack daemon`) answers on
    /// `daemon.sock`, the download is handed to it and this waits for its
    /// end: the download goes on if this process exits, and another caller
    /// attaches to it. Without a daemon (or with one that predates downloads
    /// or refuses this process), or when the daemon dies before it replies,
    /// this process downloads itself — resuming what the daemon left.
    /// ``Options/downloadsInProcess`` turns the hand-off off.
    ///
    /// - Parameter progress: called in phase `.downloading` with the bytes
    ///   on disk and the total, from another thread.
    /// - Throws: `.assetPackNotFound` when the catalog does not list it,
    ///   `.downloadNotFound`, `.downloadRefused`, `.downloadSizeMismatch`,
    ///   `.downloadChecksumMismatch`, `.downloadRetriesExhausted`,
    ///   `.downloadTimedOut` (``CatalogSource/deadlines``), `.downloadFailed`,
    ///   `.invalidCAFile`, the catalog's errors, and the install's. In
    ///   every case the version installed before stays readable.
    public func ensureLocalAvailability(
        of pack: AssetPack, progress: (@Sendable (AssetPackProgress) -> Void)? = nil
    ) async throws(AssetPackError) {
        try await offload { () throws(AssetPackError) in try self.download(pack.id, progress: progress) }
    }

    /// Hands the download of `pack` to the container's daemon (`assetpack
    /// daemon`) and returns as soon as the daemon has queued it; the
    /// download goes on in the daemon, also after this process exits. With
    /// `discretionary`, it waits behind the daemon's other downloads.
    ///
    /// - Throws: `.catalogUnavailable` when this manager has no catalog;
    ///   `.daemonUnavailable` (``AssetPackError/path`` is the socket) when no
    ///   daemon answers; the daemon's refusals (`.peerNotAllowed`,
    ///   `.malformedRequest` from a daemon that predates downloads, …).
    public func beginBackgroundDownload(of pack: AssetPack, discretionary: Bool = true) throws(AssetPackError) {
        _ = try handOff(pack.id, wait: false, discretionary: discretionary)
    }

    // MARK: Underneath, synchronous

    /// The download behind ``ensureLocalAvailability(of:progress:)`` and
    /// every policy's, and the one path every download takes: handed to the
    /// daemon when one answers (and ``Options/downloadsInProcess`` is off) —
    /// `progress` and `deferred` then follow the daemon's status record —
    /// else run here (``downloadInProcess(_:discretionary:progress:deferred:)``).
    func download(_ id: String, discretionary: Bool = false, progress: (@Sendable (AssetPackProgress) -> Void)?,
                  deferred: ((String) -> Void)? = nil) throws(AssetPackError) {
        try AssetPack.validate(id: id)
        if !downloadsInProcess, catalogSource != nil {
            let observer = (progress != nil || deferred != nil) ? StatusFollower(board: downloadBoard, pack: id, progress: progress, deferred: deferred) : nil
            defer { observer?.stop() }
            do {
                _ = try handOff(id, wait: true, discretionary: discretionary)
                return
            } catch where Self.meansNoAgent(error) {
                // No daemon, or none that takes this download: do it here.
            }
        }
        try downloadInProcess(id, discretionary: discretionary, progress: progress, deferred: deferred)
    }

    /// Sends the download request for `id` to the container's daemon.
    private func handOff(_ id: String, wait: Bool, discretionary: Bool) throws(AssetPackError) -> DaemonReply.DownloadOutcome {
        guard let source = catalogSource else {
            throw AssetPackError(.catalogUnavailable, pack: id, message: "no catalog is configured (AssetPackManager.Options.catalog)")
        }
        // The daemon has another working directory.
        let caFile = source.caFile.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
        var request = DaemonDownloadRequest(pack: id, catalogURL: source.url, publicKey: source.publicKey?.description,
                                            caFile: caFile, wait: wait, discretionary: discretionary)
        request.channel = source.channel
        return try AssetPackClient(socketPath: container.daemonSocketPath).download(request)
    }

    /// Whether `error`, from a hand-off, says that no daemon takes the
    /// download (rather than that the download failed): none answers or the
    /// connection broke before the reply, or it refuses this process, the
    /// request's kind (a daemon that predates downloads) or its source (a
    /// peer that is not the container's owner asking for a source the owner
    /// did not configure: this process then downloads as itself).
    static func meansNoAgent(_ error: AssetPackError) -> Bool {
        switch error.code {
        case .daemonUnavailable, .peerNotAllowed, .malformedRequest, .requestTooLarge, .unsupportedVersion, .daemonBusy, .daemonFailed,
             .requestNotPermitted:
            return true
        default:
            return false
        }
    }

    /// Downloads pack `id` in this process unless the catalog's version is
    /// installed. A `discretionary` one first waits for its turn
    /// (``Discretionary``), calling `deferred` with the reason when it starts
    /// waiting and when the reason changes (and keeping a `deferred` status
    /// record meanwhile, which a cancel request ends), holds a slot while it
    /// runs and is rate-capped.
    private func downloadInProcess(_ id: String, discretionary: Bool, progress: (@Sendable (AssetPackProgress) -> Void)?,
                                   deferred: ((String) -> Void)?) throws(AssetPackError) {
        var (fetcher, catalog) = try fetchCatalog()
        guard var entry = catalog.entry(withID: id) else { throw AssetPackError(.notInstalled(id)) }
        let waitingSince = DownloadBoard.now
        let board = downloadBoard
        var reporter: DownloadReporter?
        // The turn is waited for before the pack's lock, so that a program's
        // own request for the pack never waits behind a deferred download.
        var turn: DiscretionaryTurn?
        if discretionary, try engine({ () throws(StoreError) in try store.packRecord(id) }).map({ Self.isCurrent($0, entry) }) != true {
            var waited = false
            let request = fetcher.request(for: entry)
            turn = try discretionaryTurn(deferred: { reason in
                waited = true
                // A record of its own, unless another process runs the pack's download.
                if let reporter {
                    reporter.set(.deferred, reason: reason)
                } else if board.status(of: id).map(board.isRunning) != true {
                    reporter = DownloadReporter(board: board, request: request, state: .deferred, reason: reason)
                }
                deferred?(reason)
            }, sleep: { seconds in
                guard let reporter else { Monotonic.sleep(seconds); return true }
                return reporter.sleep(seconds) != .cancel
            })
            guard turn != nil else {
                reporter?.set(.cancelled, error: "cancelled while deferred", code: Int(AssetPackError.Code.downloadCancelled.rawValue))
                throw AssetPackError(.downloadCancelled, pack: id, path: request.url, message: "download of '\(id)' from \(request.url) failed: cancelled")
            }
            if waited {
                // The catalog may have moved on during a long wait.
                (fetcher, catalog) = try fetchCatalog()
                guard let current = catalog.entry(withID: id) else { throw AssetPackError(.notInstalled(id)) }
                entry = current
            }
        }
        let lock = try downloadLock(id)
        let speed = discretionary ? policies.discretionary.maximumBytesPerSecond.map { Int64($0) } : nil
        let outcome = Result { () throws(AssetPackError) in
            try downloadLocked(entry, fetcher: fetcher, waitingSince: waitingSince, reporter: reporter, maximumSpeed: speed, progress: progress)
        }
        _ = consume lock
        _ = consume turn
        try outcome.get()
    }

    /// The download of `entry`, with its lock held, reported by `reporter`
    /// (a deferred download's) or a new one.
    private func downloadLocked(
        _ entry: Catalog.Entry, fetcher: CatalogFetcher, waitingSince: UInt64, reporter deferredReporter: DownloadReporter?,
        maximumSpeed: Int64?, progress: (@Sendable (AssetPackProgress) -> Void)?
    ) throws(AssetPackError) {
        let id = entry.id
        // Another caller may have installed it while this one waited…
        let record = try engine { () throws(StoreError) in try store.packRecord(id) }
        if record.map({ Self.isCurrent($0, entry) }) == true {
            deferredReporter?.set(.finished)
            return
        }
        // …or cancelled the download this one waited for: then this call is
        // cancelled too — when the record is one a cancel may be trusted from.
        let board = downloadBoard
        if deferredReporter == nil, let (last, writer) = board.statusRecord(of: id), last.state == .cancelled,
           last.updated >= waitingSince, mayControl(writtenBy: writer) {
            throw AssetPackError(.downloadCancelled, pack: id, path: last.url, message: "download of '\(id)' from \(last.url) failed: cancelled")
        }
        let request = fetcher.request(for: entry)
        let reporter = deferredReporter ?? DownloadReporter(board: board, request: request)
        reporter.log = log
        reporter.retarget(request)
        if let progress {
            reporter.onChange = { s in progress(AssetPackProgress(phase: .downloading, unit: .bytes, completed: s.bytes, total: s.total)) }
        }
        var options = fetcher.options
        if let maximumSpeed { options.http.maximumReceiveSpeed = maximumSpeed }
        do {
            _ = try delivery { () throws(DeliveryError) in
                try Downloader(store: store, options: options).download(request, monitor: reporter)
            }
            reporter.set(.finished)
        } catch {
            reporter.set(error.code == .downloadCancelled ? .cancelled : .failed, error: error.message, code: Int(error.code.rawValue))
            throw error
        }
    }

    /// `<container>/downloads/<id>.lock`, locked (OFD): one download of a
    /// pack at a time across threads and processes, waited for as the
    /// store's ``AssetStore/lockWait`` says (a download behind another of
    /// the same pack waits for as long as that one is at work). With `wait`
    /// false, a lock held elsewhere throws `.lockTimeout` at once. The file
    /// has the container's lock file mode (0600; 0660 shared with a group).
    ///
    /// - Throws: `.invalidPackID`; `.notAFile` for a lock that is not a
    ///   regular file (a FIFO planted there); `.symlinkInContainer`;
    ///   `.lockTimeout` naming the download lock and its holder.
    func downloadLock(_ id: String, wait: Bool = true) throws(AssetPackError) -> FileDescriptor {
        do { return try downloadBoard.lock(id, wait: wait ? store.lockWait : .none) } catch { throw AssetPackError(error) }
    }

    func fetchCatalog() throws(AssetPackError) -> (CatalogFetcher, Catalog) {
        guard let source = catalogSource else {
            throw AssetPackError(.catalogUnavailable, message: "no catalog is configured (AssetPackManager.Options.catalog)")
        }
        var options = Downloader.Options()
        options.http.caFile = source.caFile
        options.maximumAttempts = max(1, source.maximumAttempts)
        options.initialBackoff = source.initialBackoff
        options.http.stallTimeout = source.stallTimeout
        options.maximumRangeRequests = min(64, max(1, source.maximumRangeRequests))
        options = source.deadlines.applied(to: options)
        options.catalogCache = catalogCache.engine
        let store = self.store
        return try delivery { () throws(DeliveryError) in
            let fetcher = try CatalogFetcher(catalogURL: source.url, publicKey: source.publicKey?.key, channel: source.channel,
                                             store: store, options: options)
            return (fetcher, try fetcher.fetch(now: CatalogTime(Date())).catalog)
        }
    }

    /// The catalog's packs and the installed ones, with their status.
    private func merged() throws(AssetPackError) -> [AssetPack] {
        let records = try engine { () throws(StoreError) in try store.allPackRecords() }
        guard catalogSource != nil else { return records.map(AssetPack.init) }
        let catalog = try fetchCatalog().1
        let journal = Set(try engine { () throws(StoreError) in try store.journalEntries() }.filter { $0.stagingName != nil }.map(\.pack))
        var packs: [String: AssetPack] = [:]
        for record in records {
            var pack = AssetPack(record)
            if let entry = catalog.entry(withID: record.id) {
                pack.status.insert(Self.isCurrent(record, entry) ? .upToDate : [.outOfDate, .updateAvailable])
            } else {
                pack.status.insert(.obsolete)
            }
            packs[record.id] = pack
        }
        for entry in catalog.packs where packs[entry.id] == nil {
            packs[entry.id] = AssetPack(entry)
        }
        for id in journal where packs[id] != nil { packs[id]!.status.insert(.downloading) }
        return packs.values.sorted { $0.id < $1.id }
    }

    /// Whether `record` is the catalog's file.
    static func isCurrent(_ record: PackRecord, _ entry: Catalog.Entry) -> Bool {
        SHA256.hex(record.sha256) == entry.sha256 && record.archiveSize == entry.size
    }
}

extension AssetPack {
    /// A pack the catalog lists and the container does not have.
    init(_ entry: Catalog.Entry) {
        id = entry.id
        version = String(entry.version)
        downloadPolicy = DownloadPolicy(entry.downloadPolicy)
        platforms = entry.platforms.map(Platform.init)
        archiveSize = entry.size
        memberCount = 0
        totalSize = 0
        installDate = .distantPast
        sha256 = entry.sha256
        status = .downloadAvailable
    }
}

/// Runs blocking work (a download, a fetch) off the caller's task, on a
/// thread of its own.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws(AssetPackError) -> T) async throws(AssetPackError) -> T {
    let result: Result<T, AssetPackError> = await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(returning: Result { () throws(AssetPackError) in try body() })
        }
    }
    return try result.get()
}
