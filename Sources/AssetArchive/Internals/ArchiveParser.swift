/// The work of ``ZipArchive/parse(_:name:)`` and ``ZipDirectory/scan(_:name:releasingPages:each:)``:
/// walk the central directory, validate each record and its local header,
/// then check the layout of the whole file and the names against each other
/// (``NameCollisions``).
///
/// The walk holds nothing per record when the archive is as this package
/// writes them (members in file order, names in byte order, ASCII without
/// capitals): the layout and the names are checked as the records go by,
/// and the first problem is kept until the walk is over, so that the
/// problem reported is the one the whole-array checks would report first.
/// Any other archive is walked a second time, keeping what those checks
/// need (an extent and a name per record).
struct ArchiveParser {
    let bytes: UnsafeRawBufferPointer
    let name: String
    /// Whether `bytes` is a file mapping whose pages may be dropped behind
    /// the walk (``ZipArchive/parse(_:name:releasingPages:)``).
    var releasingPages = false

    /// A member's bytes in the file, for the overlap check.
    private struct Extent {
        var start: Int
        var end: Int
        var index: Int
    }

    /// Parses and validates the archive, handing each regular-file member
    /// to `each` in central-directory order as its record and local header
    /// pass. `each` sees members before the whole archive is known good: it
    /// may count them, not act on them.
    func scan(_ each: (ArchiveEntry) -> Void) throws(ArchiveError) -> ZipDirectory {
        let end = try EndRecords.locate(in: bytes, name: name)
        try countRecords(end)
        var summary = ZipDirectory(
            archive: name, directoryOffset: end.directoryOffset, directoryEnd: end.directoryEnd,
            comment: Array(bytes[end.comment]), usesZip64: end.usesZip64)
        var layout = InOrderLayout(name: name, directoryStart: end.directoryOffset)
        var names = NameCollisions.DistinctProof()
        var walk = RecordWalk(bytes: bytes, name: name, directory: end.directoryOffset ..< end.directoryEnd,
                              releasingPages: releasingPages)
        var pathOrder = PathOrder()
        while let record = try walk.next() {
            if record.usedZip64 { summary.usesZip64 = true }
            layout.add(start: Int(record.member.localHeaderOffset), end: record.layout.end, path: record.member.path)
            names.add(record.member.path)
            if record.isDirectory {
                summary.directoryCount += 1
            } else {
                let entry = record.entry
                summary.count(entry, nameBytes: record.member.nameCount)
                if summary.inPathOrder { summary.inPathOrder = pathOrder.follows(entry.path) }
                each(entry)
            }
        }
        walk.finish()
        summary.inFileOrder = layout.inOrder
        guard layout.inOrder && names.holds else {
            try checkTheLongWay(summary, layoutInOrder: layout.inOrder, namesDistinct: names.holds)
            return summary
        }
        if let problem = layout.finish() { throw problem }
        return summary
    }

    /// Walks the records again, keeping every extent and name, and checks
    /// them as wholes: the layout in file order, then the names.
    private func checkTheLongWay(_ summary: ZipDirectory, layoutInOrder: Bool, namesDistinct: Bool) throws(ArchiveError) {
        var paths: [String] = []
        var extents: [Extent] = []
        var walk = RecordWalk(bytes: bytes, name: name, directory: summary.directoryOffset ..< summary.directoryEnd,
                              releasingPages: releasingPages)
        while let record = try walk.next() {
            extents.append(Extent(start: Int(record.member.localHeaderOffset), end: record.layout.end, index: paths.count))
            paths.append(record.member.path)
        }
        walk.finish()
        try checkLayout(&extents, paths: paths, directoryStart: summary.directoryOffset)
        if !namesDistinct { try NameCollisions.check(paths, archive: name, collidingHashes: false) }
    }

    /// Checks that the central directory is a sequence of records, each
    /// with its signature and inside the directory, as many as declared.
    private func countRecords(_ end: EndRecords) throws(ArchiveError) {
        var position = end.directoryOffset
        var count: UInt64 = 0
        // The count reads the whole directory (80 MB at a million members)
        // before the walk does: its pages go behind it too.
        var behind = ReadBehind(mapping: bytes, start: end.directoryOffset)
        while position < end.directoryEnd {
            position += try RecordWalk.recordLength(in: bytes, at: position, limit: end.directoryEnd, index: Int(count), name: name)
            count += 1
            if releasingPages { behind.reached(position) }
        }
        if releasingPages { behind.finish(at: end.directoryEnd) }
        guard count == end.entryCount else {
            throw .inconsistentDirectory(archive: name, problem: .entryCount(declared: end.entryCount, found: count))
        }
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
        var tiling = InOrderLayout(name: name, directoryStart: directoryStart)
        for extent in extents { tiling.add(start: extent.start, end: extent.end, path: paths[extent.index]) }
        if let problem = tiling.finish() { throw problem }
    }
}

/// Whether names come in the order of their UTF-8 bytes, told one at a time.
private struct PathOrder {
    private var previous: [UInt8] = []
    private var first = true

    /// Whether `path` comes after the path before it; remembers it.
    mutating func follows(_ path: String) -> Bool {
        var path = path
        return path.withUTF8 { bytes in
            defer {
                previous.removeAll(keepingCapacity: true)
                previous.append(contentsOf: bytes)
                first = false
            }
            return first || previous.lexicographicallyPrecedes(bytes)
        }
    }
}

/// The tiling check of members met in file order: each starts where the
/// one before ended, and the last ends where the central directory starts.
/// It keeps the first problem, not throwing it (a later record's own
/// problem comes first); a member that starts before the one before it
/// ends the check (``inOrder`` is `false`): the members are then checked
/// sorted, as a whole.
private struct InOrderLayout {
    let name: String
    let directoryStart: Int
    private(set) var inOrder = true
    private var problem: ArchiveError?
    private var start = -1
    private var covered = 0
    private var previous = ""

    init(name: String, directoryStart: Int) {
        self.name = name
        self.directoryStart = directoryStart
    }

    mutating func add(start: Int, end: Int, path: String) {
        guard inOrder else { return }
        guard start >= self.start else {
            inOrder = false
            return
        }
        self.start = start
        guard problem == nil else { return }
        if start < covered {
            problem = .overlap(archive: name, path: path, with: .member(previous))
        } else if start > covered {
            problem = .inconsistentDirectory(
                archive: name, problem: .unaccountedBytes(offset: UInt64(covered), count: UInt64(start - covered)))
        }
        covered = end
        previous = path
    }

    /// The first problem, counting bytes left between the last member and
    /// the central directory.
    func finish() -> ArchiveError? {
        if let problem { return problem }
        guard covered < directoryStart else { return nil }
        return .inconsistentDirectory(
            archive: name, problem: .unaccountedBytes(offset: UInt64(covered), count: UInt64(directoryStart - covered)))
    }
}

/// One pass over the central-directory records, each validated with its
/// local header (``RecordValidation``, ``LocalHeaderCheck``), dropping the
/// pages read behind it when asked.
struct RecordWalk {
    let bytes: UnsafeRawBufferPointer
    let name: String
    let directory: Range<Int>
    let releasingPages: Bool
    private let check: LocalHeaderCheck
    private var position: Int
    private var index = 0
    // Two sequential walks when the directory is in order: the records
    // at the end, and the local headers from the start.
    private var directoryBehind: ReadBehind
    private var headersBehind: ReadBehind

    /// A record that passed, with what its local header says.
    struct Record {
        var member: DeclaredMember
        var layout: MemberLayout
        var isDirectory: Bool
        var usedZip64: Bool

        var entry: ArchiveEntry {
            ArchiveEntry(
                path: member.path, method: member.method, crc32: member.crc32,
                compressedSize: member.compressedSize, uncompressedSize: member.uncompressedSize,
                localHeaderOffset: member.localHeaderOffset, dataOffset: UInt64(layout.dataOffset))
        }
    }

    init(bytes: UnsafeRawBufferPointer, name: String, directory: Range<Int>, releasingPages: Bool) {
        self.bytes = bytes
        self.name = name
        self.directory = directory
        self.releasingPages = releasingPages
        check = LocalHeaderCheck(bytes: bytes, name: name, directoryStart: directory.lowerBound)
        position = directory.lowerBound
        directoryBehind = ReadBehind(mapping: bytes, start: directory.lowerBound)
        headersBehind = ReadBehind(mapping: bytes)
    }

    /// The next record, validated; `nil` after the last.
    mutating func next() throws(ArchiveError) -> Record? {
        guard position < directory.upperBound else { return nil }
        let record = position
        position += try Self.recordLength(in: bytes, at: record, limit: directory.upperBound, index: index, name: name)
        index += 1
        var validation = RecordValidation(bytes: bytes, name: name, record: record)
        let member = try validation.validate()
        let layout = try check.check(member)
        if releasingPages {
            directoryBehind.reached(record)
            headersBehind.reached(min(Int(member.localHeaderOffset), directory.lowerBound))
        }
        return Record(member: member, layout: layout, isDirectory: validation.isDirectory,
                      usedZip64: validation.usedZip64 || layout.usedZip64)
    }

    /// Drops what is left of the pages read, when releasing them.
    mutating func finish() {
        guard releasingPages else { return }
        directoryBehind.finish(at: bytes.count)
        headersBehind.finish(at: directory.lowerBound)
    }

    /// The length of the record at `position`, checked to have its signature
    /// and to fit before `limit`; `index` names it in the error.
    static func recordLength(
        in bytes: UnsafeRawBufferPointer, at position: Int, limit: Int, index: Int, name: String
    ) throws(ArchiveError) -> Int {
        guard limit - position >= ZipFormat.centralHeaderSize,
              bytes.u32(position) == ZipFormat.centralHeaderSignature
        else { throw .inconsistentDirectory(archive: name, problem: .malformedRecord(index: index)) }
        let length = ZipFormat.centralHeaderSize + Int(bytes.u16(position + 28))
            + Int(bytes.u16(position + 30)) + Int(bytes.u16(position + 32))
        guard limit - position >= length else {
            throw .inconsistentDirectory(archive: name, problem: .malformedRecord(index: index))
        }
        return length
    }
}
