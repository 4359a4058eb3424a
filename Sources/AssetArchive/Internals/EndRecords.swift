/// What the end-of-central-directory record (and, in ZIP64 archives, the
/// ZIP64 end record it leads to) says about the central directory.
struct EndRecords {
    /// The number of central-directory records declared.
    var entryCount: UInt64
    /// Where the central directory starts.
    var directoryOffset: Int
    /// Where it ends: where the ZIP64 end record, or else the end record, begins.
    var directoryEnd: Int
    /// Where the archive comment lies.
    var comment: Range<Int>
    /// Whether the ZIP64 end records are present.
    var usesZip64: Bool

    /// Finds and checks the end records of the archive `bytes`.
    ///
    /// The end record is searched backwards from the end of the file over the
    /// last 65,557 bytes; the one whose comment ends exactly at the end of
    /// the file is taken. A ZIP64 locator just before it leads to the ZIP64
    /// end record, whose values must agree with the classic ones (each equal,
    /// or the 0xFFFF / 0xFFFFFFFF placeholder) and which must end exactly
    /// where the locator begins.
    static func locate(in bytes: UnsafeRawBufferPointer, name: String) throws(ArchiveError) -> EndRecords {
        let end = try findEndRecord(in: bytes, name: name)
        let diskNumber = bytes.u16(end + 4)
        let directoryDisk = bytes.u16(end + 6)
        let entriesOnDisk = bytes.u16(end + 8)
        let entries = bytes.u16(end + 10)
        let size = bytes.u32(end + 12)
        let offset = bytes.u32(end + 16)
        let comment = (end + ZipFormat.endRecordSize) ..< bytes.count

        var records = EndRecords(
            entryCount: UInt64(entries), directoryOffset: 0, directoryEnd: end,
            comment: comment, usesZip64: false)
        var directoryOffset = UInt64(offset)
        var directorySize = UInt64(size)

        let locator = end - ZipFormat.zip64LocatorSize
        if locator >= 0 && bytes.u32(locator) == ZipFormat.zip64LocatorSignature {
            let record = try zip64Record(in: bytes, locator: locator, name: name)
            let e64 = bytes.u64(record + 32)
            let size64 = bytes.u64(record + 40)
            let offset64 = bytes.u64(record + 48)
            guard bytes.u32(record + 16) == 0, bytes.u32(record + 20) == 0, bytes.u64(record + 24) == e64,
                  diskNumber == 0 || diskNumber == ZipFormat.max16,
                  directoryDisk == 0 || directoryDisk == ZipFormat.max16
            else { throw .inconsistentDirectory(archive: name, problem: .multipleDisks) }
            guard agrees(entries, e64), agrees(entriesOnDisk, e64), agrees(size, size64), agrees(offset, offset64)
            else { throw .inconsistentDirectory(archive: name, problem: .zip64EndRecord) }
            records.entryCount = e64
            records.directoryEnd = record
            records.usesZip64 = true
            directoryOffset = offset64
            directorySize = size64
        } else {
            guard diskNumber == 0, directoryDisk == 0, entriesOnDisk == entries
            else { throw .inconsistentDirectory(archive: name, problem: .multipleDisks) }
        }

        let directoryEnd = UInt64(records.directoryEnd)
        guard directoryOffset <= directoryEnd, directorySize == directoryEnd - directoryOffset else {
            throw .inconsistentDirectory(
                archive: name, problem: .centralDirectoryBounds(offset: directoryOffset, size: directorySize))
        }
        records.directoryOffset = Int(directoryOffset)
        return records
    }

    /// The offset of the end record whose comment ends at the end of the file.
    private static func findEndRecord(in bytes: UnsafeRawBufferPointer, name: String) throws(ArchiveError) -> Int {
        let count = bytes.count
        let lowest = max(0, count - ZipFormat.endRecordSearchSpan)
        // The first signature seen from the end that does not fit, if any:
        // cut short (the file is truncated) or followed by stray bytes.
        var misfit: ArchiveError?
        var position = count - 4
        while position >= lowest {
            if bytes[position] == 0x50, bytes.u32(position) == ZipFormat.endRecordSignature {
                if position + ZipFormat.endRecordSize > count {
                    if misfit == nil { misfit = .truncated(archive: name) }
                } else {
                    let recordEnd = position + ZipFormat.endRecordSize + Int(bytes.u16(position + 20))
                    if recordEnd == count { return position }
                    if misfit == nil {
                        misfit = recordEnd > count
                            ? .truncated(archive: name)
                            : .inconsistentDirectory(
                                archive: name,
                                problem: .unaccountedBytes(offset: UInt64(recordEnd), count: UInt64(count - recordEnd)))
                    }
                }
            }
            position -= 1
        }
        if let misfit { throw misfit }
        // No end record at all: a file that starts like an archive was cut.
        if count >= 4, bytes.u32(0) == ZipFormat.localHeaderSignature || bytes.u32(0) == ZipFormat.endRecordSignature {
            throw .truncated(archive: name)
        }
        throw .notAnArchive(archive: name)
    }

    /// The offset of the ZIP64 end record the locator at `locator` points to,
    /// checked to be on this disk and to end exactly at the locator.
    private static func zip64Record(
        in bytes: UnsafeRawBufferPointer, locator: Int, name: String
    ) throws(ArchiveError) -> Int {
        let recordDisk = bytes.u32(locator + 4)
        let recordOffset = bytes.u64(locator + 8)
        let diskCount = bytes.u32(locator + 16)
        guard recordDisk == 0, diskCount <= 1 else {
            throw .inconsistentDirectory(archive: name, problem: .multipleDisks)
        }
        guard locator >= ZipFormat.zip64EndRecordSize, recordOffset <= UInt64(locator - ZipFormat.zip64EndRecordSize)
        else { throw .inconsistentDirectory(archive: name, problem: .zip64EndRecord) }
        let record = Int(recordOffset)
        let recordSize = bytes.u64(record + 4)
        guard bytes.u32(record) == ZipFormat.zip64EndRecordSignature,
              recordSize >= UInt64(ZipFormat.zip64EndRecordSize - 12),
              recordSize == UInt64(locator - record - 12)
        else { throw .inconsistentDirectory(archive: name, problem: .zip64EndRecord) }
        return record
    }

    /// Whether a classic 16- or 32-bit field agrees with its ZIP64 value:
    /// equal to it, or the all-ones placeholder.
    private static func agrees<T: FixedWidthInteger & UnsignedInteger>(_ classic: T, _ wide: UInt64) -> Bool {
        classic == T.max || UInt64(classic) == wide
    }
}
