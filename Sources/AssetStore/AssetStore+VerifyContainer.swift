import AssetIndex
import AssetSystem

extension AssetStore {
    /// Whether the index holds no record at all — no pack, member, path,
    /// journal or meta record: a new index before its first record (the
    /// schema version), as a creation cut short leaves it.
    func indexIsEmpty(_ txn: borrowing ReadTransaction) throws(StoreError) -> Bool {
        var empty = true
        try indexCall { () throws(LMDBError) in
            for db in [meta, packs, members, paths, journal] where empty {
                try txn.forEach(db) { _, _ in empty = false; return false }
            }
        }
        return empty
    }

    /// The path index agrees with the member records; every member record
    /// belongs to an installed pack.
    func checkIndexConsistency(records: [PackRecord], txn: borrowing ReadTransaction, report: inout VerificationReport) throws(StoreError) {
        var ids = Set(records.map(\.id))
        try indexCall { () throws(LMDBError) in
            try txn.forEach(packs) { key, _ in ids.insert(String(decoding: key, as: UTF8.self)); return true }
        }
        // A healthy index is proved without a table of every path (which
        // made verify of a million members a dozen times slower per member
        // than of a hundred thousand): every pair the path index lists has
        // its member record, each path's list is sorted and distinct, and
        // the pairs are as many as the installed packs' records — so no
        // record is left out. Anything else is looked at the long way,
        // which names every finding.
        var installedMembers = 0
        var orphans = false
        var walk = IndexWalk()
        try indexCall { () throws(LMDBError) in
            var pack: [UInt8] = []
            var installed = false
            try txn.forEach(members) { key, _ in
                walk.visited(in: txn)
                guard let zero = key.firstIndex(of: 0) else { return true }
                if !(pack.count == zero && pack.withUnsafeBytes({ $0.elementsEqual(key[..<zero]) })) {
                    pack = Array(key[..<zero])
                    installed = ids.contains(String(decoding: pack, as: UTF8.self))
                }
                if installed { installedMembers += 1 } else { orphans = true }
                return true
            }
        }
        if !orphans, try pathIndexListsExactly(installedMembers, txn: txn) { return }
        try checkIndexConsistencyInFull(ids: ids, txn: txn, report: &report)
    }

    /// Whether every pair in `paths` names a member record, every list is
    /// sorted with no repeats, and there are `count` pairs in all.
    private func pathIndexListsExactly(_ count: Int, txn: borrowing ReadTransaction) throws(StoreError) -> Bool {
        var pairs = 0
        var exact = true
        var key: [UInt8] = []
        var walk = IndexWalk()
        try indexCall { () throws(LMDBError) in
            try txn.forEach(paths) { path, value in
                walk.visited(in: txn)
                var previous: UnsafeRawBufferPointer.SubSequence?
                for id in value.split(separator: 0, omittingEmptySubsequences: false) {
                    if let previous, !previous.lexicographicallyPrecedes(id) { exact = false; return false }
                    previous = id
                    key.removeAll(keepingCapacity: true)
                    key.append(contentsOf: id)
                    key.append(0)
                    key.append(contentsOf: path)
                    // A failed look-up proves nothing here: the long way asks again.
                    guard id.count > 0, (try? txn.get(members, key: key)) != nil else { exact = false; return false }
                    pairs += 1
                }
                return true
            }
        }
        return exact && pairs == count
    }

    /// ``checkIndexConsistency(records:txn:report:)`` with a table of every
    /// path: each finding named.
    private func checkIndexConsistencyInFull(ids: Set<String>, txn: borrowing ReadTransaction, report: inout VerificationReport) throws(StoreError) {
        var expected: [[UInt8]: [String]] = [:]
        var walk = IndexWalk()
        try indexCall { () throws(LMDBError) in
            try txn.forEach(members) { key, _ in
                walk.visited(in: txn)
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
                walk.visited(in: txn)
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
    /// reader slots; symlinks anywhere in the container (each one only as `layout.symlink`).
    /// An archive of a pack whose record is damaged is that finding's
    /// object (repair rebuilds the record from it), not an orphan.
    func checkFiles(report: inout VerificationReport, damagedRecords: Set<String>) throws(StoreError) {
        // Listed before the records are read, so a version committed while
        // we look is found in the records (see docs/coordination.md).
        let archiveNames = try layout.packs.listing().sorted()
        // A file reaches packs/ only after its twin has its staging name, so
        // one listing taken after packs/'s shows every live writer's twin.
        let twinNames = Set(try layout.staging.listing())
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
            // Gone meanwhile, or a symlink (layout.symlink only): not an orphan.
            guard let status = try layout.packs.linkStatus(of: name), !status.isSymbolicLink else { continue }
            if try readPackRecords().records.contains(where: { $0.archiveName == name }) { continue }
            report.add(.archiveOrphan, pack: IndexSchema.parseArchiveName(name)?.pack, object: name, "packs/\(name) belongs to no installed pack")
        }

        let journal = try journalEntries()
        let journalStaging = Set(journal.compactMap(\.stagingName))
        for leftover in leftovers {
            switch leftover.kind {
            case .install, .retire:
                report.add(.stagingLeftover, pack: nil, object: leftover.name, "staging/\(leftover.name) is left by a writer that died")
            case .adopted:
                report.add(.stagingLeftover, pack: nil, object: leftover.name,
                           "staging/\(leftover.name) is a second name of an installed archive, left by a writer that died")
            case .orphanRanges:
                report.add(.stagingLeftover, pack: nil, object: leftover.name, "staging/\(leftover.name) lists the ranges of a download that is over")
            case .downloadRanges:
                break
            case .other where leftover.name.hasSuffix(JournalEntry.stagingSuffix):
                if !journalStaging.contains(leftover.name) {
                    report.add(.journalOrphanDownload, pack: nil, object: leftover.name, "staging/\(leftover.name) is a download no journal entry owns")
                }
            case .other:
                report.add(.stagingUnknown, pack: nil, object: leftover.name, "staging/\(leftover.name) is not AssetPacks' own")
            }
        }
        let stagingNames = Set(try layout.staging.listing())
        for entry in journal {
            if let staging = entry.stagingName, !stagingNames.contains(staging) {
                report.add(.journalMissingStaging, pack: entry.pack, object: staging, "the download of '\(entry.pack)' lost its partial file; it restarts from zero")
            }
        }
        for name in try layout.cache.listing().sorted() {
            // Gone meanwhile, or a symlink (layout.symlink only).
            guard let status = try layout.cache.linkStatus(of: name), !status.isSymbolicLink else { continue }
            report.add(.cacheLeftover, pack: nil, object: name, "cache/\(name) is left over")
        }

        let installed = Set(try readPackRecords().records.map(\.id)).union(damagedRecords)
        for name in try layout.packLocks.listing().sorted() where name.hasSuffix(".lock") {
            let id = String(name.dropLast(5))
            guard !installed.contains(id), try isUnheldLock(name, in: layout.packLocks) else { continue }
            report.add(.lockOrphan, pack: id, object: name, "locks/packs/\(name) belongs to no installed pack")
        }
        // Before locks/packs/, pack locks lay beside the container's and the
        // daemon's; nothing takes them any more. One still held belongs to a
        // writer of that older version at work, and is left alone.
        let ownLocks: Set<String> = ["container.lock", "daemon.lock"]
        for name in try layout.locks.listing().sorted() where name.hasSuffix(".lock") {
            guard !ownLocks.contains(name), try isUnheldLock(name, in: layout.locks) else { continue }
            report.add(.lockOldLayout, pack: String(name.dropLast(5)), object: name,
                       "locks/\(name) is a pack lock of the layout before locks/packs/; nothing uses it")
        }

        try checkSymlinks(report: &report)

        for reader in environment.readers() where !reader.isProcessAlive {
            report.add(.staleReader, pack: nil, object: "pid \(reader.pid)", "reader slot of dead process \(reader.pid)" +
                       (reader.transactionID.map { " holds snapshot \($0)" } ?? ""))
        }
    }

    /// Whether `name` in `directory` is a lock file no one holds: `false`
    /// when it is held, gone meanwhile (`ENOENT`), or a symlink (never
    /// opened; it is `layout.symlink` only).
    ///
    /// - Throws: `.system` when the lock cannot be probed for another reason.
    private func isUnheldLock(_ name: String, in directory: LayoutDirectory) throws(StoreError) -> Bool {
        do {
            guard let status = try directory.linkStatus(of: name), !status.isSymbolicLink else { return false }
            return try !directory.isHeld(name)
        } catch {
            guard case .symlinkInContainer = error else { throw error }
            return false
        }
    }

    /// Every symlink anywhere in the container, as `layout.symlink` with the
    /// path relative to the container as its object: where the layout has a
    /// directory, in one of its directories, at its top (`daemon.sock`,
    /// `trust`) and in any directory below (`catalog/<hash>/etag`,
    /// `trust/sources.json`). The walk opens each directory relative to its
    /// parent's descriptor with `O_NOFOLLOW`, so it never enters a link;
    /// `quarantine/`, where repair moves what it takes away (links
    /// included), is not walked, and nothing deeper than
    /// ``symlinkWalkDepth`` directories below the container is.
    ///
    /// - Throws: `.system` when a directory cannot be read or a name in it
    ///   cannot be looked at for a reason other than `ENOENT`.
    func checkSymlinks(report: inout VerificationReport) throws(StoreError) {
        for directory in layout.directories where directory.isSymlinkNow {
            reportSymlink(directory.name, directory: true, into: &report)
        }
        try walkForSymlinks(layout.root, depth: 0, report: &report)
    }

    /// How many directories below the container the symlink walk goes.
    static let symlinkWalkDepth = 8

    /// The directory `quarantine/`, which the walk leaves alone.
    static let quarantineName = "quarantine"

    private func walkForSymlinks(_ directory: LayoutDirectory, depth: Int, report: inout VerificationReport) throws(StoreError) {
        for name in try directory.listing().sorted() {
            guard let status = try directory.linkStatus(of: name) else { continue }
            let object = directory.name.isEmpty ? name : directory.name + "/" + name
            if status.isSymbolicLink {
                reportSymlink(object, directory: layout.directories.contains { $0.name == object }, into: &report)
            } else if status.isDirectory, depth < Self.symlinkWalkDepth, !(directory === layout.root && name == Self.quarantineName) {
                let below: LayoutDirectory
                do { below = try directory.subdirectory(name, creating: false) } catch {
                    // A link put there since the listing: reported when seen again.
                    if case .symlinkInContainer = error { continue }
                    throw error
                }
                try walkForSymlinks(below, depth: depth + 1, report: &report)
            }
        }
    }

    /// Adds `layout.symlink` for `object` (relative to the container) unless
    /// it is already reported: a pack's check reports its archive's link
    /// before ``checkSymlinks(report:)`` comes to it.
    func reportSymlink(_ object: String, directory: Bool, into report: inout VerificationReport) {
        guard !report.findings.contains(where: { $0.code == .layoutSymlink && $0.object == object }) else { return }
        report.add(.layoutSymlink, pack: nil, object: object,
                   "\(object)\(directory ? "/" : "") is a symbolic link; the container does not follow it")
    }
}
