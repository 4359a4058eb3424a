import Foundation
import AssetArchive
import AssetIndex
import AssetSystem

/// What an install did.
public enum InstallChange: String, Sendable {
    /// The pack was not installed before.
    case installed
    /// An older version was replaced.
    case replaced
    /// The same archive was already installed; nothing changed.
    case unchanged
}

/// The result of ``AssetStore/install(packAt:id:catalogVersion:source:progress:)``.
public struct InstallOutcome: Sendable {
    /// The pack as now installed.
    public let record: PackRecord
    public let change: InstallChange
}

extension AssetStore {
    /// Installs the pack file at `path`, or replaces the installed version of
    /// the same pack.
    ///
    /// The file is copied into `staging/`, checked end to end there (ZIP
    /// structure, the members' declared sizes against ``limits()``, every
    /// member's CRC-32, SHA-256, recorded manifest), moved
    /// into `packs/` under a new name, and made visible by one index write
    /// transaction: readers see the old version or the new one, never a
    /// mixture. The old version's archive is unlinked after the commit.
    /// Installing a byte-identical archive changes nothing.
    ///
    /// - Parameters:
    ///   - id: the pack ID for a plain ZIP without a recorded manifest
    ///     (default: its file name without the extension). A pack that records
    ///     its ID must be installed under that ID.
    ///   - catalogVersion: the version a catalog gave, recorded as the version.
    ///   - source: where the pack came from, recorded for people (default: `path`).
    ///   - progress: called on this thread as the long phases go (copying,
    ///     validating, hashing, indexing; see ``InstallProgress``), at most
    ///     258 times a phase. `nil`: nothing is counted.
    /// - Throws: `StoreError.archive` for a malformed or damaged archive,
    ///   `.limitExceeded` for one whose members declare more than
    ///   ``limits()`` allow (nothing installed is touched in either case;
    ///   nothing is inflated in the second), `.invalidPackID`, `.lockTimeout`,
    ///   `.system`, `.index`.
    @discardableResult
    public func install(
        packAt path: String, id: String? = nil, catalogVersion: String? = nil, source: String? = nil,
        progress: ((InstallProgress) -> Void)? = nil
    ) throws(StoreError) -> InstallOutcome {
        let sourceFile = try openSource(path)
        let containerLock = try lockContainer(.shared)
        CrashPoint.hit("install.locked-container")
        try reclaimLeftovers()
        let staged = try stage(copyOf: sourceFile.descriptor, size: sourceFile.size, label: id ?? "pack", progress: progress)
        return try install(staged, path: path, requestedID: id, verifiedSHA256: nil, catalogVersion: catalogVersion,
                           source: source ?? path, progress: progress, holding: containerLock)
    }

    /// Checks `staged` end to end (all but its SHA-256 when
    /// `verifiedSHA256` gives it) and switches it in, as
    /// ``install(packAt:id:catalogVersion:source:progress:)`` describes; the
    /// index switch of an adopted download also drops the pack's journal
    /// entry naming it. `containerLock` (shared) is released at the end.
    func install(
        _ staged: consuming StagedFile, path: String, requestedID id: String?, verifiedSHA256: [UInt8]?,
        catalogVersion: String?, source: String, progress: ((InstallProgress) -> Void)?, holding containerLock: consuming FileLock
    ) throws(StoreError) -> InstallOutcome {
        let (pack, packID) = try validate(staged, path: path, requestedID: id, verifiedSHA256: verifiedSHA256, progress: progress)

        let packLock = try lockPack(packID)
        CrashPoint.hit("install.locked-pack")
        let current = try packRecord(packID)
        reclaimArchives(of: packID, keeping: current?.archiveKey)
        if let current, isInstalled(pack, as: current, catalogVersion: catalogVersion) {
            _ = consume staged
            _ = consume packLock
            _ = consume containerLock
            return InstallOutcome(record: current, change: .unchanged)
        }

        let record = Self.record(
            of: pack, id: packID, archiveKey: try newArchiveKey(), generation: (current?.generation ?? 0) + 1,
            catalogVersion: catalogVersion, source: source)
        let retiring = try retire(current)
        CrashPoint.hit("install.retire-linked")
        try publish(&staged, as: record)
        try index(record, members: IndexedMembers(pack), nameBytes: pack.directory.nameBytes,
                  droppingDownload: staged.adoptedName, progress: progress)
        CrashPoint.hit("install.committed")
        unlinkReplaced(staged, retiring)
        _ = consume packLock
        _ = consume containerLock
        return InstallOutcome(record: record, change: current == nil ? .installed : .replaced)
    }

    /// The pack file to install, open, and its size.
    private struct InstallSource: ~Copyable {
        let descriptor: FileDescriptor
        let size: Int64
    }

    /// Opens the pack file at `path`, which must be a regular file.
    private func openSource(_ path: String) throws(StoreError) -> InstallSource {
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(path) } catch { throw .system(error) }
        let status: FileStatus
        do { status = try descriptor.status() } catch { throw .system(error.with(operation: "stat", path: path)) }
        guard status.isRegularFile else { throw .notAFile(path) }
        return InstallSource(descriptor: descriptor, size: status.size)
    }

    /// Checks the staged copy end to end and resolves the ID it installs
    /// under; every member path must make a valid index key for that ID.
    /// No member is held: the checks walk the archive's records
    /// (``StreamedPack``), and so does the index pass after them.
    private func validate(
        _ staged: borrowing StagedFile, path: String, requestedID: String?, verifiedSHA256: [UInt8]?,
        progress: ((InstallProgress) -> Void)?
    ) throws(StoreError) -> (StreamedPack, String) {
        let defaultID = PackFile.defaultID(of: path)
        let pack = try StreamedPack.validate(
            descriptor: staged.descriptor, path: path, limits: try limits(), verifiedSHA256: verifiedSHA256,
            holding: installHeldMembers, progress: progress, installingAs: { try? Self.resolveID(recorded: $0?.id, defaultID: defaultID, requested: requestedID) })
        let packID = try Self.resolveID(recorded: pack.description?.id, defaultID: defaultID, requested: requestedID)
        if let (path, problem) = pack.keyProblem { throw .invalidPath(path, reason: problem) }
        CrashPoint.hit("install.validated")
        return (pack, packID)
    }

    /// Whether `current` already is `pack`: the same archive (SHA-256 and
    /// size), and the same catalog version unless none is given.
    private func isInstalled(_ pack: StreamedPack, as current: PackRecord, catalogVersion: String?) -> Bool {
        current.sha256 == pack.sha256 && current.archiveSize == pack.size
            && (current.catalogVersion == catalogVersion || catalogVersion == nil)
    }

    /// The record of `pack` installed as `id` in the archive `archiveKey`,
    /// dated now (to the millisecond, as the record stores it).
    static func record(
        of pack: PackFile, id: String, archiveKey: UInt64, generation: UInt64, catalogVersion: String?, source: String
    ) -> PackRecord {
        record(id: id, size: pack.size, sha256: pack.sha256, description: pack.description,
               memberCount: pack.archive.entries.count, totalSize: pack.totalSize,
               archiveKey: archiveKey, generation: generation, catalogVersion: catalogVersion, source: source)
    }

    /// ``record(of:id:archiveKey:generation:catalogVersion:source:)`` of a streamed pack.
    static func record(
        of pack: StreamedPack, id: String, archiveKey: UInt64, generation: UInt64, catalogVersion: String?, source: String
    ) -> PackRecord {
        record(id: id, size: pack.size, sha256: pack.sha256, description: pack.description,
               memberCount: pack.memberCount, totalSize: pack.totalSize,
               archiveKey: archiveKey, generation: generation, catalogVersion: catalogVersion, source: source)
    }

    private static func record(
        id: String, size: UInt64, sha256: [UInt8], description: PackDescription?, memberCount: Int, totalSize: UInt64,
        archiveKey: UInt64, generation: UInt64, catalogVersion: String?, source: String
    ) -> PackRecord {
        PackRecord(
            id: id, archiveKey: archiveKey, archiveSize: size, sha256: sha256,
            generation: generation, catalogVersion: catalogVersion,
            downloadPolicy: description?.downloadPolicy ?? .onDemand,
            platforms: description?.platforms ?? [],
            memberCount: UInt64(memberCount),
            totalSize: totalSize,
            installDate: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000),
            source: source)
    }

    /// Moves the staged file into `packs/` under `record`'s archive name
    /// (its `.install` twin stays) and syncs the directory.
    private func publish(_ staged: inout StagedFile, as record: PackRecord) throws(StoreError) {
        try staged.publish(as: record.archiveName, in: layout.packs)
        CrashPoint.hit("install.published")
        try layout.packs.sync()
        CrashPoint.hit("install.published-synced")
    }

    /// Makes `record` the pack's current version, with `members`, in one
    /// write transaction: the switch readers see. For an
    /// adopted download (`droppingDownload` is its `.download` name) the same
    /// transaction deletes the pack's journal entry if it names that file,
    /// so the download is over exactly when the pack is in.
    private func index(
        _ record: PackRecord, members entries: IndexedMembers, nameBytes: Int, droppingDownload download: String?,
        progress: ((InstallProgress) -> Void)?
    ) throws(StoreError) {
        var meter = ProgressMeter.install(.indexing, total: UInt64(entries.count), reportingTo: progress)
        let written: ((UInt64) -> Void)? = meter == nil ? nil : { meter?.reach($0) }
        let growth = Self.indexGrowth(of: record.id, members: entries.count, nameBytes: nameBytes)
        try update(reserving: growth) { (txn) throws(StoreError) in
            try Self.writeIndex(of: record, entries: entries, txn: txn,
                                packs: packs, members: members, paths: paths, membersWritten: written)
            if let download { try dropJournalEntry(of: record.id, naming: download, txn: txn) }
            CrashPoint.hit("install.index.written")
        }
        meter?.finish()
    }

    /// A generous estimate of the bytes ``writeIndex(of:entries:txn:packs:members:paths:membersWritten:)``
    /// adds to the index file for `members` whose names take `nameBytes`:
    /// each member's key and record and its path
    /// entry, with LMDB's per-node overhead, doubled for half-filled pages
    /// and the copies a replacement makes. The write reserves this much map
    /// up front: a map that doubled on `MDB_MAP_FULL` ran the whole write
    /// again at each doubling (three times at 1,000,000 members).
    static func indexGrowth(of id: String, members: Int, nameBytes: Int) -> Int {
        let perMember = 2 * (id.utf8.count + 1) + MemberRecord.encodedSize + 2 * nodeOverhead
        return 2 * (2 * nameBytes + members * perMember)
    }

    /// ``indexGrowth(of:members:nameBytes:)`` for a pack read whole.
    static func indexGrowth(of id: String, entries: [ArchiveEntry]) -> Int {
        indexGrowth(of: id, members: entries.count, nameBytes: entries.reduce(0) { $0 + $1.path.utf8.count })
    }

    /// LMDB's bytes per node besides key and value: its header and its
    /// pointer on the page.
    private static let nodeOverhead = 10

    /// Deletes pack `id`'s journal entry when it is the download of the file
    /// `staging/<stagingName>`; leaves any other entry alone.
    private func dropJournalEntry(of id: String, naming stagingName: String, txn: borrowing WriteTransaction) throws(StoreError) {
        let names = try indexCall { () throws(LMDBError) -> Bool in
            guard let bytes = try txn.get(journal, key: id) else { return false }
            return JournalEntry(pack: id, decoding: bytes)?.stagingName == stagingName
        }
        guard names else { return }
        try indexCall { () throws(LMDBError) in _ = try txn.delete(journal, key: id) }
    }

    /// After the commit: keeps the new archive, unlinks an adopted
    /// download's `.download` name, the old archive (flushing `packs/`),
    /// then the twins. The new version is durable with the commit: an old
    /// archive whose unlink cannot be flushed keeps its twin, and the next
    /// writer reclaims both.
    private func unlinkReplaced(_ staged: consuming StagedFile, _ retiring: consuming RetiringArchive?) {
        staged.commit()
        if staged.unlinkAdoptedName() { CrashPoint.hit("adopt.download-unlinked") }
        try? retiring?.unlinkArchive()
        _ = consume retiring
        CrashPoint.hit("install.unlinked-old")
        _ = consume staged
        CrashPoint.hit("install.done")
    }

    /// Links a retirement twin of `record`'s archive, before the switch
    /// that drops it (the caller flushes `staging/` before the switch).
    /// `nil` when there is no record (or no archive).
    func retire(_ record: PackRecord?) throws(StoreError) -> RetiringArchive? {
        guard let record else { return nil }
        return try RetiringArchive(archiveName: record.archiveName, packs: layout.packs, staging: layout.staging)
    }

    /// Copies `source` into a new staging file and flushes it.
    private func stage(
        copyOf source: borrowing FileDescriptor, size: Int64, label: String, progress: ((InstallProgress) -> Void)?
    ) throws(StoreError) -> StagedFile {
        let staged = try StagedFile(in: layout.staging, label: label, groupShared: layout.isGroupShared)
        CrashPoint.hit("install.staging-named")
        do {
            try Self.copy(size, from: source, to: staged.descriptor, progress: progress)
            CrashPoint.hit("install.copied")
            try staged.descriptor.sync()
            CrashPoint.hit("install.staged")
        } catch {
            throw .system(error)
        }
        return staged
    }

    /// Copies the first `count` bytes of `source` to `target`: in one call
    /// without `progress` at normal priority, else in pieces of at most
    /// ``copyPiece`` bytes, each reported — at background priority of
    /// ``backgroundCopyPiece``, giving way between two
    /// (``BackgroundWork/giveWay()``) and starting the writeback of every
    /// ``backgroundWritebackPiece`` copied, so that the `fsync` after has
    /// pages to wait for rather than a whole file's to submit while it
    /// holds the CPU.
    private static func copy(
        _ count: Int64, from source: borrowing FileDescriptor, to target: borrowing FileDescriptor,
        progress: ((InstallProgress) -> Void)?
    ) throws(Errno) {
        let background = BackgroundWork.isCurrent
        var meter = ProgressMeter.install(.copying, total: UInt64(count), reportingTo: progress)
        guard meter != nil || background else {
            try target.copy(count: count, from: source, at: 0, to: 0)
            return
        }
        let most = background ? backgroundCopyPiece : copyPiece
        var offset: Int64 = 0
        var writtenBack: Int64 = 0
        while offset < count {
            let piece = min(most, count - offset)
            try target.copy(count: piece, from: source, at: offset, to: offset)
            offset += piece
            meter?.advance(by: UInt64(piece))
            if background && (offset - writtenBack >= backgroundWritebackPiece || offset == count) {
                BackgroundWork.giveWay()  // the copy and the writeback are a stretch each
                // Only a head start: the fsync that follows is what counts.
                try? target.startWriteback(from: writtenBack, count: offset - writtenBack)
                writtenBack = offset
            }
            BackgroundWork.giveWay()
        }
        meter?.finish()
    }

    /// The most bytes copied between two progress reports.
    private static let copyPiece: Int64 = 8 << 20

    /// The most bytes a background install copies in one system call, for
    /// the kernel keeps the CPU for the whole call: traced on ext4, 1 MiB
    /// took 2–3.5 ms (a block reservation per page), 128 KiB about 0.3 ms.
    private static let backgroundCopyPiece: Int64 = 128 << 10

    /// How much a background install copies between two starts of writeback
    /// (`sync_file_range`), each submitting that much in the installer's
    /// own time: traced, 1 MiB held the CPU for about 2 ms (ext4 allocates
    /// the blocks of delayed allocation then).
    private static let backgroundWritebackPiece: Int64 = 256 << 10

    /// The ID a validated pack installs under: the one its manifest
    /// records (`recorded`), else `requested`, else its file name's.
    private static func resolveID(recorded: String?, defaultID: String, requested: String?) throws(StoreError) -> String {
        if let recorded {
            if let requested, requested != recorded {
                throw .invalidPackID(requested, reason: .differsFromRecorded(recorded))
            }
            return recorded
        }
        let id = requested ?? defaultID
        do { try PackID.validate(id) } catch {
            if requested == nil, case .invalidPackID(_, let reason) = error {
                throw .invalidPackID(id, reason: .derivedFromFileName(reason))
            }
            throw error
        }
        return id
    }

    /// A random archive key that no installed pack uses.
    private func newArchiveKey() throws(StoreError) -> UInt64 {
        let used = Set(try readPackRecords().records.map(\.archiveKey))
        while true {
            let key = UInt64.random(in: 1...UInt64.max)
            if !used.contains(key) { return key }
        }
    }

    /// Replaces the members and path entries of pack `record.id` with
    /// `entries` and stores `record`, in one transaction. Members present in both versions
    /// are overwritten in place; only paths that come or go touch `paths`.
    /// `membersWritten` is told how many members are written so far, after
    /// each (from 0 again when LMDB runs the body again).
    ///
    /// The old version's members are told apart by their archive key, which
    /// no other version of the pack has (``newArchiveKey()``): nothing is
    /// held per member, so the memory this takes besides LMDB's own does not
    /// grow with the pack. A caller that writes a pack under the archive key
    /// its members already carry (repair) removes them first.
    static func writeIndex(
        of record: PackRecord, entries: [ArchiveEntry], txn: borrowing WriteTransaction,
        packs: Database, members: Database, paths: Database, membersWritten: ((UInt64) -> Void)? = nil
    ) throws(StoreError) {
        try writeIndex(of: record, entries: IndexedMembers(entries), txn: txn,
                       packs: packs, members: members, paths: paths, membersWritten: membersWritten)
    }

    /// ``writeIndex(of:entries:txn:packs:members:paths:membersWritten:)`` of
    /// members walked one at a time (each run of the body walks them again).
    static func writeIndex(
        of record: PackRecord, entries: IndexedMembers, txn: borrowing WriteTransaction,
        packs: Database, members: Database, paths: Database, membersWritten: ((UInt64) -> Void)? = nil
    ) throws(StoreError) {
        let id = record.id
        let prefix = IndexSchema.memberPrefix(pack: id)
        var replacing = false
        try indexCall { () throws(LMDBError) in
            try txn.forEach(members, prefix: prefix) { _, _ in replacing = true; return false }
        }
        var key = prefix
        var value = [UInt8](repeating: 0, count: MemberRecord.encodedSize)
        var written: UInt64 = 0
        // A new pack's keys, in the order an archive this package wrote
        // lists its members, come after every key there is when its ID sorts
        // last (always, in a container's first pack): they are appended, which
        // fills LMDB's pages instead of splitting them. The first key that is
        // not after the last one ends the appending, for the rest of the pack.
        var appendingMembers = !replacing
        var appendingPaths = !replacing
        var walk = IndexWalk()
        try entries.forEach { (entry) throws(StoreError) in
            walk.visited(in: txn)
            key.removeSubrange(prefix.count...)
            key.append(contentsOf: entry.path.utf8)
            let path = key[prefix.count...]
            value.withUnsafeMutableBytes { MemberRecord(archiveKey: record.archiveKey, entry: entry).encode(into: $0) }
            if appendingMembers { appendingMembers = try appended(value, at: key, to: members, txn: txn) }
            // A path the old version has is listed for the pack already.
            var newPath = true
            if !appendingMembers {
                try indexCall { () throws(LMDBError) in
                    if !replacing {
                        try txn.put(members, key: key, value: value)
                    } else if try !txn.put(members, key: key, value: value, flags: .noOverwrite) {
                        newPath = false
                        try txn.put(members, key: key, value: value)
                    }
                }
            }
            CrashPoint.hit("install.index.member")
            if newPath {
                if appendingPaths { appendingPaths = try appended(id, at: path, to: paths, txn: txn) }
                if !appendingPaths {
                    try PathIndex.add(pack: id, to: path, txn: txn, paths: paths)
                }
                CrashPoint.hit("install.index.path-added")
            }
            written += 1
            membersWritten?(written)
            BackgroundWork.giveWay()
        }
        if replacing {
            // What is left of the old version is what the new one dropped.
            try sweepMembers(of: id, txn: txn, members: members, paths: paths, crashPoint: "install.index.member-dropped") { value in
                MemberRecord(value)?.archiveKey != record.archiveKey
            }
        }
        try indexCall { () throws(LMDBError) in try txn.put(packs, key: Array(id.utf8), value: record.encoded) }
    }

    /// Deletes the members of pack `id` whose record `isDropped` says so,
    /// and the pack from their path entries, in one walk that holds none
    /// of them; `crashPoint` is hit after each.
    static func sweepMembers(
        of id: String, txn: borrowing WriteTransaction, members: Database, paths: Database, crashPoint: StaticString,
        where isDropped: (_ record: UnsafeRawBufferPointer) -> Bool
    ) throws(StoreError) {
        let prefix = IndexSchema.memberPrefix(pack: id)
        var failure: StoreError?
        var walk = IndexWalk()
        try indexCall { () throws(LMDBError) in
            try txn.sweep(members, prefix: prefix) { key, value in
                BackgroundWork.giveWay()
                walk.visited(in: txn)
                guard isDropped(value) else { return .keep }
                do throws(StoreError) {
                    try PathIndex.remove(pack: id, from: Array(key[prefix.count...]), txn: txn, paths: paths)
                } catch {
                    failure = error
                    return .stop
                }
                CrashPoint.hit(crashPoint)
                return .delete
            }
        }
        if let failure { throw failure }
    }

    /// Appends `key` → `value` to `db` (`MDB_APPEND`); `false`, with nothing
    /// written, when `key` is not after the last key there.
    private static func appended(
        _ value: some IndexBytes, at key: some IndexBytes, to db: Database, txn: borrowing WriteTransaction
    ) throws(StoreError) -> Bool {
        do {
            try txn.append(db, key: key, value: value)
            return true
        } catch where error.code == LMDBError.keyExists.code {
            return false
        } catch {
            throw .index(error)
        }
    }
}

/// The members ``AssetStore/writeIndex(of:entries:txn:packs:members:paths:membersWritten:)``
/// indexes: how many, and a walk over them from the first, which may be
/// taken more than once (LMDB runs a write body again after growing the map).
struct IndexedMembers {
    let count: Int
    let forEach: (_ body: (ArchiveEntry) throws(StoreError) -> Void) throws(StoreError) -> Void

    init(_ entries: [ArchiveEntry]) {
        count = entries.count
        forEach = { (body) throws(StoreError) in for entry in entries { try body(entry) } }
    }

    /// The members of `pack`, read again from its mapping at each walk.
    init(_ pack: StreamedPack) {
        count = pack.memberCount
        forEach = { (body) throws(StoreError) in try pack.forEachMember(body) }
    }
}
