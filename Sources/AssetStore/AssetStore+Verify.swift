import Foundation
import AssetArchive
import AssetIndex
import AssetSystem

/// What verify learned about one pack, for repair to act on.
struct PackVerdict: Sendable {
    let record: PackRecord
    /// The archive is missing, the wrong size, unparseable, or fails its
    /// SHA-256 or a CRC: it must go to quarantine.
    var archiveDamaged = false
    /// The archive's SHA-256 was computed and matches the record.
    var archiveHashChecked = false
    /// The index's view of the pack disagrees with its archive.
    var indexDamaged = false
}

extension AssetStore {
    /// Checks the container, like fsck. Without `repair` nothing is changed:
    /// every finding carries a stable ``FindingCode``, its severity, and the
    /// pack and object it concerns. Errors found are confirmed by a second
    /// pass under the container lock, exclusive (waiting as ``lockWait``
    /// says, 10 s when that is the default; without the lock the first
    /// pass stands), so that a writer at work is not reported as damage. With `repair` (under the container lock,
    /// exclusive, so readers keep running and writers wait) it then fixes
    /// what can be fixed without losing installed data and verifies again;
    /// see ``VerificationReport/remaining``.
    ///
    /// Checks: the schema record; every pack record has its archive with the
    /// recorded size (and SHA-256 with `deep`); the archive parses (local
    /// headers against the central directory, bounds, overlap); every member
    /// record lies inside the archive and matches its entry, every entry has
    /// a record, and with `deep` every member's CRC-32 matches; the path index
    /// agrees with the member records; no member records without a pack; no
    /// files in `packs/` that no record names; leftovers in `staging/` and
    /// `cache/`; journal entries and partial downloads that lack each other;
    /// stale reader slots; lock files of packs that are not installed, and
    /// pack locks of the old layout (`locks/<pack>.lock`); symlinks anywhere
    /// in the layout, which nothing follows.
    ///
    /// Only proof is a finding: a file that is not there (`ENOENT`), bytes
    /// that fail a check (size, structure, CRC-32, SHA-256), a record that
    /// does not decode. Any other failure to look (`EMFILE`, `ENFILE`,
    /// `ENOMEM`, `EIO`, `EACCES`, `ENOTDIR`, …) proves nothing, so it ends
    /// the verification with that error, and repair changes nothing because
    /// of it. A symlink where a file or directory belongs (`ELOOP` under
    /// `O_NOFOLLOW`) is neither: it is a `layout.symlink` finding only.
    ///
    /// - Throws: `.assetPackNotFound` for a `packs` entry that is not
    ///   installed; `.index`/`.system`/`.archive(.io)` when the container
    ///   cannot be read — an operational error, never a finding.
    public func verify(options: VerificationOptions = VerificationOptions()) throws(StoreError) -> VerificationReport {
        var report = VerificationReport()
        guard options.repair && !options.dryRun else {
            var verdicts = try checkWithVerdicts(options, into: &report)
            if report.hasErrors, let lock = try confirmationLock() {
                // Confirm with no writer running: what an install or removal
                // in progress looked like to the first pass goes away.
                report = VerificationReport()
                verdicts = try checkWithVerdicts(options, into: &report)
                _ = consume lock
            }
            if options.repair { report.repairs = try repair(report, verdicts: verdicts, carryOut: false) }
            return report
        }
        let lock = try lockContainerForRepair()
        let verdicts = try checkWithVerdicts(options, into: &report)
        report.repairs = try repair(report, verdicts: verdicts, carryOut: true)
        var again = options
        again.repair = false
        again.progress = nil
        var second = VerificationReport()
        _ = try checkWithVerdicts(again, into: &second)
        report.remaining = second.findings
        _ = consume lock
        return report
    }

    /// The container lock, exclusive, for confirming a first pass's errors;
    /// `nil` when writers hold it past the wait, or when `locks/` or the lock
    /// file is a symlink (never opened; the first pass reports it as
    /// `layout.symlink`): then the first pass stands. Failing to take it for
    /// any other reason is an error.
    private func confirmationLock() throws(StoreError) -> FileLock? {
        if layout.locks.isSymlink { return nil }
        do {
            var wait = lockWait
            if case .whileHolderWorks = wait { wait = .seconds(10) }
            return try lockContainer(.exclusive, wait: wait)
        } catch {
            switch error {
            case .lockTimeout, .symlinkInContainer: return nil
            default: throw error
            }
        }
    }

    /// Runs every check into `report`; returns what it learned per pack.
    func checkWithVerdicts(_ options: VerificationOptions, into report: inout VerificationReport) throws(StoreError) -> [PackVerdict] {
        var verdicts: [PackVerdict] = []
        try snapshot { (txn) throws(StoreError) in
            if try Self.schemaVersion(in: txn, meta: meta) == nil {
                if try indexIsEmpty(txn) {
                    report.add(.indexUnfinished, pack: nil, object: "index",
                               "the index has no record at all, not even its schema version: its creation was cut short; the next writer finishes it")
                } else {
                    report.add(.schemaMissing, pack: nil, object: "index", "the index has no schema version record")
                }
            }
            var records: [PackRecord] = []
            try indexCall { () throws(LMDBError) in
                try txn.forEach(packs) { key, value in
                    let id = String(decoding: key, as: UTF8.self)
                    do throws(StoreError) { records.append(try PackRecord(id: id, decoding: value)) } catch {
                        report.add(.packRecordDamaged, pack: id, object: nil, error.description)
                    }
                    return true
                }
            }
            for id in options.packs where !records.contains(where: { $0.id == id }) {
                throw .notInstalled(id)
            }
            let selected = options.packs.isEmpty ? records : records.filter { options.packs.contains($0.id) }
            let total = options.deep ? selected.reduce(0) { $0 + $1.archiveSize } : selected.reduce(0) { $0 + $1.memberCount }
            var done: UInt64 = 0
            for record in selected {
                verdicts.append(try checkPack(record, txn: txn, deep: options.deep, report: &report))
                done += options.deep ? record.archiveSize : record.memberCount
                options.progress?(done, total)
            }
            if options.packs.isEmpty {
                try checkIndexConsistency(records: records, txn: txn, report: &report)
            }
        }
        if options.packs.isEmpty {
            let damagedRecords = Set(report.findings.filter { $0.code == .packRecordDamaged }.compactMap(\.pack))
            try checkFiles(report: &report, damagedRecords: damagedRecords)
        }
        return verdicts
    }

    private func checkPack(_ record: PackRecord, txn: borrowing ReadTransaction, deep: Bool, report: inout VerificationReport) throws(StoreError) -> PackVerdict {
        report.packsChecked += 1
        var verdict = PackVerdict(record: record)
        let id = record.id
        let path = container.packsPath + "/" + record.archiveName
        let fd: FileDescriptor
        do { fd = try layout.packs.openFile(record.archiveName) } catch where error.provesAbsence {
            // An install may have replaced it since the snapshot: only a
            // record that still names it is damage.
            if try packRecord(id)?.archiveKey != record.archiveKey { return verdict }
            report.add(.archiveMissing, pack: id, object: record.archiveName, "archive \(path) is missing (\(error.message))")
            verdict.archiveDamaged = true
            return verdict
        } catch where error == .tooManySymbolicLinkLevels {
            // A symlink where the archive belongs (O_NOFOLLOW), or packs/ is
            // one: the layout is wrong, which says nothing of the archive.
            // It is a layout.symlink finding only; the pack is left alone.
            if try packRecord(id)?.archiveKey != record.archiveKey { return verdict }
            if layout.packs.isSymlink {
                reportSymlink(layout.packs.name, directory: true, into: &report)
            } else {
                reportSymlink(layout.packs.name + "/" + record.archiveName, directory: false, into: &report)
            }
            return verdict
        } catch {
            throw .system(error.with(operation: "open", path: path))
        }
        let size: Int64
        do { size = try fd.status().size } catch { throw .system(error.with(operation: "fstat", path: path)) }
        guard size == Int64(record.archiveSize) else {
            report.add(.archiveSize, pack: id, object: record.archiveName, "archive \(path) is \(size) bytes, the index says \(record.archiveSize)")
            verdict.archiveDamaged = true
            return verdict
        }
        let region: MappedRegion
        do { region = try MappedRegion(mapping: fd, count: Int(size)) } catch { throw .system(error.with(operation: "mmap", path: path)) }
        let bytes = region.bytes
        // The members are not held: each pass below walks them again from
        // the mapping (``ZipDirectory``), in the order it needs when the
        // archive is in it already (as this package writes them).
        var directory: ZipDirectory?
        do throws(ArchiveError) {
            directory = try ZipDirectory.scan(bytes, name: path, releasingPages: true)
        } catch {
            guard error.provesDamage else { throw .archive(error) }
            report.add(.archiveDamaged, pack: id, object: record.archiveName, error.description)
            verdict.archiveDamaged = true
        }
        if deep, !verdict.archiveDamaged, let directory {
            region.advise(.sequential)
            // The hash reads a mapping of its own, so that each pass drops
            // the pages behind it without making the other fault them in again.
            let hashRegion: MappedRegion
            do { hashRegion = try MappedRegion(mapping: fd, count: Int(size)) } catch { throw .system(error.with(operation: "mmap", path: path)) }
            hashRegion.advise(.sequential)
            let problems = ArchiveScan.run(bytes: bytes, hashing: hashRegion, directory: directory, archive: path)
            report.bytesChecked += record.archiveSize
            if problems.sha256 != record.sha256 {
                report.add(.archiveSHA256, pack: id, object: record.archiveName, "archive \(path) does not match its recorded SHA-256")
                verdict.archiveDamaged = true
            } else {
                verdict.archiveHashChecked = true
            }
            for (member, error) in problems.crcFailures {
                guard error.provesDamage else { throw .archive(error) }
                report.add(.memberCRC, pack: id, object: member, error.description)
                verdict.archiveDamaged = true
            }
        }
        let compared = verdict.archiveDamaged && (directory?.memberCount ?? 0) == 0 ? nil : directory
        verdict.indexDamaged = try checkMembers(
            of: record, entries: compared.map { MemberWalk($0, in: bytes, order: .path) }, size: UInt64(size), txn: txn, report: &report)
        return verdict
    }

    /// Compares the pack's member records with the archive's entries (when
    /// the archive parsed). Returns whether the index is damaged.
    ///
    /// The records come in the order of their keys, so the entries are put
    /// in the order of their paths' bytes (an archive this package wrote is
    /// in it already) and the two are walked side by side: no table of a
    /// million paths, whose look-ups missed the cache at every step.
    private func checkMembers(of record: PackRecord, entries: MemberWalk?, size: UInt64,
                              txn: borrowing ReadTransaction, report: inout VerificationReport) throws(StoreError) -> Bool {
        let id = record.id
        let prefix = IndexSchema.memberPrefix(pack: id)
        var sorted = entries
        var pending = sorted?.next()
        var missing: [String] = []
        var damaged = false
        var walk = IndexWalk()
        try indexCall { () throws(LMDBError) in
            try txn.forEach(members, prefix: prefix) { key, value in
                walk.visited(in: txn)
                let pathBytes = UnsafeRawBufferPointer(rebasing: key[prefix.count...])
                let member = String(decoding: pathBytes, as: UTF8.self)
                report.membersChecked += 1
                var entry: ArchiveEntry?
                if sorted != nil {
                    while let p = pending, Self.compare(p.path, pathBytes) < 0 {
                        missing.append(p.path)
                        pending = sorted?.next()
                    }
                    if let p = pending, Self.compare(p.path, pathBytes) == 0 {
                        entry = p
                        pending = sorted?.next()
                    }
                }
                func problem(_ code: FindingCode, _ message: String) {
                    report.add(code, pack: id, object: member, message)
                    damaged = true
                }
                guard let m = MemberRecord(value) else {
                    problem(.memberRecordDamaged, "member record of '\(member)' is damaged")
                    return true
                }
                let end = m.dataOffset.addingReportingOverflow(m.storedSize)
                if end.overflow || end.partialValue > size || m.localHeaderOffset >= m.dataOffset {
                    problem(.memberOutOfBounds, "'\(member)' lies outside its archive")
                } else if m.archiveKey != record.archiveKey {
                    problem(.memberRecordMismatch, "'\(member)' points at another version's archive")
                } else if sorted != nil {
                    if let e = entry {
                        if MemberRecord(archiveKey: record.archiveKey, entry: e) != m {
                            problem(.memberRecordMismatch, "index record of '\(member)' disagrees with its local header and central directory entry")
                        }
                    } else {
                        problem(.memberExtra, "the index has '\(member)', the archive does not")
                    }
                }
                return true
            }
        }
        guard var sorted else { return damaged }
        while let p = pending {
            missing.append(p.path)
            pending = sorted.next()
        }
        if let failure = sorted.failure {
            guard failure.provesDamage else { throw .archive(failure) }
            report.add(.archiveDamaged, pack: id, object: record.archiveName, failure.description)
            damaged = true
        }
        for path in missing {
            report.add(.memberMissing, pack: id, object: path, "the archive has '\(path)', the index does not")
            damaged = true
        }
        let (count, total) = (sorted.directory.memberCount, sorted.directory.totalSize)
        if record.memberCount != UInt64(count) || record.totalSize != total {
            report.add(.packRecordMismatch, pack: id, object: nil,
                       "record says \(record.memberCount) members, \(record.totalSize) bytes; the archive has \(count), \(total)")
            damaged = true
        }
        return damaged
    }

    /// `path`'s UTF-8 bytes against `bytes`: negative, zero or positive.
    private static func compare(_ path: String, _ bytes: UnsafeRawBufferPointer) -> Int {
        var path = path
        return path.withUTF8 { p in
            let n = min(p.count, bytes.count)
            let c = n == 0 ? 0 : memcmp(p.baseAddress!, bytes.baseAddress!, n)
            return c != 0 ? Int(c) : p.count - bytes.count
        }
    }
}

extension Errno {
    /// Whether this error proves that the file is not there: only `ENOENT`.
    /// `ENOTDIR` (a directory of the layout is not one) and `ELOOP` (a
    /// symbolic link where a file should be) say the layout is wrong, not
    /// that the archive is gone, and repairing them as absence would drop a
    /// pack whose archive may be intact; every other error says only that
    /// the file could not be looked at.
    var provesAbsence: Bool { self == .noSuchFile }
}

extension ArchiveError {
    /// Whether this error proves the archive's bytes damaged: every case but
    /// `.io`, which says they could not be read (or inflated: `ENOMEM`).
    var provesDamage: Bool {
        if case .io = self { return false }
        return true
    }
}

/// Deep checking of one mapped archive: its SHA-256 on a second thread while
/// this one checks every member's CRC-32, so the pass runs at the speed of
/// the slower of the two, not their sum. Each pass reads a mapping of its
/// own and drops the pages behind it (``ReadBehind``): an archive of any
/// size keeps two windows of it resident.
enum ArchiveScan {
    struct Result {
        var sha256: [UInt8]
        var crcFailures: [(String, ArchiveError)]
    }

    /// Checks the members in `bytes` and hashes `hashing`, two mappings of
    /// the same archive file: the hash on a thread of its own (``ConcurrentHash``).
    static func run(bytes: UnsafeRawBufferPointer, hashing: consuming MappedRegion, directory: ZipDirectory, archive: String) -> Result {
        let hash = ConcurrentHash(hashing)
        var failures: [(String, ArchiveError)] = []
        var behind = ReadBehind(mapping: bytes)
        var entries = MemberWalk(directory, in: bytes, order: .file)
        while let entry = entries.next() {
            do throws(ArchiveError) { try ZipArchive.verify(entry, in: bytes, archive: archive, readBehind: &behind) } catch {
                failures.append((entry.path, error))
            }
        }
        if let failure = entries.failure { failures.append((archive, failure)) }
        behind.finish(at: bytes.count)
        // Never stopped, so always a digest.
        return Result(sha256: hash.result() ?? [], crcFailures: failures.sorted { $0.0 < $1.0 })
    }
}

/// The members of a scanned archive in file order (of their data) or in
/// path order (of their UTF-8 bytes, as index keys sort), one at a time:
/// walked from the mapping when the archive lists them in that order
/// already (as this package writes them), else collected and sorted.
struct MemberWalk {
    enum Order { case file, path }

    let directory: ZipDirectory
    private var walk: ZipDirectory.Entries?
    private var sorted: [ArchiveEntry] = []
    private var position = 0
    /// What ended a walk early: the mapping no longer holds what the scan
    /// validated. No member comes after it.
    private(set) var failure: ArchiveError?

    init(_ directory: ZipDirectory, in bytes: UnsafeRawBufferPointer, order: Order) {
        self.directory = directory
        let walk = directory.entries(in: bytes, releasingPages: true)
        if order == .file ? directory.inFileOrder : directory.inPathOrder {
            self.walk = walk
            return
        }
        var all = MemberWalk(directory, walk: walk)
        var entries: [ArchiveEntry] = []
        entries.reserveCapacity(directory.memberCount)
        while let entry = all.next() { entries.append(entry) }
        failure = all.failure
        sorted = order == .file
            ? entries.sorted { $0.dataOffset < $1.dataOffset }
            : entries.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }

    private init(_ directory: ZipDirectory, walk: ZipDirectory.Entries) {
        self.directory = directory
        self.walk = walk
    }

    mutating func next() -> ArchiveEntry? {
        guard walk != nil else {
            guard position < sorted.count else { return nil }
            position += 1
            return sorted[position - 1]
        }
        guard failure == nil else { return nil }
        do { return try walk?.next() } catch {
            failure = error
            return nil
        }
    }
}
