import AssetIndex
import AssetSystem

extension AssetStore {
    /// Removes pack `id`: its members vanish from the index in one write
    /// transaction, then its archive is unlinked. Readers holding its bytes
    /// or descriptors keep reading them; new lookups no longer find it.
    ///
    /// - Throws: `.assetPackNotFound` when it is not installed, `.lockTimeout`,
    ///   `.index`; `.system` when the archive's unlink cannot be made
    ///   durable (the pack is removed from the index by then; its file
    ///   keeps a twin, and the next writer reclaims both).
    public func remove(pack id: String) throws(StoreError) {
        try PackID.validate(id)
        let containerLock = try lockContainer(.shared)
        CrashPoint.hit("remove.locked-container")
        let packLock = try lockPack(id)
        CrashPoint.hit("remove.locked-pack")
        guard let record = try packRecord(id) else {
            // Taking the lock made its file; a pack that is not installed keeps
            // none, nor any archive a crashed writer left.
            reclaimArchives(of: id, keeping: nil)
            removeLockFile(of: id)
            throw .notInstalled(id)
        }
        var retiring = try retire(record)
        // The twin outlives a power loss after the commit: the archive it
        // proves garbage is never an orphan.
        try layout.staging.sync()
        CrashPoint.hit("remove.retire-linked")
        // Deleting copies the pages it changes before the old ones are free:
        // room for about the pack's own records (names unknown here).
        let growth = Self.indexGrowth(of: id, members: Int(clamping: record.memberCount), nameBytes: 0)
        try update(reserving: growth) { (txn) throws(StoreError) in
            guard try Self.packRecord(id, txn: txn, packs: packs) != nil else { throw .notInstalled(id) }
            try Self.writeIndex(removing: id, txn: txn, packs: packs, members: members, paths: paths)
            CrashPoint.hit("remove.index.written")
        }
        CrashPoint.hit("remove.committed")
        // The archive's unlink is flushed before this returns: a removed
        // pack's file stays gone after a power loss.
        var unlinkFailure: StoreError?
        do { try retiring?.unlinkArchive() } catch { unlinkFailure = error }
        _ = consume retiring
        CrashPoint.hit("remove.unlinked-archive")
        reclaimArchives(of: id, keeping: nil)
        archives.evict(pack: id)
        memoryFiles.drop(pack: id)
        removeLockFile(of: id)
        CrashPoint.hit("remove.done")
        _ = consume packLock
        _ = consume containerLock
        if let unlinkFailure { throw unlinkFailure }
    }

    /// Deletes pack `id`'s record, members and path entries, holding none
    /// of its members.
    static func writeIndex(
        removing id: String, txn: borrowing WriteTransaction, packs: Database, members: Database, paths: Database
    ) throws(StoreError) {
        try sweepMembers(of: id, txn: txn, members: members, paths: paths, crashPoint: "remove.index.member") { _ in true }
        try indexCall { () throws(LMDBError) in _ = try txn.delete(packs, key: Array(id.utf8)) }
    }
}
