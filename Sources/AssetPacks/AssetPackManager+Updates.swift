import Foundation
import AssetDelivery
import AssetStore

extension AssetPackManager {
    /// What an installation event's policy did with one pack
    /// (``ensureAvailability(of:forInstallationEvent:progress:onDeferral:)``).
    public enum AutomaticDownloadOutcome: String, Sendable, Hashable, CaseIterable {
        /// It was downloaded and installed (or another process installed it meanwhile).
        case installed
        /// The catalog's version was installed already: nothing was downloaded.
        case upToDate
        /// Its policy does not download it at this event: on-demand, an
        /// essential or prefetch policy naming other events, or a pack the
        /// catalog no longer lists.
        case notForEvent
        /// Its platforms exclude `linux` (a list without it; an empty list
        /// is every platform).
        case unsupportedPlatform
        /// The downloader extension declined it.
        case declined
    }

    /// Does what `pack`'s download policy asks at installation event
    /// `event`, as Background Assets does at an app's install or update:
    /// an essential pack for the event is downloaded at once; a prefetch
    /// pack for it is downloaded as a discretionary download (it waits
    /// while the machine is on battery or busy, for a free slot, and is
    /// rate-capped: ``Options/discretionary``). The downloader extension
    /// (``Options/downloaderExtension``) is asked first. `assetpack sync`
    /// calls this for every pack of the catalog, essential packs first.
    ///
    /// - Parameters:
    ///   - pack: the pack as ``allAssetPacks()`` or ``assetPack(withID:)``
    ///     returned it, with its status.
    ///   - progress: as for ``ensureLocalAvailability(of:progress:)``.
    ///   - onDeferral: called with the reason (`the machine is on
    ///     battery`, …) when a discretionary download starts to wait, and
    ///     each time the reason changes, from another thread.
    /// - Returns: what was done.
    /// - Throws: as ``ensureLocalAvailability(of:progress:)``.
    public func ensureAvailability(
        of pack: AssetPack, forInstallationEvent event: AssetPack.InstallationEventType,
        progress: (@Sendable (AssetPackProgress) -> Void)? = nil, onDeferral: (@Sendable (String) -> Void)? = nil
    ) async throws(AssetPackError) -> AutomaticDownloadOutcome {
        let discretionary: Bool
        switch pack.downloadPolicy {
        case .essential(let events) where events.contains(event): discretionary = false
        case .prefetch(let events) where events.contains(event): discretionary = true
        default: return .notForEvent
        }
        if pack.status.contains(.obsolete) { return .notForEvent }
        guard pack.supports(.linux) else { return .unsupportedPlatform }
        if pack.status.contains(.upToDate) { return .upToDate }
        if let downloaderExtension = policies.downloaderExtension, !downloaderExtension.shouldDownload(pack) { return .declined }
        if discretionary {
            try await offload { () throws(AssetPackError) in
                try self.download(pack.id, discretionary: true, progress: progress, deferred: onDeferral.map { report in { report($0) } })
            }
        } else {
            // An essential pack goes the way of the program's own requests.
            try await ensureLocalAvailability(of: pack, progress: progress)
        }
        return .installed
    }

    /// Fetches the catalog and brings the installed packs in line with it,
    /// as Apple's `checkForUpdates()`:
    ///
    /// - every installed pack the catalog lists in another version (and for
    ///   `linux`, or for every platform) is updated — in the background of
    ///   this process, on a thread of its own, as a discretionary download
    ///   (``Options/discretionary``), after the downloader extension
    ///   agreed. Follow it with
    ///   ``assetPack(withID:)``: `.downloading` while the journal has it,
    ///   `.upToDate` once installed. A failed update leaves the installed
    ///   version as it was; the next call starts it again.
    /// - every installed pack that came from this catalog (downloaded from
    ///   its directory: the pack records the catalog's version and the URL)
    ///   and that the catalog no longer lists is removed as obsolete. A pack
    ///   installed by hand (`assetpack install`, ``installPack(at:id:priority:progress:)``),
    ///   or downloaded from another catalog or an absolute URL elsewhere, is
    ///   never removed: the catalog could not bring it back.
    ///
    /// - Returns: the IDs of the packs whose update it started (or that this
    ///   manager is updating already), and of those it removed.
    /// - Throws: the catalog's errors (`.catalogUnavailable`,
    ///   `.catalogSignatureInvalid`, …), `.lockTimeout` and the store's
    ///   errors when an obsolete pack cannot be removed.
    public func checkForUpdates() async throws(AssetPackError) -> (updating: Set<String>, removed: Set<String>) {
        try await offload { () throws(AssetPackError) in try self.updatePacks() }
    }

    private func updatePacks() throws(AssetPackError) -> (updating: Set<String>, removed: Set<String>) {
        let (fetcher, catalog) = try fetchCatalog()
        let records = try engine { () throws(StoreError) in try store.allPackRecords() }
        let directory = CatalogFetcher.resolve("", against: fetcher.catalogURL)
        var updating = Set<String>()
        var removed = Set<String>()
        for record in records {
            if let entry = catalog.entry(withID: record.id) {
                guard !Self.isCurrent(record, entry), Platform.linux.isIncluded(in: entry.platforms) else { continue }
                var pack = AssetPack(entry)
                pack.status = [.downloaded, .outOfDate, .updateAvailable]
                if let downloaderExtension = policies.downloaderExtension, !downloaderExtension.shouldDownload(pack) { continue }
                startUpdate(record.id)
                updating.insert(record.id)
            } else if record.catalogVersion != nil, record.source.hasPrefix(directory) {
                do {
                    try engine { () throws(StoreError) in try store.remove(pack: record.id) }
                } catch where error.code == .assetPackNotFound {
                    continue  // another process removed it first
                }
                removed.insert(record.id)
            }
        }
        return (updating, removed)
    }

    /// Downloads `id` on a thread of its own, as a discretionary download,
    /// unless this manager is updating it already.
    private func startUpdate(_ id: String) {
        guard policies.updating.withLock({ $0.insert(id).inserted }) else { return }
        Thread.detachNewThread {
            defer { _ = self.policies.updating.withLock { $0.remove(id) } }
            // A failure leaves the installed version; the journal keeps a
            // partial file for the next attempt to resume.
            try? self.download(id, discretionary: true, progress: nil)
        }
    }
}
