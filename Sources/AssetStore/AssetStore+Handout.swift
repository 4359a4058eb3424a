import AssetSystem

/// One installed archive file: a pack and the archive key of one of its
/// versions. The file never changes while it exists (a new version is a new
/// file, with a new key), so a descriptor opened for it once stays right.
public struct ArchiveID: Hashable, Sendable {
    public let pack: String
    public let archiveKey: UInt64

    public init(pack: String, archiveKey: UInt64) {
        self.pack = pack
        self.archiveKey = archiveKey
    }
}

/// A stored member's descriptor as a process hands it to another: a new
/// open description of its archive (a file position of its own), with
/// where the member lies in it and how large the archive is.
public struct ArchiveHandout: ~Copyable, Sendable {
    /// A read-only, close-on-exec open description of the archive, its
    /// file position at ``offset``.
    public let descriptor: FileDescriptor
    public let archive: ArchiveID
    /// Where the member's bytes begin in the archive.
    public let offset: Int64
    /// The member's length in bytes.
    public let length: Int64
    /// The archive file's size (as mapped: an installed archive never changes).
    public let archiveSize: Int64
    /// The CRC-32 the member's bytes must have (the index's record of it).
    public let crc32: UInt32

    /// Gives up ownership of the descriptor and returns its number.
    public consuming func take() -> Int32 { descriptor.take() }
}

/// Where a stored member lies: its archive file, and its place and the
/// archive's size, as ``AssetStore/placement(of:inPack:)`` finds them.
public struct StoredPlace: Hashable, Sendable {
    public let archive: ArchiveID
    /// Where the member's bytes begin in the archive.
    public let offset: Int64
    /// The member's length in bytes.
    public let length: Int64
    /// The archive file's size (as mapped: an installed archive never changes).
    public let archiveSize: Int64
    /// The CRC-32 the member's bytes must have (the index's record of it).
    public let crc32: UInt32
}

extension AssetStore {
    /// What ``handout(for:inPack:spare:)`` found.
    public enum Handout: ~Copyable, Sendable {
        /// A stored member, with its archive's descriptor.
        case stored(ArchiveHandout)
        /// A member that is handed out as a memory file (deflated): nothing
        /// was opened; ``descriptor(for:inPack:options:)`` makes it.
        case memoryFile(pack: String, record: MemberRecord)
    }

    /// The member at `path`, in pack `pack` or in whichever installed pack
    /// holds it, found by one lookup: a stored member comes with a new open
    /// description of its archive — `spare` given the archive, when it has
    /// one opened already (``openArchive(_:)``), else opened now by name —
    /// and needs no `fstat` (the archive's size is its mapping's). As
    /// ``descriptor(for:inPack:options:)`` with `.ownOffset` does for a
    /// stored member: the descriptor's file position is set to the member.
    ///
    /// - Throws: as ``descriptor(for:inPack:options:)``: `.assetPackNotFound`,
    ///   `.fileNotFound`, `.ambiguousPath`, `.corruptRecord` (also when the
    ///   record points outside its archive), `.archiveMissing`, `.system`.
    public func handout(for path: String, inPack pack: String? = nil,
                        spare: (ArchiveID) -> FileDescriptor? = { _ in nil }) throws(StoreError) -> Handout {
        try withMember(path, inPack: pack) { (id, record, map) throws(StoreError) -> Handout? in
            guard record.method == .stored else { return .memoryFile(pack: id, record: record) }
            let place = try Self.storedPlace(of: record, path: path, pack: id, in: map)
            let fd: FileDescriptor
            if let given = spare(place.archive) {
                fd = given
            } else {
                guard let opened = try openArchive(place.archive) else { return nil }  // gone: look again
                fd = opened
            }
            do throws(Errno) { try fd.seek(to: place.offset) } catch { throw .system(error) }
            return .stored(ArchiveHandout(descriptor: fd, archive: place.archive, offset: place.offset, length: place.length,
                                          archiveSize: place.archiveSize, crc32: place.crc32))
        }
    }

    /// What ``placement(of:inPack:)`` found.
    public enum Placement: Sendable {
        /// A stored member, handed out as a range of its archive.
        case stored(StoredPlace)
        /// A member that is handed out as a memory file (deflated).
        case memoryFile(pack: String, record: MemberRecord)
    }

    /// The member at `path`, in pack `pack` or in whichever installed pack
    /// holds it, found by one lookup as ``handout(for:inPack:spare:)``
    /// finds it, opening nothing: for a caller that keeps open descriptions
    /// of archives itself. A stored member's archive was installed when it
    /// was found; if it is gone when the caller opens it (an update or a
    /// removal in between), ``openArchive(_:)`` says so with `nil`, and a
    /// new lookup finds what replaced it.
    ///
    /// - Throws: as ``handout(for:inPack:spare:)``.
    public func placement(of path: String, inPack pack: String? = nil) throws(StoreError) -> Placement {
        try withMember(path, inPack: pack) { (id, record, map) throws(StoreError) -> Placement? in
            guard record.method == .stored else { return .memoryFile(pack: id, record: record) }
            return .stored(try Self.storedPlace(of: record, path: path, pack: id, in: map))
        }
    }

    /// Where the stored member `record` lies in its archive `map`, checked
    /// to lie inside it with a size that is its stored size.
    private static func storedPlace(of record: MemberRecord, path: String, pack: String, in map: ArchiveMap) throws(StoreError) -> StoredPlace {
        let end = record.dataOffset.addingReportingOverflow(record.storedSize)
        guard !end.overflow, end.partialValue <= UInt64(map.count), record.size == record.storedSize else {
            throw .corruptRecord(pack: pack, member: path, reason: .dataOutsideArchive)
        }
        return StoredPlace(archive: ArchiveID(pack: pack, archiveKey: record.archiveKey), offset: Int64(record.dataOffset),
                           length: Int64(record.size), archiveSize: Int64(map.count), crc32: record.crc32)
    }

    /// A new read-only, close-on-exec open description of `archive`, opened
    /// by name in `packs/` (not following a symlink); `nil` when the file is
    /// gone (the pack was updated or removed).
    ///
    /// - Throws: `.symlinkInContainer` for a symlink, `.system` for other failures.
    public func openArchive(_ archive: ArchiveID) throws(StoreError) -> FileDescriptor? {
        try layout.packs.open(IndexSchema.archiveName(pack: archive.pack, archiveKey: archive.archiveKey))
    }

    /// The index's last commit as this process sees it now (one read of the
    /// index's meta pages): a long-running server compares it between rounds
    /// to notice another process's commits.
    public var lastCommit: Int { environment.lastCommittedTransactionID }

    /// Lets go of this process's mappings of archives that no installed
    /// pack names any more — another process updated or removed the pack,
    /// and unlinked the file (or is about to). Otherwise such a mapping, and
    /// the file's disk space, would stay until this process next read that
    /// pack, or, for a removed pack, until it exited. The first read after
    /// each commit does this (a snapshot and a lookup per pack); a server
    /// that may read nothing for a while calls it itself. Values still
    /// pointing into a mapping keep it, as always.
    ///
    /// - Parameter held: archives the caller keeps descriptors of itself,
    ///   checked in the same snapshot.
    /// - Returns: those of `held` that no installed pack names any more;
    ///   `nil` when the index cannot be read (nothing is let go then).
    @discardableResult
    public func releaseReplacedArchives(checking held: Set<ArchiveID> = []) -> Set<ArchiveID>? {
        let mapped = archives.mapped.map { ArchiveID(pack: $0.pack, archiveKey: $0.key) }
        guard !mapped.isEmpty || !held.isEmpty else { return [] }
        let packIDs = Set(mapped.map(\.pack)).union(held.map(\.pack))
        guard let current = try? snapshot({ (txn) throws(StoreError) -> [String: UInt64] in
            var current: [String: UInt64] = [:]
            for id in packIDs {
                if let record = try Self.packRecord(id, txn: txn, packs: packs) { current[id] = record.archiveKey }
            }
            return current
        }) else { return nil }
        archives.keepOnly { key, pack in current[pack] == key }
        return held.filter { current[$0.pack] != $0.archiveKey }
    }
}
