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
        let codes = Set(report.findings.map(\.code))
        func objects(_ code: FindingCode) -> [VerificationReport.Finding] { report.findings.filter { $0.code == code } }

        if codes.contains(.schemaMissing) {
            try plan.act([.schemaMissing], pack: nil, "write the schema version record") { () throws(StoreError) in
                try update { (txn) throws(StoreError) in
                    var v = IndexSchema.version.littleEndian
                    try indexCall { () throws(LMDBError) in try txn.put(meta, key: IndexSchema.schemaKey, value: withUnsafeBytes(of: &v) { Array($0) }) }
                }
            }
        }
        if codes.contains(.staleReader) {
            try plan.act([.staleReader], pack: nil, "clear \(objects(.staleReader).count) stale reader slot(s)") { () throws(StoreError) in
                _ = try indexCall { () throws(LMDBError) in try environment.clearStaleReaders() }
            }
        }
        if codes.contains(.stagingLeftover) || codes.contains(.archiveUncommitted) {
            let names = (objects(.stagingLeftover) + objects(.archiveUncommitted)).compactMap(\.object)
            try plan.act([.stagingLeftover, .archiveUncommitted], pack: nil, "remove what dead writers left: \(names.joined(separator: ", "))") { () throws(StoreError) in
                try reclaimLeftovers()
            }
        }
        for f in objects(.stagingUnknown) {
            guard let name = f.object else { continue }
            try plan.act([.stagingUnknown], pack: nil, "quarantine staging/\(name)") { () throws(StoreError) in
                try quarantine(container.stagingPath + "/" + name)
            }
        }
        for f in objects(.journalOrphanDownload) + objects(.cacheLeftover) {
            guard let name = f.object else { continue }
            let path = (f.code == .cacheLeftover ? container.cachePath : container.stagingPath) + "/" + name
            try plan.act([f.code], pack: nil, "delete \(path.dropFirst(container.path.count + 1))") { () throws(StoreError) in
                do throws(Errno) { try FileSystem.unlink(path) } catch where error == .noSuchFile {} catch { throw .system(error) }
            }
        }
        for f in objects(.journalMissingStaging) {
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
        for f in objects(.lockOrphan) + objects(.lockOldLayout) {
            guard let name = f.object else { continue }
            let path = (f.code == .lockOrphan ? container.packLocksPath : container.locksPath) + "/" + name
            try plan.act([f.code], pack: f.pack, "delete \(path.dropFirst(container.path.count + 1))") { () throws(StoreError) in
                guard let fd = try? FileDescriptor.open(path, .readWrite), (try? FileLock.tryLock(fd)) == true else { return }
                try? FileSystem.unlink(path)
            }
        }

        var indexChanged = false
        for verdict in verdicts {
            let id = verdict.record.id
            var damaged = verdict.archiveDamaged
            if !damaged && verdict.indexDamaged && !verdict.archiveHashChecked {
                // Re-index only from an archive proven intact.
                damaged = !(try archiveMatchesRecord(verdict.record))
            }
            if damaged {
                let packCodes = Set(report.findings.filter { $0.pack == id }.map(\.code)).sorted { $0.rawValue < $1.rawValue }
                let redownload = verdict.record.catalogVersion != nil || verdict.record.source.contains("://")
                try plan.act(packCodes, pack: id, "quarantine packs/\(verdict.record.archiveName), remove '\(id)' from the index" +
                             (redownload ? " and mark it for re-download" : "")) { () throws(StoreError) in
                    try quarantine(container.packsPath + "/" + verdict.record.archiveName)
                    try deindex(id, redownloadFrom: redownload ? verdict.record : nil)
                }
                indexChanged = true
            } else if verdict.indexDamaged {
                let packCodes = Set(report.findings.filter { $0.pack == id }.map(\.code)).sorted { $0.rawValue < $1.rawValue }
                try plan.act(packCodes, pack: id, "re-index '\(id)' from its intact archive") { () throws(StoreError) in
                    try reindex(verdict.record)
                }
                indexChanged = true
            }
        }
        for f in objects(.packRecordDamaged) {
            guard let id = f.pack else { continue }
            try plan.act([.packRecordDamaged], pack: id, "rebuild the record of '\(id)' from its archive, or remove it") { () throws(StoreError) in
                try rebuildRecord(id)
            }
            indexChanged = true
        }
        let orphanPacks = Set(objects(.memberOrphan).compactMap(\.pack)).sorted()
        for pack in orphanPacks {
            try plan.act([.memberOrphan], pack: pack, "delete the member records of '\(pack)'") { () throws(StoreError) in
                try update { (txn) throws(StoreError) in
                    _ = try indexCall { () throws(LMDBError) in try txn.deleteAll(members, prefix: IndexSchema.memberPrefix(pack: pack)) }
                }
            }
            indexChanged = true
        }
        if indexChanged || codes.contains(.pathsMismatch) || codes.contains(.pathsMissing) || codes.contains(.pathsExtra) {
            try plan.act([.pathsMismatch, .pathsMissing, .pathsExtra].filter(codes.contains), pack: nil, "rebuild the path index from the member records") { () throws(StoreError) in
                try rebuildPathIndex()
            }
        }
        for f in objects(.archiveOrphan) {
            guard let name = f.object else { continue }
            try plan.act([.archiveOrphan], pack: f.pack, "quarantine packs/\(name)") { () throws(StoreError) in
                try quarantine(container.packsPath + "/" + name)
            }
        }
        return plan.repairs
    }

    /// Moves `path` into `quarantine/` under its name and a timestamp. A
    /// missing file is fine (nothing to move).
    func quarantine(_ path: String) throws(StoreError) {
        let dir = container.path + "/quarantine"
        do {
            try FileSystem.createDirectories(dir)
            let name = (path as NSString).lastPathComponent + "." + String(Int(Date().timeIntervalSince1970))
            try FileSystem.rename(path, to: dir + "/" + name, noReplace: true)
        } catch where error == .noSuchFile {
        } catch {
            throw .system(error)
        }
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

    /// Whether the archive of `record` has the recorded size and SHA-256.
    private func archiveMatchesRecord(_ record: PackRecord) throws(StoreError) -> Bool {
        guard let fd = try? FileDescriptor.open(container.packsPath + "/" + record.archiveName),
              let status = try? fd.status(), status.size == Int64(record.archiveSize),
              let region = try? MappedRegion(mapping: fd, count: Int(status.size)) else { return false }
        return SHA256.hash(region.bytes) == record.sha256
    }

    /// Rewrites pack `record.id`'s member records from its archive.
    private func reindex(_ record: PackRecord) throws(StoreError) {
        let pack = try PackFile.validate(path: container.packsPath + "/" + record.archiveName)
        var fixed = record
        fixed.memberCount = UInt64(pack.archive.entries.count)
        fixed.totalSize = pack.totalSize
        try update { (txn) throws(StoreError) in
            try Self.writeIndex(of: fixed, entries: pack.archive.entries, replacing: record.id, txn: txn,
                                packs: packs, members: members, paths: paths)
        }
    }

    /// Rebuilds a damaged pack record from the one intact archive in
    /// `packs/` named for the pack; without one, removes the pack from the
    /// index and quarantines its candidates.
    private func rebuildRecord(_ id: String) throws(StoreError) {
        let candidates = FileSystem.names(in: container.packsPath).sorted().filter { IndexSchema.parseArchiveName($0)?.pack == id }
        if candidates.count == 1, let key = IndexSchema.parseArchiveName(candidates[0])?.archiveKey,
           let pack = try? PackFile.validate(path: container.packsPath + "/" + candidates[0]),
           pack.description == nil || pack.description?.id == id {
            let record = PackRecord(
                id: id, archiveKey: key, archiveSize: pack.size, sha256: pack.sha256, generation: 1, catalogVersion: nil,
                downloadPolicy: pack.description?.downloadPolicy ?? .onDemand, platforms: pack.description?.platforms ?? [],
                memberCount: UInt64(pack.archive.entries.count), totalSize: pack.totalSize,
                installDate: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000),
                source: container.packsPath + "/" + candidates[0])
            try update { (txn) throws(StoreError) in
                try Self.writeIndex(of: record, entries: pack.archive.entries, replacing: id, txn: txn,
                                    packs: packs, members: members, paths: paths)
            }
            return
        }
        for name in candidates { try quarantine(container.packsPath + "/" + name) }
        try deindex(id, redownloadFrom: nil)
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
