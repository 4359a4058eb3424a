public import Foundation
import AssetStore
import AssetSystem

/// Manages the asset packs of one group container, in the spirit of Apple's
/// `AssetPackManager`.
///
/// A manager is `Sendable`: share one across threads and tasks. Several
/// processes (an app and its downloader, a launcher and a game) may each have
/// a manager on the same container; they see each other's installs.
///
/// Reads are synchronous and take no lock: they run in an index snapshot and
/// return bytes that point straight into the installed archive.
///
/// Every method throws ``AssetPackError``; its ``AssetPackError/code`` says
/// what went wrong and the error names the pack, member or path.
public final class AssetPackManager: Sendable {
    /// Where a container is: a directory shared by the processes of a group.
    ///
    /// ```
    /// <container>/
    ///   index/      the index (LMDB)
    ///   packs/      installed archives
    ///   staging/    installs and downloads in progress
    ///   cache/      extracted members
    ///   locks/      lock files
    ///   daemon.sock the descriptor daemon's socket, while it runs
    /// ```
    public struct Container: Sendable, Hashable {
        /// The container directory, absolute.
        public let path: String

        /// The container at `path` (made absolute against the working directory).
        public init(path: String) {
            self.path = GroupContainer(path: path).path
        }

        /// The default container of a group: `$XDG_DATA_HOME/assetpacks/<group>`,
        /// with `XDG_DATA_HOME` defaulting to `~/.local/share`. The
        /// environment variable `ASSETPACKS_CONTAINER`, when set, wins.
        public static func `default`(group: String = "default",
                                     environment: [String: String] = ProcessInfo.processInfo.environment) -> Container {
            Container(path: GroupContainer.default(group: group, environment: environment).path)
        }

        /// The descriptor daemon's socket in this container.
        public var daemonSocketPath: String { engine.daemonSocketPath }

        var engine: GroupContainer { GroupContainer(path: path) }
    }

    /// How a manager opens its container.
    public struct Options: Sendable {
        /// How long to wait for a lock another process holds — a pack's
        /// (installs, removals), the container's, a download's, the index's
        /// map-length lock — in seconds, whoever holds it: then the call
        /// fails with ``AssetPackError/Code/lockTimeout``, naming the lock
        /// file and its holder's pid where one can be seen. `nil`, the
        /// default, waits for as long as the holder is a process of this
        /// user at work (not stopped), and 10 s while it is not: a process
        /// of another user, a stopped one, or one that cannot be seen.
        /// Finite and not negative; 0 does not wait at all.
        public var lockTimeout: Double?
        /// Whether a missing container is created. With `false`, a missing
        /// container is an error (``AssetPackError/Code/noContainer``):
        /// read-only tools (listing, reading, verifying) open this way, so
        /// that a mistyped path is not silently a new, empty container.
        public var createsContainer = true
        /// Whether opening frees the index's reader slots left by processes
        /// that died holding a snapshot (LMDB's `mdb_reader_check`), so they
        /// no longer pin old pages. A verifier opens with `false`, to report
        /// them instead.
        public var clearsStaleReaders = true
        /// The limits this manager enforces on installs and reads instead of
        /// the ones the container records (``setLimits(_:)``); `nil`, the
        /// default, enforces the container's, or ``Limits/defaults`` when it
        /// records none.
        public var limits: Limits?
        /// Where packs are downloaded from (``ensureLocalAvailability(of:)``);
        /// `nil`: this manager only works with what is installed.
        public var catalog: CatalogSource?
        /// How discretionary downloads (prefetch packs at an installation
        /// event, the updates ``checkForUpdates()`` starts) are held back.
        public var discretionary = Discretionary()
        /// The directory the machine's power supplies and load are read
        /// under (`<root>/sys/class/power_supply`, `<root>/proc/loadavg`);
        /// `nil`: the environment variable `ASSETPACKS_SYSTEM_ROOT`, else `/`.
        public var systemRoot: String?
        /// Consulted before every automatic download, as Background Assets'
        /// downloader extension is; `nil` downloads every pack a policy names.
        public var downloaderExtension: (any AssetPackDownloaderExtension)?

        /// Whether ``ensureLocalAvailability(of:progress:)`` always downloads
        /// in this process. With `false`, the default, it hands the download
        /// to the container's daemon (`assetpack daemon`) when one answers on
        /// `daemon.sock`, and downloads itself only when none does (or the
        /// daemon predates downloads, refuses this process, or dies before
        /// it replies — the journal then makes this a resume). The daemon's
        /// own managers set it.
        public var downloadsInProcess = false

        /// Bytes of sealed memory files (inflated members, standalone
        /// members) the manager keeps to hand out again: a second
        /// ``AssetPackManager/descriptor(for:searchingInAssetPackWithID:options:)``
        /// of the same file is a `dup`, not a new inflation; the least
        /// recently used go first. 0 keeps none.
        public var memoryFileCacheBytes: Int64 = 64 << 20
        /// Memory files kept at most (each holds a descriptor); 0 keeps none.
        public var memoryFileCacheCount = 128
        /// How much of the container's catalog cache (`<container>/catalog/`)
        /// this manager keeps when it fetches a catalog.
        public var catalogCache = CatalogCache()
        /// Lines for an operator's log (a control request a download
        /// ignored, and why): the daemon's managers pass its log.
        var log: (@Sendable (String) -> Void)?

        public init(lockTimeout: Double? = nil, createsContainer: Bool = true, clearsStaleReaders: Bool = true,
                    limits: Limits? = nil, catalog: CatalogSource? = nil, discretionary: Discretionary = Discretionary(),
                    systemRoot: String? = nil, downloaderExtension: (any AssetPackDownloaderExtension)? = nil,
                    downloadsInProcess: Bool = false) {
            self.lockTimeout = lockTimeout
            self.createsContainer = createsContainer
            self.clearsStaleReaders = clearsStaleReaders
            self.limits = limits
            self.catalog = catalog
            self.discretionary = discretionary
            self.systemRoot = systemRoot
            self.downloaderExtension = downloaderExtension
            self.downloadsInProcess = downloadsInProcess
        }
    }

    let store: AssetStore

    /// The container this manager works in.
    public let container: Container
    /// Where this manager downloads packs from, if anywhere.
    public let catalogSource: CatalogSource?
    /// Discretionary downloads, the downloader extension, updates in flight.
    let policies: Policies
    /// Whether downloads never go to the daemon (``Options/downloadsInProcess``).
    let downloadsInProcess: Bool
    /// ``Options/catalogCache``.
    let catalogCache: Options.CatalogCache
    /// ``Options/log``.
    let log: (@Sendable (String) -> Void)?

    /// A manager for `container` (by default the default group's).
    ///
    /// - Throws: `.noContainer` when it is missing and `options` says not to
    ///   create it; `.system` when it cannot be created; `.index` when its
    ///   index cannot be opened; `.unsupportedSchema` when another version
    ///   wrote it; `.invalidOption` for a value ``Options`` cannot take.
    public init(container: Container = .default(), options: Options = Options()) throws(AssetPackError) {
        for (field, value) in [("memoryFileCacheBytes", options.memoryFileCacheBytes), ("memoryFileCacheCount", Int64(options.memoryFileCacheCount))]
        where value < 0 {
            throw AssetPackError(.invalidOption, field: field, message: "AssetPackManager.Options.\(field) must be 0 or more (0 keeps none), not \(value)")
        }
        try options.catalogCache.validate()
        policies = try Policies(options)
        try options.catalog?.validate()
        var engineOptions = AssetStore.Options()
        engineOptions.lockWait = try Self.lockWait(options.lockTimeout)
        engineOptions.createsContainer = options.createsContainer
        engineOptions.clearsStaleReaders = options.clearsStaleReaders
        engineOptions.limits = options.limits.map(PackLimits.init)
        engineOptions.memoryFileCache = .init(bytes: options.memoryFileCacheBytes, files: options.memoryFileCacheCount)
        store = try engine { () throws(StoreError) in try AssetStore(container: container.engine, options: engineOptions) }
        self.container = container
        self.catalogSource = options.catalog
        self.downloadsInProcess = options.downloadsInProcess
        self.catalogCache = options.catalogCache
        self.log = options.log
    }

    /// Sets how long this manager's calls wait from now on for a lock
    /// another process holds, as ``Options/lockTimeout`` says (`nil`: the
    /// default). The index's map-length lock, taken while a process maps the
    /// index, keeps the wait it was opened with.
    ///
    /// - Throws: `.invalidOption` for a negative, infinite or NaN value.
    public func setLockTimeout(_ seconds: Double?) throws(AssetPackError) {
        store.setLockWait(try Self.lockWait(seconds))
    }

    /// The store's wait for a lock timeout in seconds (`nil`: the default).
    private static func lockWait(_ seconds: Double?) throws(AssetPackError) -> FileLock.Wait {
        guard let seconds else { return .standard }
        guard seconds.isFinite, seconds >= 0 else {
            throw AssetPackError(.invalidOption, field: "lockTimeout",
                                 message: "AssetPackManager.Options.lockTimeout must be a finite number of seconds, 0 or more, not \(seconds)")
        }
        return .seconds(seconds)
    }

    /// The installed pack with this ID.
    ///
    /// - Throws: `.assetPackNotFound` when it is not installed,
    ///   `.invalidPackID` when no pack could have this ID.
    public func assetPack(withID id: String) throws(AssetPackError) -> AssetPack {
        guard let record = try engine({ () throws(StoreError) in try store.packRecord(id) }) else {
            throw AssetPackError(.notInstalled(id))
        }
        return AssetPack(record)
    }

    /// Every installed pack, sorted by ID.
    public func allAssetPacks() throws(AssetPackError) -> [AssetPack] {
        try engine { () throws(StoreError) in try store.allPackRecords() }.map(AssetPack.init)
    }

    /// What ``installPack(at:id:priority:progress:)`` did.
    public struct InstallResult: Sendable, Hashable {
        /// What changed in the container.
        public enum Change: String, Sendable, Hashable {
            /// The pack was not installed before.
            case installed
            /// An older (or other) version was replaced.
            case replaced
            /// A byte-identical archive was installed already: nothing changed.
            case unchanged
        }

        public let pack: AssetPack
        public let change: Change
    }

    /// Installs a local pack file, replacing the installed version of the
    /// same pack atomically (a byte-identical file changes nothing). Readers
    /// see the old version or the new one, never a mixture; bytes and
    /// descriptors of the old version handed out before stay readable.
    ///
    /// - Parameters:
    ///   - path: the pack file.
    ///   - id: the ID for a plain ZIP that records no manifest (default: the
    ///     file name without its extension).
    ///   - priority: `.background` to run the install on a thread of its
    ///     own that gives way to every other thread (``WorkPriority``);
    ///     the call waits for it either way.
    ///   - progress: called as the file is copied, validated and indexed
    ///     (with `.background`, on the install's thread).
    /// - Throws: `.badArchive` for a malformed or damaged file,
    ///   `.limitExceeded` for one whose members declare more than
    ///   ``limits()`` allow (nothing installed changes, and in the second case
    ///   nothing is inflated), `.notAFile`, `.invalidPackID`, `.invalidPath`,
    ///   `.lockTimeout`, `.system`.
    @discardableResult
    public func installPack(at path: String, id: String? = nil, priority: WorkPriority = .normal,
                            progress: (@Sendable (AssetPackProgress) -> Void)? = nil) throws(AssetPackError) -> InstallResult {
        let report = progress.map { progress in { (p: InstallProgress) in progress(AssetPackProgress(p)) } }
        let install = { () throws(AssetPackError) in
            try engine { () throws(StoreError) in try self.store.install(packAt: path, id: id, progress: report) }
        }
        let outcome = priority == .background ? try BackgroundWork.run(install) : try install()
        let change: InstallResult.Change
        switch outcome.change {
        case .installed: change = .installed
        case .replaced: change = .replaced
        case .unchanged: change = .unchanged
        }
        return InstallResult(pack: AssetPack(outcome.record), change: change)
    }

    /// How an install competes for the CPU with the rest of the machine.
    public enum WorkPriority: Sendable {
        /// On the calling thread, at its priority.
        case normal
        /// On a thread of its own at nice 19 (`SCHED_BATCH`): beside a
        /// thread of normal priority it gets about 1.5 % of a CPU and never
        /// preempts it on waking, so a reader in this or another process
        /// keeps its CPU; on an idle CPU it runs at full speed. On a busy
        /// machine the install takes much longer. For installs nobody waits
        /// on: updates that arrive in the background.
        case background
    }

    /// Installs the pack file at a `file:` URL. See ``installPack(at:id:priority:progress:)``.
    ///
    /// - Throws: `.unsupportedURL` for any other scheme (`http:`, `https:`
    ///   …): this build installs local files only.
    @discardableResult
    public func install(packAt url: URL, id: String? = nil, priority: WorkPriority = .normal,
                        progress: (@Sendable (AssetPackProgress) -> Void)? = nil) throws(AssetPackError) -> AssetPack {
        guard url.isFileURL else {
            throw AssetPackError(.unsupportedURL, path: url.absoluteString,
                                 message: "cannot install from \(url.absoluteString): only file: URLs can be installed (give a local path)")
        }
        return try installPack(at: url.path, id: id, priority: priority, progress: progress).pack
    }

    /// The bytes of the file at `path` in the pack `id`, or in whichever
    /// installed pack holds it when `id` is nil.
    ///
    /// Stored files are not copied: the `Data` points into a shared read-only
    /// mapping of the archive, which lives as long as the `Data` does — also
    /// after the pack is updated or removed. Their CRC-32 is not checked
    /// (that would touch every page); pass `verifyingChecksum` when the bytes
    /// will be copied anyway. Deflated files are inflated and always checked.
    ///
    /// - Throws: `.assetPackNotFound`, `.fileNotFound`, `.ambiguousPath` when
    ///   `id` is nil and several packs hold `path`; `.badArchive` when the
    ///   data is damaged (`.crcMismatch`, `.corruptData`); `.limitExceeded`
    ///   when a deflated file is over ``limits()`` (a pack installed under
    ///   looser ones), before anything is allocated for it.
    public func contents(at path: String, searchingInAssetPackWithID id: String? = nil,
                         verifyingChecksum: Bool = false) throws(AssetPackError) -> Data {
        try engine { () throws(StoreError) in
            verifyingChecksum ? try store.checkedContents(at: path, inPack: id) : try store.contents(at: path, inPack: id)
        }
    }

    /// A read-only descriptor, with offset and length, of the file at `path`
    /// in pack `id` (or in whichever pack holds it). A stored member comes as
    /// a descriptor of the installed archive with the member's range
    /// (``AssetDescriptor/Source/archive`` — read the warning there); a
    /// deflated one, or any with `.standalone`, as a sealed memory file
    /// holding exactly the member, made once and kept for the next call
    /// (``Options/memoryFileCacheBytes``). Unless `options` has `.ownOffset`,
    /// the descriptor shares its file position with the others of the same
    /// file (see ``AssetDescriptor``).
    ///
    /// - Throws: as ``contents(at:searchingInAssetPackWithID:verifyingChecksum:)``,
    ///   and `.system` when a descriptor cannot be made (`EMFILE`, …).
    public func descriptor(for path: String, searchingInAssetPackWithID id: String? = nil,
                           options: AssetDescriptor.Options = []) throws(AssetPackError) -> AssetDescriptor {
        var engineOptions: DescriptorOptions = []
        if options.contains(.standalone) { engineOptions.insert(.standalone) }
        if options.contains(.ownOffset) { engineOptions.insert(.ownOffset) }
        return AssetDescriptor(try engine { () throws(StoreError) in
            try store.descriptor(for: path, inPack: id, options: engineOptions)
        })
    }

    /// The files of pack `id`, sorted by path; with `directory`, only those
    /// below it.
    ///
    /// - Throws: `.assetPackNotFound` when the pack is not installed.
    public func members(inAssetPackWithID id: String, under directory: String? = nil) throws(AssetPackError) -> [AssetMember] {
        try engine { () throws(StoreError) in try store.members(ofPack: id, under: directory) }.map(AssetMember.init)
    }

    /// Removes pack `id` and frees its space. Bytes and descriptors already
    /// handed out stay readable.
    ///
    /// - Throws: `.assetPackNotFound` when it is not installed, `.lockTimeout`.
    public func remove(assetPackWithID id: String) throws(AssetPackError) {
        try engine { () throws(StoreError) in try store.remove(pack: id) }
    }

    /// Checks the container like fsck, and with `options.repair` fixes what
    /// can be fixed without losing installed data. docs/verify.md lists the
    /// findings and repairs.
    ///
    /// - Throws: only when the check itself cannot run (`.system`, `.index`,
    ///   `.lockTimeout`); damage is reported in the ``Verification/Report``.
    public func verify(_ options: Verification.Options = Verification.Options()) throws(AssetPackError) -> Verification.Report {
        var engineOptions = VerificationOptions(deep: options.deep, packs: options.packs,
                                                repair: options.repair, dryRun: options.dryRun)
        if let progress = options.progress {
            let unit: AssetPackProgress.Unit = options.deep ? .bytes : .members
            engineOptions.progress = { done, total in
                progress(AssetPackProgress(phase: .verifying, unit: unit, completed: done, total: total))
            }
        }
        return Verification.Report(try engine { () throws(StoreError) in try store.verify(options: engineOptions) })
    }

    /// Removes what interrupted work left behind — half-copied files in
    /// `staging/`, archives in `packs/` that no pack names — with the
    /// container lock held exclusively, so no install runs meanwhile. Files
    /// the store would not have made are left for ``verify(_:)`` to report.
    ///
    /// - Returns: the paths removed, relative to the container.
    @discardableResult
    public func collectGarbage() throws(AssetPackError) -> [String] {
        try engine { () throws(StoreError) in try store.collectGarbage() }
    }
}
