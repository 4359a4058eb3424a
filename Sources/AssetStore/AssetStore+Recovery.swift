import AssetIndex
import AssetSystem

/// Clearing what writers killed mid-way leave behind: staging files, and
/// archives in `packs/` that no committed record names (published but not
/// committed, or replaced but not yet unlinked). None of it is ever read;
/// it only takes space, and `verify` reports archives no record names.
///
/// Three places reclaim, each under the lock that proves nobody is still
/// working on what it removes (docs/coordination.md):
/// - the first open of a container in a process, when it can take the
///   container lock exclusively at once (``recoverAfterOpen(container:index:)``);
/// - every install and removal, for its own pack, under the pack lock
///   (``reclaimArchives(of:keeping:)``) and, for staging files, each file's
///   own lock (``StagedFile/reclaimLeftovers(in:suffix:)``);
/// - ``collectGarbage()``, on demand, with the container lock exclusive.
extension AssetStore {
    /// Removes every leftover of interrupted work: staging files whose lock is
    /// free, and archives in `packs/` that no installed pack's record names.
    /// Takes the container lock exclusively, waiting as ``lockWait`` says,
    /// so no install or removal is running meanwhile.
    ///
    /// Files in `packs/` whose names this store would not have made are left
    /// alone (`verify` reports them).
    ///
    /// - Returns: the paths removed, relative to the container (`staging/…`,
    ///   `packs/…`).
    /// - Throws: `.lockTimeout`, `.index`, `.corruptRecord` when a pack record
    ///   cannot be read (then nothing in `packs/` is removed), `.system`.
    @discardableResult
    public func collectGarbage() throws(AssetPackError) -> [String] {
        let lock = try lockContainer(.exclusive)
        let removed = try Self.collectGarbage(container: container, index: shared)
        _ = consume lock
        return removed
    }

    /// The work of ``collectGarbage()``; the caller holds the container lock
    /// exclusively.
    static func collectGarbage(container: GroupContainer, index: SharedIndex) throws(AssetPackError) -> [String] {
        var removed = StagedFile.reclaimLeftovers(in: container.stagingPath).sorted().map { "staging/" + $0 }
        let named = try archiveNames(index)
        for name in unnamedArchives(in: container, named: named) {
            if (try? FileSystem.unlink(container.packsPath + "/" + name)) != nil { removed.append("packs/" + name) }
        }
        return removed
    }

    /// Run when this process first opens `container`'s index: if a crashed
    /// writer left anything behind and no writer is at work (the container
    /// lock is free), reclaims it. Never waits, never fails: an open must not
    /// block on another process, and a reader without write access simply
    /// leaves the work to the next writer.
    static func recoverAfterOpen(container: GroupContainer, index: SharedIndex) {
        guard let named = try? archiveNames(index) else { return }
        let stagingLeftovers = FileSystem.names(in: container.stagingPath).contains { $0.hasSuffix(StagedFile.suffix) }
        guard stagingLeftovers || !unnamedArchives(in: container, named: named).isEmpty else { return }
        guard let lock = try? Self.lock(path: container.containerLockPath, kind: .exclusive, wait: .none) else { return }
        _ = try? collectGarbage(container: container, index: index)
        _ = consume lock
    }

    /// Unlinks pack `id`'s archives other than the one with key `keeping`:
    /// left by a writer killed after publishing and before committing, or
    /// after committing and before unlinking the version it replaced. The
    /// caller holds the pack's lock and read `keeping` under it, so none of
    /// them is a publish in progress or the installed version.
    func reclaimArchives(of id: String, keeping key: UInt64?) {
        for name in FileSystem.names(in: container.packsPath) {
            guard let parsed = IndexSchema.parseArchiveName(name), parsed.pack == id, parsed.archiveKey != key else { continue }
            try? FileSystem.unlink(container.packsPath + "/" + name)
        }
    }

    /// The archive file names the committed records name, read in one
    /// snapshot. Throws rather than return a partial set: a record that
    /// cannot be read might name any file.
    private static func archiveNames(_ index: SharedIndex) throws(AssetPackError) -> Set<String> {
        do {
            return try index.environment.read { (txn) throws(AssetPackError) -> Set<String> in
                guard try schemaVersion(in: txn, meta: index.meta) == IndexSchema.version else {
                    throw .unsupportedSchema(found: 0, supported: IndexSchema.version, path: index.environment.path)
                }
                var names = Set<String>()
                var failure: AssetPackError?
                try indexCall { () throws(LMDBError) in
                    try txn.forEach(index.packs) { key, value in
                        let id = String(decoding: key, as: UTF8.self)
                        do throws(AssetPackError) {
                            names.insert(try PackRecord(id: id, decoding: value).archiveName)
                            return true
                        } catch {
                            failure = error
                            return false
                        }
                    }
                }
                if let failure { throw failure }
                return names
            }
        } catch {
            switch error {
            case .lmdb(let e): throw .index(e)
            case .body(let e): throw e
            }
        }
    }

    /// Archive-shaped names in `packs/` (`ID.<16 hex digits>.zip`) that no
    /// record names. Other names are not this store's to remove.
    private static func unnamedArchives(in container: GroupContainer, named: Set<String>) -> [String] {
        FileSystem.names(in: container.packsPath).sorted().filter {
            !named.contains($0) && IndexSchema.parseArchiveName($0) != nil
        }
    }
}
