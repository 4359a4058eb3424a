import Foundation
import AssetArchive
import AssetIndex
import AssetSystem

extension AssetStore {
    /// Plans (and with `carryOut`, performs) the repairs for `report`'s
    /// findings. Nothing installed and intact is touched; a file is deleted
    /// only when it is provably garbage (a dead writer's twin, a partial
    /// download nobody owns, the cache, a pack lock nobody uses); anything
    /// else that must go is moved to `quarantine/`.
    func repair(_ report: VerificationReport, verdicts: [PackVerdict], carryOut: Bool) throws(StoreError) -> [VerificationReport.Repair] {
        var plan = RepairPlan(carryOut: carryOut)
        try planIndexUpkeep(report, into: &plan)
        try planStagingCleanup(report, into: &plan)
        try planDownloadsAndLocks(report, into: &plan)
        let packsChanged = try planPackRepairs(report, verdicts: verdicts, into: &plan)
        let recordsChanged = try planRecordRepairs(report, into: &plan)
        try planPathIndexRebuild(report, indexChanged: packsChanged || recordsChanged, into: &plan)
        try planOrphanArchives(report, into: &plan)
        try planSymlinks(report, into: &plan)
        if carryOut && !plan.repairs.isEmpty { try syncRepairedLayout() }
        return plan.repairs
    }

    /// Flushes the container directory and every directory of the layout
    /// that is open, so that the unlinks and new names of the repairs just
    /// made survive a power loss: verify after one finds what repair left.
    /// (The index's changes are durable at each commit; a quarantine flushes
    /// its own move before the index forgets the file.)
    private func syncRepairedLayout() throws(StoreError) {
        for directory in [layout.root] + layout.directories where directory.openAnchor != nil {
            try directory.sync()
        }
    }

    /// A missing schema record, stale reader slots.
    private func planIndexUpkeep(_ report: VerificationReport, into plan: inout RepairPlan) throws(StoreError) {
        let codes = report.codes
        let schemaCodes = [FindingCode.schemaMissing, .indexUnfinished].filter(codes.contains)
        if !schemaCodes.isEmpty {
            try plan.act(schemaCodes, pack: nil, "write the schema version record") { () throws(StoreError) in
                try writeSchemaRecord()
            }
        }
        if codes.contains(.staleReader) {
            try plan.act([.staleReader], pack: nil, "clear \(report.findings(.staleReader).count) stale reader slot(s)") { () throws(StoreError) in
                _ = try indexCall { () throws(LMDBError) in try environment.clearStaleReaders() }
            }
        }
    }

    /// Dead writers' twins and what they explain, unknown staging files,
    /// partial downloads nobody owns, the cache.
    private func planStagingCleanup(_ report: VerificationReport, into plan: inout RepairPlan) throws(StoreError) {
        let codes = report.codes
        if codes.contains(.stagingLeftover) || codes.contains(.archiveUncommitted) {
            let names = (report.findings(.stagingLeftover) + report.findings(.archiveUncommitted)).compactMap(\.object)
            try plan.act([.stagingLeftover, .archiveUncommitted], pack: nil, "remove what dead writers left: \(names.joined(separator: ", "))") { () throws(StoreError) in
                try reclaimLeftovers()
            }
        }
        for f in report.findings(.stagingUnknown) {
            guard let name = f.object else { continue }
            try plan.act([.stagingUnknown], pack: nil, "quarantine staging/\(name)") { () throws(StoreError) in
                try quarantine(name, in: layout.staging)
            }
        }
        for f in report.findings(.journalOrphanDownload) + report.findings(.cacheLeftover) {
            guard let name = f.object else { continue }
            let directory = f.code == .cacheLeftover ? layout.cache : layout.staging
            try plan.act([f.code], pack: nil, "delete \(directory.name)/\(name)") { () throws(StoreError) in
                do throws(Errno) { try directory.unlink(name) } catch where error == .noSuchFile {} catch { throw .system(error) }
            }
        }
    }

    /// Journal entries whose partial download is gone; lock files of
    /// absent packs.
    private func planDownloadsAndLocks(_ report: VerificationReport, into plan: inout RepairPlan) throws(StoreError) {
        for f in report.findings(.journalMissingStaging) {
            guard let pack = f.pack else { continue }
            try plan.act([.journalMissingStaging], pack: pack, "restart the download of '\(pack)' from zero") { () throws(StoreError) in
                try update { (txn) throws(StoreError) in
                    guard let bytes = try indexCall({ () throws(LMDBError) in try txn.get(journal, key: pack) }),
                          var entry = JournalEntry(pack: pack, decoding: bytes) else { return }
                    entry.stagingName = nil
                    try indexCall { () throws(LMDBError) in try txn.put(journal, key: pack, value: entry.encoded) }
                }
            }
        }
        for f in report.findings(.lockOrphan) + report.findings(.lockOldLayout) {
            guard let name = f.object else { continue }
            let directory = f.code == .lockOrphan ? layout.packLocks : layout.locks
            try plan.act([f.code], pack: f.pack, "delete \(directory.name)/\(name)") { () throws(StoreError) in
                do throws(Errno) {
                    let fd = try directory.openFile(name, .readWrite)
                    // Taken meanwhile: a writer uses it after all.
                    guard try FileLock.tryLock(fd) else { return }
                    try directory.unlink(name)
                } catch where error.provesAbsence {
                } catch where error == .tooManySymbolicLinkLevels {
                    // A symlink now (O_NOFOLLOW): its layout.symlink repair moves it.
                } catch {
                    throw .system(error.path == nil ? error.with(operation: error.operation, path: directory.path(of: name)) : error)
                }
            }
        }
    }

    /// Each damaged pack: quarantined and dropped from the index when its
    /// archive is damaged, re-indexed from it when only the index is.
    /// Returns whether any pack's index entries change.
    private func planPackRepairs(
        _ report: VerificationReport, verdicts: [PackVerdict], into plan: inout RepairPlan
    ) throws(StoreError) -> Bool {
        var indexChanged = false
        for verdict in verdicts {
            let id = verdict.record.id
            var damaged = verdict.archiveDamaged
            if !damaged && verdict.indexDamaged && !verdict.archiveHashChecked {
                // Re-index only from an archive proven intact.
                damaged = !(try archiveMatchesRecord(verdict.record))
            }
            if damaged {
                let redownload = verdict.record.catalogVersion != nil || verdict.record.source.contains("://")
                try plan.act(report.codes(ofPack: id), pack: id, "quarantine packs/\(verdict.record.archiveName), remove '\(id)' from the index" +
                             (redownload ? " and mark it for re-download" : "")) { () throws(StoreError) in
                    try quarantine(verdict.record.archiveName, in: layout.packs)
                    try deindex(id, redownloadFrom: redownload ? verdict.record : nil)
                }
                indexChanged = true
            } else if verdict.indexDamaged {
                try plan.act(report.codes(ofPack: id), pack: id, "re-index '\(id)' from its intact archive") { () throws(StoreError) in
                    try reindex(verdict.record)
                }
                indexChanged = true
            }
        }
        return indexChanged
    }

    /// Damaged pack records, member records of packs that have none.
    /// Returns whether any were found (and so the index changes).
    private func planRecordRepairs(_ report: VerificationReport, into plan: inout RepairPlan) throws(StoreError) -> Bool {
        var indexChanged = false
        for f in report.findings(.packRecordDamaged) {
            guard let id = f.pack else { continue }
            try plan.act([.packRecordDamaged], pack: id, "rebuild the record of '\(id)' from its archive, or remove it") { () throws(StoreError) in
                try rebuildRecord(id)
            }
            indexChanged = true
        }
        let orphanPacks = Set(report.findings(.memberOrphan).compactMap(\.pack)).sorted()
        for pack in orphanPacks {
            try plan.act([.memberOrphan], pack: pack, "delete the member records of '\(pack)'") { () throws(StoreError) in
                try update { (txn) throws(StoreError) in
                    _ = try indexCall { () throws(LMDBError) in try txn.deleteAll(members, prefix: IndexSchema.memberPrefix(pack: pack)) }
                }
            }
            indexChanged = true
        }
        return indexChanged
    }

    /// The path index, rebuilt when it is wrong or the member records changed.
    private func planPathIndexRebuild(
        _ report: VerificationReport, indexChanged: Bool, into plan: inout RepairPlan
    ) throws(StoreError) {
        let codes = report.codes
        let pathCodes = [FindingCode.pathsMismatch, .pathsMissing, .pathsExtra].filter(codes.contains)
        guard indexChanged || !pathCodes.isEmpty else { return }
        try plan.act(pathCodes, pack: nil, "rebuild the path index from the member records") { () throws(StoreError) in
            try rebuildPathIndex()
        }
    }

    /// Files in `packs/` that nothing explains.
    private func planOrphanArchives(_ report: VerificationReport, into plan: inout RepairPlan) throws(StoreError) {
        for f in report.findings(.archiveOrphan) {
            guard let name = f.object else { continue }
            try plan.act([.archiveOrphan], pack: f.pack, "quarantine packs/\(name)") { () throws(StoreError) in
                try quarantine(name, in: layout.packs)
            }
        }
    }

    /// Symlinks anywhere in the container: each is moved to `quarantine/`
    /// (the link itself; its target is never touched), and a directory of
    /// the layout that was a link is made again, empty, with the layout's
    /// directories inside it (`locks/packs/`, `downloads/slots/`). The
    /// directory holding a link is reached from the container's descriptor
    /// component by component, never through a link.
    private func planSymlinks(_ report: VerificationReport, into plan: inout RepairPlan) throws(StoreError) {
        for f in report.findings(.layoutSymlink) {
            guard let object = f.object else { continue }
            let components = object.split(separator: "/").map(String.init)
            guard let name = components.last else { continue }
            let directory = layout.directories.first { $0.name == object }
            try plan.act([.layoutSymlink], pack: nil, "quarantine the symbolic link \(object)" +
                         (directory == nil ? "" : " and make \(object)/ again")) { () throws(StoreError) in
                // A parent that is gone or a link itself now: nothing to move here.
                guard let parent = try reachDirectory(components.dropLast()) else { return }
                try quarantine(name, in: parent)
                guard let directory, let anchor = parent.openAnchor else { return }
                do throws(Errno) {
                    try FileSystem.createDirectory(name, relativeTo: anchor)
                    let made = try FileDescriptor.open(name, [.readOnly, .directory, .noFollow], relativeTo: anchor)
                    for inside in layout.directories where inside.parent === directory {
                        try FileSystem.createDirectory(inside.leaf, relativeTo: .descriptor(made.rawValue))
                    }
                    try made.sync()
                } catch {
                    throw .system(error.with(operation: error.operation, path: parent.path(of: name)))
                }
            }
        }
    }

    /// The directory at `components` below the container, opened from the
    /// container's descriptor one component at a time without following a
    /// link; `nil` when one is missing or a link.
    private func reachDirectory(_ components: ArraySlice<String>) throws(StoreError) -> LayoutDirectory? {
        var directory = layout.root
        for component in components {
            do { directory = try directory.subdirectory(component, creating: false) } catch {
                if case .symlinkInContainer = error { return nil }
                throw error
            }
            if directory.isMissing { return nil }
        }
        return directory
    }

    /// Moves `name` in `directory` into `quarantine/` under its name and a
    /// timestamp, relative to the directories' descriptors: a symlink is
    /// moved itself, never followed. A missing file is fine (nothing to move),
    /// and so is a `directory` that is a symlink: nothing is moved out of
    /// where it points (its own `layout.symlink` repair moves the link).
    ///
    /// Durable when it returns, in the order that never loses the file to
    /// a power loss: `quarantine/` into the container (when made here),
    /// then the new name (`quarantine/` flushed), then the old name's
    /// removal (`directory` flushed) — before the caller drops the file
    /// from the index.
    ///
    /// - Throws: `.symlinkInContainer` when `quarantine/` is a symlink, `.system`.
    func quarantine(_ name: String, in directory: LayoutDirectory) throws(StoreError) {
        guard let from = directory.openAnchor else { return }
        let root = try layout.root.anchor()
        let quarantine: FileDescriptor
        let made: Bool
        do {
            made = try FileSystem.createDirectory("quarantine", relativeTo: root)
            quarantine = try FileDescriptor.open("quarantine", [.readOnly, .directory, .noFollow], relativeTo: root)
        } catch {
            throw LayoutDirectory.storeError(error, path: layout.root.path(of: "quarantine"))
        }
        if made { try layout.root.sync() }
        do {
            let target = name + "." + String(Int(Date().timeIntervalSince1970))
            try FileSystem.rename(name, to: target, relativeTo: from, destinationRelativeTo: .descriptor(quarantine.rawValue), noReplace: true)
        } catch where error == .noSuchFile {
            return
        } catch {
            throw .system(error.with(operation: error.operation, path: directory.path(of: name)))
        }
        do { try quarantine.sync() } catch { throw .system(error.with(operation: "fsync", path: layout.root.path(of: "quarantine"))) }
        try directory.sync()
    }

    /// Removes pack `id` from the index; with a record, leaves a journal entry
    /// asking for it to be downloaded again from where it came.
    private func deindex(_ id: String, redownloadFrom record: PackRecord?) throws(StoreError) {
        try update { (txn) throws(StoreError) in
            try Self.writeIndex(removing: id, txn: txn, packs: packs, members: members, paths: paths)
            try indexCall { () throws(LMDBError) in _ = try txn.delete(packs, key: id) }
            if let record {
                let entry = JournalEntry(pack: id, state: .redownload, url: record.source, catalogVersion: record.catalogVersion,
                                         stagingName: nil, expectedSize: record.archiveSize, sha256: record.sha256)
                try indexCall { () throws(LMDBError) in try txn.put(journal, key: id, value: entry.encoded) }
            }
        }
        archives.evict(pack: id)
        removeLockFile(of: id)
    }

    /// Whether the archive of `record` is there with the recorded size and
    /// SHA-256.
    ///
    /// - Throws: `.system` when it cannot be looked at (`EMFILE`, `ENOMEM`,
    ///   …), `.symlinkInContainer` when a symlink is where it belongs: that
    ///   proves nothing about it.
    private func archiveMatchesRecord(_ record: PackRecord) throws(StoreError) -> Bool {
        let path = layout.packs.path(of: record.archiveName)
        do throws(Errno) {
            let fd = try layout.packs.openFile(record.archiveName)
            let status: FileStatus
            do { status = try fd.status() } catch { throw error.with(operation: "fstat", path: path) }
            guard status.size == Int64(record.archiveSize) else { return false }
            let region: MappedRegion
            do { region = try MappedRegion(mapping: fd, count: Int(status.size)) } catch { throw error.with(operation: "mmap", path: path) }
            return SHA256.hash(region.bytes) == record.sha256
        } catch where error.provesAbsence {
            return false
        } catch {
            // ELOOP (a symlink where the archive belongs) included: it
            // proves nothing of the archive, so nothing is re-indexed or
            // dropped because of it.
            throw LayoutDirectory.storeError(error, path: error.path ?? path)
        }
    }

    /// Rewrites pack `record.id`'s member records from its archive.
    private func reindex(_ record: PackRecord) throws(StoreError) {
        let fd: FileDescriptor
        do { fd = try layout.packs.openFile(record.archiveName) } catch { throw LayoutDirectory.storeError(error, path: error.path ?? "") }
        let pack = try PackFile.validate(descriptor: fd, path: layout.packs.path(of: record.archiveName))
        var fixed = record
        fixed.memberCount = UInt64(pack.archive.entries.count)
        fixed.totalSize = pack.totalSize
        try update(reserving: Self.indexGrowth(of: fixed.id, entries: pack.archive.entries)) { (txn) throws(StoreError) in
            // The members carry this archive's key already: writeIndex could
            // not tell a stale one from a new one, so all go first.
            try Self.writeIndex(removing: fixed.id, txn: txn, packs: packs, members: members, paths: paths)
            try Self.writeIndex(of: fixed, entries: pack.archive.entries, txn: txn,
                                packs: packs, members: members, paths: paths)
        }
    }

    /// Rebuilds a damaged pack record from the one intact archive in
    /// `packs/` named for the pack; without one, removes the pack from the
    /// index and quarantines its candidates.
    private func rebuildRecord(_ id: String) throws(StoreError) {
        var candidates: [String] = []
        for name in try layout.packs.listing().sorted() where IndexSchema.parseArchiveName(name)?.pack == id {
            // Gone meanwhile, or a symlink (layout.symlink only): not a candidate.
            guard let status = try layout.packs.linkStatus(of: name), !status.isSymbolicLink else { continue }
            candidates.append(name)
        }
        if candidates.count == 1, let key = IndexSchema.parseArchiveName(candidates[0])?.archiveKey,
           let pack = try intactPack(named: candidates[0]),
           pack.description == nil || pack.description?.id == id {
            let record = Self.record(of: pack, id: id, archiveKey: key, generation: 1, catalogVersion: nil,
                                     source: container.packsPath + "/" + candidates[0])
            try update(reserving: Self.indexGrowth(of: id, entries: pack.archive.entries)) { (txn) throws(StoreError) in
                // Members left under the damaged record may carry this key.
                try Self.writeIndex(removing: id, txn: txn, packs: packs, members: members, paths: paths)
                try Self.writeIndex(of: record, entries: pack.archive.entries, txn: txn,
                                    packs: packs, members: members, paths: paths)
            }
            return
        }
        for name in candidates { try quarantine(name, in: layout.packs) }
        try deindex(id, redownloadFrom: nil)
    }

    /// The pack file `name` in `packs/` when it validates; `nil` when it is
    /// proven damaged (or gone).
    ///
    /// - Throws: what says only that it could not be checked: `.system`,
    ///   `.archive(.io)`, `.symlinkInContainer`.
    private func intactPack(named name: String) throws(StoreError) -> PackFile? {
        let path = layout.packs.path(of: name)
        let fd: FileDescriptor
        do { fd = try layout.packs.openFile(name) } catch where error.provesAbsence { return nil } catch {
            throw LayoutDirectory.storeError(error, path: path)
        }
        do {
            return try PackFile.validate(descriptor: fd, path: path)
        } catch {
            switch error {
            case .system(let e) where e.provesAbsence: return nil
            case .system: throw error
            case .archive(let e) where !e.provesDamage: throw error
            default: return nil
            }
        }
    }

    /// Recomputes the whole path index from the member records.
    private func rebuildPathIndex() throws(StoreError) {
        try update { (txn) throws(StoreError) in
            var holders: [[UInt8]: [String]] = [:]
            try indexCall { () throws(LMDBError) in
                try txn.forEach(members) { key, _ in
                    guard let zero = key.firstIndex(of: 0) else { return true }
                    holders[Array(key[(zero + 1)...]), default: []].append(String(decoding: key[..<zero], as: UTF8.self))
                    return true
                }
                try txn.drop(paths)
            }
            for (path, ids) in holders {
                let value = Array(ids.sorted().joined(separator: "\0").utf8)
                try indexCall { () throws(LMDBError) in try txn.put(paths, key: path, value: value) }
            }
        }
    }
}

/// Collects repairs, carrying each out unless this is a dry run.
struct RepairPlan {
    let carryOut: Bool
    var repairs: [VerificationReport.Repair] = []

    mutating func act(_ codes: [FindingCode], pack: String?, _ action: String, _ body: () throws(StoreError) -> Void) throws(StoreError) {
        if carryOut { try body() }
        repairs.append(VerificationReport.Repair(codes: codes, pack: pack, action: action, done: carryOut))
    }
}

private extension VerificationReport {
    /// The codes of every finding.
    var codes: Set<FindingCode> { Set(findings.map(\.code)) }

    /// The findings with `code`, in the order found.
    func findings(_ code: FindingCode) -> [Finding] { findings.filter { $0.code == code } }

    /// The codes of pack `id`'s findings, sorted.
    func codes(ofPack id: String) -> [FindingCode] {
        Set(findings.filter { $0.pack == id }.map(\.code)).sorted { $0.rawValue < $1.rawValue }
    }
}
