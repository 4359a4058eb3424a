public import Foundation
import AssetArchive
import AssetDelivery
import AssetStore
import AssetSystem

extension AssetPackManager {
    /// A catalog packs are downloaded from: `catalog.json` at ``url``, with
    /// `catalog.json.sig` beside it.
    public struct CatalogSource: Sendable, Hashable {
        /// The catalog's URL (`https://cdn.example/packs/catalog.json`).
        public var url: String
        /// The key the catalog must be signed by; `nil` accepts an unsigned
        /// one (its integrity then rests on the transport alone).
        public var publicKey: AssetPackPublicKey?
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
    /// ``installPack(at:id:progress:)``. Callers in this and other processes
    /// asking for one pack at once share one download: the others wait for
    /// it, then find the pack installed.
    ///
    /// - Parameter progress: called in phase `.downloading` with the bytes
    ///   on disk and the total, from another thread.
    /// - Throws: `.assetPackNotFound` when the catalog does not list it,
    ///   `.downloadNotFound`, `.downloadRefused`, `.downloadSizeMismatch`,
    ///   `.downloadChecksumMismatch`, `.downloadRetriesExhausted`,
    ///   `.downloadFailed`, the catalog's errors, and the install's. In
    ///   every case the version installed before stays readable.
    public func ensureLocalAvailability(
        of pack: AssetPack, progress: (@Sendable (AssetPackProgress) -> Void)? = nil
    ) async throws(AssetPackError) {
        try await offload { () throws(AssetPackError) in try self.download(pack.id, progress: progress) }
    }

    // MARK: Underneath, synchronous

    private func download(_ id: String, progress: (@Sendable (AssetPackProgress) -> Void)?) throws(AssetPackError) {
        let (fetcher, catalog) = try fetchCatalog()
        guard let entry = catalog.entry(withID: id) else { throw AssetPackError(.notInstalled(id)) }
        let lock = try downloadLock(id)
        // Another caller may have installed it while this one waited.
        let record = try engine { () throws(StoreError) in try store.packRecord(id) }
        if record.map({ Self.isCurrent($0, entry) }) != true {
            let options = fetcher.options
            try delivery { () throws(DeliveryError) in
                try Downloader(store: store, options: options).download(DownloadRequest(entry, url: fetcher.url(of: entry))) { done, total in
                    progress?(AssetPackProgress(phase: .downloading, unit: .bytes, completed: done, total: total))
                }
            }
        }
        _ = consume lock
    }

    /// `<container>/downloads/<id>.lock`, locked (OFD): one download of a
    /// pack at a time across threads and processes.
    private func downloadLock(_ id: String) throws(AssetPackError) -> FileDescriptor {
        let directory = container.path + "/downloads"
        do {
            try FileSystem.createDirectories(directory)
            let fd = try FileDescriptor.open(directory + "/" + id + ".lock", [.readWrite, .create, .noFollow])
            try FileLock.lock(fd, wait: .forever, path: directory + "/" + id + ".lock")
            return fd
        } catch {
            throw AssetPackError(error)
        }
    }

    private func fetchCatalog() throws(AssetPackError) -> (CatalogFetcher, Catalog) {
        guard let source = catalogSource else {
            throw AssetPackError(.catalogUnavailable, message: "no catalog is configured (AssetPackManager.Options.catalog)")
        }
        var options = Downloader.Options()
        options.http.caFile = source.caFile
        options.maximumAttempts = max(1, source.maximumAttempts)
        options.initialBackoff = source.initialBackoff
        options.http.stallTimeout = source.stallTimeout
        let container = store.container
        return try delivery { () throws(DeliveryError) in
            let fetcher = try CatalogFetcher(catalogURL: source.url, publicKey: source.publicKey?.key, container: container, options: options)
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
