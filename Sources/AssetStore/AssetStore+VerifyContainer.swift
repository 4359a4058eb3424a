import AssetIndex
import AssetSystem

extension AssetStore {
    /// The path index agrees with the member records; every member record
    /// belongs to an installed pack.
    func checkIndexConsistency(records: [PackRecord], txn: borrowing ReadTransaction, report: inout VerificationReport) throws(StoreError) {
        var ids = Set(records.map(\.id))
        try indexCall { () throws(LMDBError) in
            try txn.forEach(packs) { key, _ in ids.insert(String(decoding: key, as: UTF8.self)); return true }
        }
        var expected: [[UInt8]: [String]] = [:]
        try indexCall { () throws(LMDBError) in
            try txn.forEach(members) { key, _ in
                guard let zero = key.firstIndex(of: 0) else { return true }
                let pack = String(decoding: key[..<zero], as: UTF8.self)
                let path = Array(key[(zero + 1)...])
                if !ids.contains(pack) {
                    report.add(.memberOrphan, pack: pack, object: String(decoding: path, as: UTF8.self),
                               "member record of '\(pack)', which is not installed")
                } else {
                    expected[path, default: []].append(pack)
                }
                return true
            }
        }
        try indexCall { () throws(LMDBError) in
            try txn.forEach(paths) { key, value in
                let path = Array(key)
                let name = String(decoding: path, as: UTF8.self)
                let listed = PathIndex.packs(in: value)
                guard let want = expected.removeValue(forKey: path)?.sorted() else {
                    report.add(.pathsExtra, pack: listed.first, object: name, "the path index lists '\(name)' in \(listed), but no member has it")
                    return true
                }
                if listed != want {
                    report.add(.pathsMismatch, pack: want.first, object: name, "the path index lists '\(name)' in \(listed), members are in \(want)")
                }
                return true
            }
        }
        for (path, packs) in expected.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let name = String(decoding: path, as: UTF8.self)
            report.add(.pathsMissing, pack: packs.first, object: name, "the path index has no entry for '\(name)' of \(packs)")
        }
    }

    /// Files in `packs/`, `staging/`, `cache/`, `locks/packs/` and `locks/`; the journal;
    /// reader slots.
    /// An archive of a pack whose record is damaged is that finding's
    /// object (repair rebuilds the record from it), not an orphan.
    func checkFiles(report: inout VerificationReport, damagedRecords: Set<String>) throws(StoreError) {
        // Listed before the records are read, so a version committed while
        // we look is found in the records (see docs/coordination.md).
        let archiveNames = try listing(container.packsPath).sorted()
        // A file reaches packs/ only after its twin has its staging name, so
        // one listing taken after packs/'s shows every live writer's twin.
        let twinNames = Set(try listing(container.stagingPath))
        let leftovers = try findLeftovers()
        let named = Set(try readPackRecords().records.map(\.archiveName))
        let leftoverByArchive = Dictionary(leftovers.compactMap { l in l.unreferencedArchive.map { ($0, l) } }, uniquingKeysWith: { a, _ in a })
        for name in archiveNames where !named.contains(name) {
            if let pack = IndexSchema.parseArchiveName(name)?.pack, damagedRecords.contains(pack) { continue }
            if leftoverByArchive[name] != nil {
                report.add(.archiveUncommitted, pack: IndexSchema.parseArchiveName(name)?.pack, object: name,
                           "packs/\(name) was left by a writer that died before or after its switch; the next writer removes it")
                continue
            }
            // A live writer's twin, or gone meanwhile: not a finding.
            if twinNames.contains(name + StagedFile.suffix) || twinNames.contains(name + RetiringArchive.suffix) { continue }
            guard try exists(container.packsPath + "/" + name) else { continue }
            if try readPackRecords().records.contains(where: { $0.archiveName == name }) { continue }
            report.add(.archiveOrphan, pack: IndexSchema.parseArchiveName(name)?.pack, object: name, "packs/\(name) belongs to no installed pack")
        }

        let journal = try journalEntries()
        let journalStaging = Set(journal.compactMap(\.stagingName))
        for leftover in leftovers {
            switch leftover.kind {
            case .install, .retire:
                report.add(.stagingLeftover, pack: nil, object: leftover.name, "staging/\(leftover.name) is left by a writer that died")
            case .other where leftover.name.hasSuffix(JournalEntry.stagingSuffix):
                if !journalStaging.contains(leftover.name) {
                    report.add(.journalOrphanDownload, pack: nil, object: leftover.name, "staging/\(leftover.name) is a download no journal entry owns")
                }
            case .other:
                report.add(.stagingUnknown, pack: nil, object: leftover.name, "staging/\(leftover.name) is not AssetPacks' own")
            }
        }
        let stagingNames = Set(try listing(container.stagingPath))
        for entry in journal {
            if let staging = entry.stagingName, !stagingNames.contains(staging) {
                report.add(.journalMissingStaging, pack: entry.pack, object: staging, "the download of '\(entry.pack)' lost its partial file; it restarts from zero")
            }
        }
        for name in try listing(container.cachePath).sorted() {
            report.add(.cacheLeftover, pack: nil, object: name, "cache/\(name) is left over")
        }

        let installed = Set(try readPackRecords().records.map(\.id)).union(damagedRecords)
        for name in try listing(container.packLocksPath).sorted() where name.hasSuffix(".lock") {
            let id = String(name.dropLast(5))
            guard !installed.contains(id), try !isHeld(container.packLocksPath + "/" + name) else { continue }
            report.add(.lockOrphan, pack: id, object: name, "locks/packs/\(name) belongs to no installed pack")
        }
        // Before locks/packs/, pack locks lay beside the container's and the
        // daemon's; nothing takes them any more. One still held belongs to a
        // writer of that older version at work, and is left alone.
        let ownLocks: Set<String> = [container.containerLockPath, container.daemonLockPath]
        for name in try listing(container.locksPath).sorted() where name.hasSuffix(".lock") {
            let path = container.locksPath + "/" + name
            guard !ownLocks.contains(path), try !isHeld(path) else { continue }
            report.add(.lockOldLayout, pack: String(name.dropLast(5)), object: name,
                       "locks/\(name) is a pack lock of the layout before locks/packs/; nothing uses it")
        }

        for reader in environment.readers() where !reader.isProcessAlive {
            report.add(.staleReader, pack: nil, object: "pid \(reader.pid)", "reader slot of dead process \(reader.pid)" +
                       (reader.transactionID.map { " holds snapshot \($0)" } ?? ""))
        }
    }

    // What verify looks at, failing rather than guessing: a directory it
    // cannot read is not an empty one, a file it cannot stat is not a
    // missing one. Only `ENOENT` means absent.

    /// The names in directory `path`; none when it does not exist.
    func listing(_ path: String) throws(StoreError) -> [String] {
        do { return try FileSystem.contents(of: path) } catch { throw .system(error) }
    }

    /// Whether something is at `path`.
    private func exists(_ path: String) throws(StoreError) -> Bool {
        do { return try FileDescriptor.status(of: path) != nil } catch { throw .system(error) }
    }

    /// Whether another writer holds the lock file at `path` (`false` when it
    /// is gone).
    private func isHeld(_ path: String) throws(StoreError) -> Bool {
        do { return try FileLock.isHeld(path: path) } catch { throw .system(error) }
    }
}
