import AssetIndex
import AssetSystem

/// A file in `staging/` left by a writer that died (its lock is free).
struct Leftover: Sendable {
    enum Kind: Sendable {
        case install, retire
        /// The `.download` name of a download adopted as its pack's
        /// installed archive (the same inode), which its adopter died
        /// before unlinking.
        case adopted
        /// The list of completed ranges of a delta download the journal
        /// still names (`<download>.ranges`): not a leftover, never removed.
        case downloadRanges
        /// That list for a download the journal no longer names (adopted or
        /// discarded before the list went).
        case orphanRanges
        case other
    }
    /// The name in `staging/`.
    let name: String
    let kind: Kind
    /// For an `.install` or `.retire` twin: the `packs/` name it shares an
    /// inode with, when that file exists and no pack record names it — the
    /// garbage the dead writer left in `packs/`.
    let unreferencedArchive: String?
}

extension AssetStore {
    /// The staging files whose writers died, and the `packs/` files they
    /// prove to be garbage. Changes nothing (probing a lock takes it for an
    /// instant). Files still locked belong to live writers and are skipped,
    /// and so are files gone meanwhile (`ENOENT`), symlinks (never opened;
    /// verify reports them) and directories (no writer makes one).
    ///
    /// - Throws: `.system` when `staging/` or a file in it cannot be looked
    ///   at for another reason (`EMFILE`, `EACCES`, …): a file whose lock
    ///   could not be probed is not proven a dead writer's.
    func findLeftovers() throws(StoreError) -> [Leftover] {
        var found: [Leftover] = []
        for name in try layout.staging.listing().sorted() {
            let path = layout.staging.path(of: name)
            let fd: FileDescriptor
            do { fd = try layout.staging.openFile(name, .readWrite) } catch where error.provesAbsence {
                continue
            } catch where error == .tooManySymbolicLinkLevels {
                continue // A symlink (O_NOFOLLOW): layout.symlink only.
            } catch where error == .isDirectory {
                continue // Not a writer's file, whatever its name: left for verify.
            } catch {
                throw .system(error)
            }
            let twin: FileStatus
            do {
                guard try FileLock.tryLock(fd) else { continue }
                twin = try fd.status()
            } catch {
                throw .system(error.path == nil ? error.with(operation: error.operation, path: path) : error)
            }
            // The lock may have come free because its writer finished and
            // unlinked this name after it was opened here: only a name that
            // still leads to the locked file is a leftover.
            guard let now = try layout.staging.linkStatus(of: name), now.inode == twin.inode, now.device == twin.device else { continue }
            let kind: Leftover.Kind
            let base: String?
            if name.hasSuffix(StagedFile.suffix) {
                kind = .install
                base = String(name.dropLast(StagedFile.suffix.count))
            } else if name.hasSuffix(RetiringArchive.suffix) {
                kind = .retire
                base = String(name.dropLast(RetiringArchive.suffix.count))
            } else if name.hasSuffix(JournalEntry.stagingSuffix + JournalEntry.rangesSuffix) {
                // The journal is read after the listing: a list is made only once its download's entry is written.
                let download = String(name.dropLast(JournalEntry.rangesSuffix.count))
                kind = try journalEntries().contains { $0.stagingName == download } ? .downloadRanges : .orphanRanges
                base = nil
            } else {
                kind = try isAdoptedDownload(name, twin) ? .adopted : .other
                base = nil
            }
            var garbage: String?
            // Whether a record names the archive is read only now, with the
            // dead writer's lock held: what it committed before dying is in
            // this snapshot, and nothing it did can change any more.
            if let base, let parsed = IndexSchema.parseArchiveName(base),
               try packRecord(parsed.pack)?.archiveKey != parsed.archiveKey,
               let archive = try layout.packs.linkStatus(of: base),
               archive.inode == twin.inode, archive.device == twin.device {
                garbage = base
            }
            found.append(Leftover(name: name, kind: kind, unreferencedArchive: garbage))
        }
        return found
    }

    /// Whether `name`, with the free lock and the identity `status`, is the
    /// `.download` name (`<pack>-<random>.download`) of pack `<pack>`'s
    /// installed archive: an adopter committed it and died before unlinking
    /// the name. Read with the dead writer's lock held, as above.
    private func isAdoptedDownload(_ name: String, _ status: FileStatus) throws(StoreError) -> Bool {
        guard name.hasSuffix(JournalEntry.stagingSuffix), let dash = name.lastIndex(of: "-") else { return false }
        let pack = String(name[..<dash])
        guard (try? PackID.validate(pack)) != nil, let record = try packRecord(pack),
              let archive = try layout.packs.linkStatus(of: record.archiveName) else { return false }
        return archive.inode == status.inode && archive.device == status.device
    }

    /// Removes what writers that died left behind: their `.install` and
    /// `.retire` twins and the `packs/` files those prove unreferenced, and
    /// the `.download` names of downloads adopted as installed archives, and
    /// range lists of downloads the journal no longer names.
    /// Called by every writer under the container lock (shared), before its
    /// own work. Other files in `staging/` are left for verify to report.
    ///
    /// The `packs/` files go first and `packs/` is flushed before any twin
    /// goes (a twin whose archive came back after a power loss would leave
    /// an orphan), and `staging/` is flushed last: what was reclaimed stays
    /// reclaimed. Both flushes happen only when something was removed.
    ///
    /// - Returns: the paths removed, relative to the container.
    /// - Throws: `.system` when a flush fails (the twins of archives whose
    ///   unlink was not flushed stay).
    @discardableResult
    func reclaimLeftovers() throws(StoreError) -> [String] {
        var removed: [String] = []
        let leftovers = try findLeftovers().filter { $0.kind != .other && $0.kind != .downloadRanges }
        var kept: Set<String> = []
        for leftover in leftovers {
            guard let archive = leftover.unreferencedArchive else { continue }
            do { try layout.packs.unlink(archive) } catch where error == .noSuchFile {} catch {
                kept.insert(leftover.name)
                continue
            }
            removed.append("packs/" + archive)
        }
        if !removed.isEmpty { try layout.packs.sync() }
        for leftover in leftovers where !kept.contains(leftover.name) {
            if (try? layout.staging.unlink(leftover.name)) != nil { removed.append("staging/" + leftover.name) }
        }
        if !removed.isEmpty { try layout.staging.sync() }
        return removed
    }
}
