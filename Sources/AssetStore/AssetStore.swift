import Foundation
import Synchronization
public import AssetSystem
import AssetIndex

/// The storage engine of one group container: the LMDB index of installed
/// packs and their members, the archives in `packs/`, installs, removals,
/// zero-copy reads and descriptor handout.
///
/// An `AssetStore` is safe to share between threads and tasks; several
/// processes may open the same container at once. Readers take no lock: every
/// lookup runs in an LMDB snapshot. Writers take the pack's lock file (and the
/// container lock, shared) so two processes never change one pack at once.
public final class AssetStore: Sendable {
    /// The container this store works in.
    public let container: GroupContainer
    /// How long writers wait for locks (``Options/lockWait``); a store's
    /// user may change it (``setLockWait(_:)``).
    public var lockWait: FileLock.Wait { waitForLocks.withLock { $0 } }
    private let waitForLocks: Mutex<FileLock.Wait>
    /// The limits given in ``Options/limits``, which win over the container's.
    let limitsOverride: PackLimits?
    /// ``Options/installHeldMembers``.
    let installHeldMembers: Int
    /// The sealed memory files this store handed out, for the next handout
    /// of the same member (``Options/memoryFileCache``).
    public let memoryFiles: MemoryFileCache

    /// The index and mappings, shared by every store of this container in
    /// this process (LMDB allows one environment per process and file).
    let shared: SharedIndex

    var environment: Environment { shared.environment }
    var packs: Database { shared.packs }
    var members: Database { shared.members }
    var paths: Database { shared.paths }
    var meta: Database { shared.meta }
    var journal: Database { shared.journal }
    var archives: ArchiveCache { shared.archives }
    var lookups: LookupCache { shared.lookups }
    /// The container's directories, held open (see ``ContainerLayout``).
    var layout: ContainerLayout { shared.layout }

    /// Options for opening a store.
    public struct Options: Sendable {
        /// How long installs, removals, downloads and the index's
        /// map-length lock wait for another process's lock. The default,
        /// ``FileLock/Wait/standard``, waits while the holder is a process of
        /// this user at work, and 10 s while it is not.
        public var lockWait: FileLock.Wait = .standard
        /// The index's initial map size; it grows by itself when full.
        public var initialMapSize: Int = 64 << 20
        /// The size beyond which the index's map does not grow: a write that
        /// needs more fails with `.index` (``LMDBError/mapFull``, naming the
        /// index). The first store of the container in a process decides: stores
        /// of one container share the index.
        public var maximumMapSize: Int = 16 << 30
        /// Whether a missing container (directories, index, schema record) is
        /// created. Verification opens with `false`, so that looking changes
        /// nothing: a missing container is then `.system(ENOENT)`.
        public var createsContainer = true
        /// Whether opening frees reader slots of dead processes. Verification
        /// opens with `false` to report them.
        public var clearsStaleReaders = true
        /// The limits this store enforces on installs and reads, instead of
        /// the ones the container records (``AssetStore/setLimits(_:)``).
        /// `nil`, the default: the container's, or ``PackLimits/defaults``.
        public var limits: PackLimits?
        /// How many bytes and files of sealed memory files (deflated members,
        /// standalone members) this store keeps to hand out again
        /// (``memoryFiles``). Each kept file holds a descriptor; once a
        /// memory file has been handed out, the store also holds up to
        /// ``MemoryFileCache/descriptorsAhead`` more (empty files made ahead,
        /// dropped ones waiting to be closed in a batch).
        public var memoryFileCache = MemoryFileCache.Limits(bytes: 64 << 20, files: 128)
        /// Up to how many members an install holds the entries the checks
        /// read, so that the data and index passes walk them instead of
        /// reading every record again; a larger pack is walked from its
        /// records each time and holds nothing per member. The default,
        /// 131,072, bounds what is held to about 17 MiB.
        public var installHeldMembers = 131_072
        public init() {}
    }

    /// Opens the store in `container`, creating the directory layout and the
    /// index where missing, and clearing reader slots left by dead processes.
    /// Stores of one container in one process share the index and the
    /// archive mappings.
    ///
    /// The container directory is reached through its path as given (which
    /// may pass through symlinks); nothing below it is ever reached through a
    /// symlink (``ContainerLayout``).
    ///
    /// - Throws: `StoreError.system` when the directories cannot be made,
    ///   `.symlinkInContainer` for a symlink where the layout has a directory
    ///   (for a store that does not create the container: only `index/` and
    ///   its files), `.index` when LMDB cannot open, `.unsupportedSchema` when
    ///   the index was written by an incompatible version.
    public init(container: GroupContainer, options: Options = Options()) throws(StoreError) {
        self.container = container
        self.waitForLocks = Mutex(options.lockWait)
        self.limitsOverride = options.limits
        self.installHeldMembers = max(0, options.installHeldMembers)
        self.memoryFiles = MemoryFileCache(limits: options.memoryFileCache)
        let layout = try ContainerLayout(container, creating: options.createsContainer)
        if layout.index.isSymlink { throw .symlinkInContainer(path: layout.index.path) }
        for file in ["data.mdb", "lock.mdb", "map.lock"] where layout.index.status(of: file)?.isSymbolicLink == true {
            throw .symlinkInContainer(path: layout.index.path(of: file))
        }
        if !options.createsContainer {
            for dir in [layout.index, layout.packs, layout.staging, layout.locks] where dir.openAnchor == nil && !dir.isSymlink {
                throw .noContainer(path: container.path, missing: dir.path)
            }
            guard layout.index.status(of: "data.mdb")?.isRegularFile == true else {
                throw .noContainer(path: container.path, missing: layout.index.path(of: "data.mdb"))
            }
        }
        shared = try SharedIndex.open(container: container, layout: layout, options: options)
        try checkSchema(create: options.createsContainer)
    }

    /// Sets how long this store's installs, removals and downloads wait
    /// for another process's lock from now on. The index's map-length lock
    /// keeps the wait of the first store of the container in this process.
    public func setLockWait(_ wait: FileLock.Wait) {
        waitForLocks.withLock { $0 = wait }
    }

    /// The mode of the container's lock files: 0600, or 0660 in a
    /// container shared with a group (its directory has the set-group-ID
    /// bit).
    package var lockFileMode: UInt32 { layout.lockFileMode }

    /// Writes the schema version into a new index (when `create`), or checks
    /// an existing one's.
    private func checkSchema(create: Bool) throws(StoreError) {
        let found: UInt32? = try snapshot { (txn) throws(StoreError) in
            try Self.schemaVersion(in: txn, meta: meta)
        }
        if let found {
            guard found == IndexSchema.version else {
                throw .unsupportedSchema(found: found, supported: IndexSchema.version, path: container.indexPath)
            }
            return
        }
        guard create else { return }
        try writeSchemaRecord()
    }

    /// Writes the schema version record into an index that lacks it: the
    /// container is made. The layout is flushed as a whole first
    /// (``ContainerLayout/syncWhole()``), so that an index with the record
    /// survives a power loss with its directories — and so does every
    /// install acknowledged after it.
    func writeSchemaRecord() throws(StoreError) {
        try layout.syncWhole()
        try update { (txn) throws(StoreError) in
            if try Self.schemaVersion(in: txn, meta: meta) == nil {
                var v = IndexSchema.version.littleEndian
                try indexCall { () throws(LMDBError) in
                    try txn.put(meta, key: IndexSchema.schemaKey, value: withUnsafeBytes(of: &v) { Array($0) })
                }
            }
        }
    }

    static func schemaVersion(in txn: borrowing some ReadableTransaction & ~Copyable, meta: Database) throws(StoreError) -> UInt32? {
        let value = try indexCall { () throws(LMDBError) in try txn.get(meta, key: IndexSchema.schemaKey) }
        guard let value else { return nil }
        guard value.count == 4 else { return 0 }
        return UInt32(littleEndian: value.loadUnaligned(as: UInt32.self))
    }
}
