import AssetArchive
import AssetSystem

extension AssetStore {
    /// A read-only, close-on-exec descriptor of the member at `path`.
    ///
    /// A stored member gives a descriptor of its archive, positioned at the
    /// member, with offset and length. A deflated member (or any member with
    /// `.standalone`) gives a sealed memory file that holds exactly the
    /// member at offset 0; deflated data is inflated to exactly its declared
    /// size and its CRC-32 checked first, once: the file is kept in
    /// ``memoryFiles`` for the next handout of the same member.
    ///
    /// Without `.ownOffset` the descriptor is a `dup`: it shares its open
    /// file description — and so its file position — with every other
    /// handout of the same archive or memory file in this process (see
    /// ``MemberDescriptor``); its position is set to the member's start when
    /// it is handed out. With `.ownOffset` it is a new open description.
    ///
    /// - Throws: as ``contents(at:inPack:)`` (`.limitExceeded` before the
    ///   memory file is made), and `.system` when a descriptor
    ///   cannot be made.
    public func descriptor(for path: String, inPack pack: String? = nil, options: DescriptorOptions = []) throws(StoreError) -> MemberDescriptor {
        try withMember(path, inPack: pack) { (id, record, map) throws(StoreError) -> MemberDescriptor? in
            guard record.method == .stored && !options.contains(.standalone) else {
                try checkLimits(of: record, path: path, pack: id)
                return try memoryDescriptor(of: record, path: path, pack: id, in: map, options: options)
            }
            let end = record.dataOffset.addingReportingOverflow(record.storedSize)
            guard !end.overflow, end.partialValue <= UInt64(map.count), record.size == record.storedSize else {
                throw .corruptRecord(pack: id, member: path, reason: .dataOutsideArchive)
            }
            let name = IndexSchema.archiveName(pack: id, archiveKey: record.archiveKey)
            let packs = layout.packs
            let opened = options.contains(.ownOffset)
                ? try packs.open(name)
                : try map.duplicateFile { () throws(StoreError) in try packs.open(name) }
            guard let fd = opened else { return nil }
            do throws(Errno) { try fd.seek(to: Int64(record.dataOffset)) } catch { throw .system(error) }
            return MemberDescriptor(descriptor: fd, offset: Int64(record.dataOffset), length: Int64(record.size), source: .archive, crc32: record.crc32)
        }
    }

    /// A sealed memfd holding the member: the cached one, or one made now.
    private func memoryDescriptor(
        of record: MemberRecord, path: String, pack: String, in map: ArchiveMap, options: DescriptorOptions
    ) throws(StoreError) -> MemberDescriptor {
        let key = MemoryFileCache.Key(pack: pack, archiveKey: record.archiveKey, path: path, standalone: options.contains(.standalone))
        let file = try memoryFiles.file(for: key, length: Int64(record.size), crc32: record.crc32) { () throws(StoreError) in
            try makeMemoryFile(of: record, path: path, pack: pack, in: map)
        }
        let own = options.contains(.ownOffset)
        let opened = Result { () throws(Errno) -> FileDescriptor in
            let fd = own ? try file.descriptor.reopenReadOnly() : try file.descriptor.duplicate()
            if !own { try fd.seek(to: 0) }
            return fd
        }
        let fd: FileDescriptor
        do { fd = try opened.get() } catch { throw .system(error) }
        return MemberDescriptor(descriptor: fd, offset: 0, length: file.length, source: .memory, crc32: file.crc32, memoryFile: file.id)
    }

    /// A new sealed memfd holding the member, inflated (or copied) into it:
    /// one of ``MemoryFileCache/pool``'s, taken once the member's bytes are
    /// in hand (up to ``MemoryFile/bufferedLimit``), so a damaged member
    /// costs none. A stored member is checked against its CRC-32 where it
    /// lies in the archive's mapping and written from there, with no
    /// buffer in between.
    private func makeMemoryFile(of record: MemberRecord, path: String, pack: String, in map: ArchiveMap) throws(StoreError) -> FileDescriptor {
        let pool = memoryFiles.pool
        if record.method == .stored {
            // dataStart checks that the bytes lie inside the archive.
            let bytes = UnsafeRawBufferPointer(start: try Self.dataStart(of: record, path: path, pack: pack, in: map), count: Int(record.size))
            let actual = CRC32.checksum(bytes)
            guard actual == record.crc32 else {
                throw .archive(.crcMismatch(archive: pack, path: path, expected: record.crc32, actual: actual))
            }
            do { return try MemoryFile.sealed(copying: bytes, in: { () throws(Errno) in try pool.take() }) } catch { throw .system(error) }
        }
        let end = record.dataOffset.addingReportingOverflow(record.storedSize)
        guard !end.overflow, end.partialValue <= UInt64(map.count) else {
            throw .corruptRecord(pack: pack, member: path, reason: .dataOutsideArchive)
        }
        let entry = record.entry(path: path)
        do {
            return try MemoryFile.sealed(count: Int(record.size), in: { () throws(Errno) in try pool.take() }) {
                (buffer) throws(ArchiveError) in try ZipArchive.extract(entry, from: map.bytes, into: buffer, archive: pack)
            }
        } catch {
            switch error {
            case .system(let e): throw .system(e)
            case .fill(let e): throw .archive(e)
            }
        }
    }
}
