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
            let end = record.dataOffset.addingReportingOverflow(record.storedSize)
            guard !end.overflow, end.partialValue <= UInt64(map.count), record.size == record.storedSize else {
                throw .corruptRecord(pack: id, member: path, reason: .dataOutsideArchive)
            }
            let archive = ArchiveID(pack: id, archiveKey: record.archiveKey)
            let fd: FileDescriptor
            if let given = spare(archive) {
                fd = given
            } else {
                guard let opened = try openArchive(archive) else { return nil }  // gone: look again
                fd = opened
            }
            do throws(Errno) { try fd.seek(to: Int64(record.dataOffset)) } catch { throw .system(error) }
            return .stored(ArchiveHandout(descriptor: fd, archive: archive, offset: Int64(record.dataOffset), length: Int64(record.size),
                                          archiveSize: Int64(map.count), crc32: record.crc32))
        }
    }

    /// A new read-only, close-on-exec open description of `archive`, opened
    /// by name in `packs/` (not following a symlink); `nil` when the file is
    /// gone (the pack was updated or removed).
    ///
    /// - Throws: `.symlinkInContainer` for a symlink, `.system` for other failures.
    public func openArchive(_ archive: ArchiveID) throws(StoreError) -> FileDescriptor? {
        try layout.packs.open(IndexSchema.archiveName(pack: archive.pack, archiveKey: archive.archiveKey))
    }
}
