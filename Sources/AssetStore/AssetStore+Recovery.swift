import AssetIndex
import AssetSystem

/// Clearing what writers killed mid-way leave behind: staging twins, and
/// archives in `packs/` that no committed record names (published but not
/// committed, or replaced but not yet unlinked). None of it is ever read; it
/// only takes space.
///
/// Each is reclaimed under the lock that proves nobody is still working on
/// it (docs/coordination.md):
/// - every install, before its own work: twins whose writer died, with the
///   `packs/` files they prove unreferenced (``reclaimLeftovers()``);
/// - every install and removal, for its own pack, under the pack lock
///   (``reclaimArchives(of:keeping:)``);
/// - ``collectGarbage()``, on demand, with the container lock exclusive.
extension AssetStore {
    /// Removes every leftover of interrupted work: twins in `staging/` whose
    /// writer died, and archive-named files in `packs/` that no pack record
    /// names. Takes the container lock exclusively, waiting as ``lockWait``
    /// says, so no install or removal runs meanwhile.
    ///
    /// Files whose names this store would not have made are left alone
    /// (`verify` reports them, `verify --repair` quarantines them).
    ///
    /// - Returns: the paths removed, relative to the container (`staging/…`,
    ///   `packs/…`).
    /// - Throws: `.lockTimeout`, `.index`, `.corruptRecord` when a pack record
    ///   cannot be read (then nothing in `packs/` is removed), `.system`.
    @discardableResult
    public func collectGarbage() throws(StoreError) -> [String] {
        let lock = try lockContainer(.exclusive)
        var removed = try reclaimLeftovers()
        let named = Set(try allPackRecords().map(\.archiveName))
        var swept = false
        for name in layout.packs.names.sorted() where !named.contains(name) && IndexSchema.parseArchiveName(name) != nil {
            if (try? layout.packs.unlink(name)) != nil {
                removed.append("packs/" + name)
                swept = true
            }
        }
        if swept { try layout.packs.sync() }
        _ = consume lock
        return removed
    }

    /// Unlinks pack `id`'s archives other than the one with key `keeping`:
    /// left by a writer killed after publishing and before committing, or
    /// after committing and before unlinking the version it replaced. The
    /// caller holds the pack's lock and read `keeping` under it, so none of
    /// them is a publish in progress or the installed version. `packs/` is
    /// flushed when one was removed (failing that, it is removed again
    /// after a power loss, as after a kill).
    func reclaimArchives(of id: String, keeping key: UInt64?) {
        var removed = false
        for name in layout.packs.names {
            guard let parsed = IndexSchema.parseArchiveName(name), parsed.pack == id, parsed.archiveKey != key else { continue }
            if (try? layout.packs.unlink(name)) != nil { removed = true }
        }
        if removed { try? layout.packs.sync() }
    }
}
