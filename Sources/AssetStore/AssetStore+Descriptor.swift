import AssetArchive
import AssetSystem

extension AssetStore {
    /// A read-only, close-on-exec descriptor of the member at `path`.
    ///
    /// A stored member gives a new open description of its archive,
    /// positioned at the member, with offset and length. A deflated member
    /// (or any member with `.standalone`) gives a sealed memory file that
    /// holds exactly the member at offset 0; deflated data is inflated to
    /// exactly its declared size and its CRC-32 checked first.
    ///
    /// - Throws: as ``contents(at:inPack:)`` (`.limitExceeded` before the
    ///   memory file is made), and `.system` when a descriptor
    ///   cannot be made.
    public func descriptor(for path: String, inPack pack: String? = nil, options: DescriptorOptions = []) throws(StoreError) -> MemberDescriptor {
        try withMember(path, inPack: pack) { (id, record, map) throws(StoreError) -> MemberDescriptor? in
            guard record.method == .stored && !options.contains(.standalone) else {
                try checkLimits(of: record, path: path, pack: id)
                return try memoryDescriptor(of: record, path: path, pack: id, in: map)
            }
            let end = record.dataOffset.addingReportingOverflow(record.storedSize)
            guard !end.overflow, end.partialValue <= UInt64(map.count), record.size == record.storedSize else {
                throw .corruptRecord(pack: id, member: path, reason: .dataOutsideArchive)
            }
            guard let fd = try layout.packs.open(IndexSchema.archiveName(pack: id, archiveKey: record.archiveKey)) else { return nil }
            do throws(Errno) { try fd.seek(to: Int64(record.dataOffset)) } catch { throw .system(error) }
            return MemberDescriptor(descriptor: fd, offset: Int64(record.dataOffset), length: Int64(record.size), source: .archive, crc32: record.crc32)
        }
    }

    /// A sealed memfd holding the member, inflated straight into it.
    private func memoryDescriptor(of record: MemberRecord, path: String, pack: String, in map: ArchiveMap) throws(StoreError) -> MemberDescriptor {
        let end = record.dataOffset.addingReportingOverflow(record.storedSize)
        guard !end.overflow, end.partialValue <= UInt64(map.count) else {
            throw .corruptRecord(pack: pack, member: path, reason: .dataOutsideArchive)
        }
        let entry = record.entry(path: path)
        do {
            let fd = try MemoryFile.sealed(name: path, count: Int(record.size)) { (buffer) throws(ArchiveError) in
                try ZipArchive.extract(entry, from: map.bytes, into: buffer, archive: pack)
            }
            return MemberDescriptor(descriptor: fd, offset: 0, length: Int64(record.size), source: .memory, crc32: record.crc32)
        } catch {
            switch error {
            case .system(let e): throw .system(e)
            case .fill(let e): throw .archive(e)
            }
        }
    }
}
