/// The work of ``ZipArchive/parse(_:name:)``: walk the central directory,
/// validate each record and its local header, then check the layout of the
/// whole file and the names against each other (``NameCollisions``).
struct ArchiveParser {
    let bytes: UnsafeRawBufferPointer
    let name: String
    /// Whether `bytes` is a file mapping whose pages may be dropped behind
    /// the walk (``ZipArchive/parse(_:name:releasingPages:)``).
    var releasingPages = false

    /// The result of a parse, before it becomes a ``ZipArchive``.
    struct Parsed {
        var entries: [ArchiveEntry] = []
        var directoryCount = 0
        var comment: [UInt8] = []
        var usesZip64 = false
    }

    /// A member's bytes in the file, for the overlap check.
    private struct Extent {
        var start: Int
        var end: Int
        var index: Int
    }

    func parse() throws(ArchiveError) -> Parsed {
        let end = try EndRecords.locate(in: bytes, name: name)
        let records = try walkDirectory(end)
        let check = LocalHeaderCheck(bytes: bytes, name: name, directoryStart: end.directoryOffset)

        var parsed = Parsed()
        parsed.usesZip64 = end.usesZip64
        parsed.entries.reserveCapacity(records.count)
        var paths: [String] = []
        paths.reserveCapacity(records.count)
        var extents: [Extent] = []
        extents.reserveCapacity(records.count)

        // Two sequential walks when the directory is in order: the records
        // at the end, and the local headers from the start.
        var directoryBehind = ReadBehind(mapping: bytes, start: end.directoryOffset)
        var headersBehind = ReadBehind(mapping: bytes)
        for record in records {
            var validation = RecordValidation(bytes: bytes, name: name, record: record)
            let member = try validation.validate()
            let layout = try check.check(member)
            if releasingPages {
                directoryBehind.reached(record)
                headersBehind.reached(min(Int(member.localHeaderOffset), end.directoryOffset))
            }
            if validation.usedZip64 || layout.usedZip64 { parsed.usesZip64 = true }
            extents.append(Extent(start: Int(member.localHeaderOffset), end: layout.end, index: paths.count))
            paths.append(member.path)
            if validation.isDirectory {
                parsed.directoryCount += 1
            } else {
                parsed.entries.append(ArchiveEntry(
                    path: member.path, method: member.method, crc32: member.crc32,
                    compressedSize: member.compressedSize, uncompressedSize: member.uncompressedSize,
                    localHeaderOffset: member.localHeaderOffset, dataOffset: UInt64(layout.dataOffset)))
            }
        }
        if releasingPages {
            directoryBehind.finish(at: bytes.count)
            headersBehind.finish(at: end.directoryOffset)
        }
        try checkLayout(&extents, paths: paths, directoryStart: end.directoryOffset)
        try NameCollisions.check(paths, archive: name)
        parsed.comment = Array(bytes[end.comment])
        return parsed
    }

    /// The offsets of the central-directory records, each checked to have
    /// its signature and to fit in the directory; their number must be the
    /// declared one.
    private func walkDirectory(_ end: EndRecords) throws(ArchiveError) -> [Int] {
        let limit = end.directoryEnd
        var offsets: [Int] = []
        offsets.reserveCapacity(Int(min(end.entryCount, UInt64((limit - end.directoryOffset) / ZipFormat.centralHeaderSize))))
        var position = end.directoryOffset
        while position < limit {
            guard limit - position >= ZipFormat.centralHeaderSize,
                  bytes.u32(position) == ZipFormat.centralHeaderSignature
            else { throw .inconsistentDirectory(archive: name, problem: .malformedRecord(index: offsets.count)) }
            let length = ZipFormat.centralHeaderSize + Int(bytes.u16(position + 28))
                + Int(bytes.u16(position + 30)) + Int(bytes.u16(position + 32))
            guard limit - position >= length else {
                throw .inconsistentDirectory(archive: name, problem: .malformedRecord(index: offsets.count))
            }
            offsets.append(position)
            position += length
        }
        guard UInt64(offsets.count) == end.entryCount else {
            throw .inconsistentDirectory(
                archive: name, problem: .entryCount(declared: end.entryCount, found: UInt64(offsets.count)))
        }
        return offsets
    }

    /// Members must tile the file from offset 0 to the central directory:
    /// an overlap is refused, and so is any gap or prefix.
    private func checkLayout(_ extents: inout [Extent], paths: [String], directoryStart: Int) throws(ArchiveError) {
        var sorted = true
        for i in extents.indices.dropFirst() where extents[i - 1].start > extents[i].start {
            sorted = false
            break
        }
        if !sorted { extents.sort { ($0.start, $0.index) < ($1.start, $1.index) } }
        var covered = 0
        var previous = -1
        for extent in extents {
            if extent.start < covered {
                throw .overlap(archive: name, path: paths[extent.index], with: .member(paths[previous]))
            }
            if extent.start > covered {
                throw .inconsistentDirectory(
                    archive: name,
                    problem: .unaccountedBytes(offset: UInt64(covered), count: UInt64(extent.start - covered)))
            }
            covered = extent.end
            previous = extent.index
        }
        if covered < directoryStart {
            throw .inconsistentDirectory(
                archive: name,
                problem: .unaccountedBytes(offset: UInt64(covered), count: UInt64(directoryStart - covered)))
        }
    }}
