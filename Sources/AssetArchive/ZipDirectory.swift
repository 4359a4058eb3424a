/// A ZIP archive validated as ``ZipArchive/parse(_:name:)`` validates it,
/// without its members held: what a walk over a million members needs to
/// keep is a few counts, and the members are read again, one at a time,
/// from the archive's bytes (``entries(in:releasingPages:)``).
///
/// ``scan(_:name:releasingPages:each:)`` refuses exactly what
/// ``ZipArchive/parse(_:name:)`` refuses, with the same error. It holds
/// nothing per member for the archives this package writes (members in
/// file order, names sorted by their bytes, ASCII without capitals); any
/// other archive costs it a second walk that keeps an extent and a name per
/// member while the layout and the names are checked.
public struct ZipDirectory: Sendable {
    /// How errors name the archive.
    public let archive: String
    /// The regular-file members.
    public private(set) var memberCount = 0
    /// How many directory entries the archive holds (not members).
    public internal(set) var directoryCount = 0
    /// The archive comment from the end record.
    public let comment: [UInt8]
    /// Whether the archive uses ZIP64 anywhere (as ``ZipArchive/usesZip64``).
    public internal(set) var usesZip64: Bool
    /// The sum of the members' declared (uncompressed) sizes.
    public private(set) var totalSize: UInt64 = 0
    /// The sum of the members' stored (compressed) sizes.
    public private(set) var storedSize: UInt64 = 0
    /// The sum of the lengths of the members' names as the archive stores
    /// them: about the bytes of their paths (NFC and CP437 decoding may
    /// change a name's length).
    public private(set) var nameBytes = 0
    /// Whether the directory lists the members in the order of their bytes
    /// in the file.
    public internal(set) var inFileOrder = true
    /// Whether the directory lists the members in the order of their paths'
    /// UTF-8 bytes (as this package writes them, and as index keys sort).
    public internal(set) var inPathOrder = true
    /// Where the central directory lies in the file.
    let directoryOffset: Int
    let directoryEnd: Int

    init(archive: String, directoryOffset: Int, directoryEnd: Int, comment: [UInt8], usesZip64: Bool) {
        self.archive = archive
        self.directoryOffset = directoryOffset
        self.directoryEnd = directoryEnd
        self.comment = comment
        self.usesZip64 = usesZip64
    }

    /// Counts a member.
    mutating func count(_ entry: ArchiveEntry, nameBytes: Int) {
        memberCount += 1
        totalSize &+= entry.uncompressedSize
        storedSize &+= entry.compressedSize
        self.nameBytes += nameBytes
    }

    /// Validates the archive `bytes` (the whole file, usually a mapping of
    /// it) as ``ZipArchive/parse(_:name:releasingPages:)`` does, handing each
    /// member to `each` as it passes its own checks, in central-directory
    /// order. `each` sees a member before the archive as a whole is known
    /// good (the layout and the names are checked last): it may count or
    /// note what it sees, and must act only once the scan returns.
    ///
    /// - Throws: the ``ArchiveError`` ``ZipArchive/parse(_:name:)`` throws.
    public static func scan(
        _ bytes: UnsafeRawBufferPointer, name: String, releasingPages: Bool, each: (ArchiveEntry) -> Void = { _ in }
    ) throws(ArchiveError) -> ZipDirectory {
        try ArchiveParser(bytes: bytes, name: name, releasingPages: releasingPages).scan(each)
    }

    /// The members of the archive scanned from `bytes`, read again from
    /// them one at a time, in central-directory order: each record and its
    /// local header are validated again, so bytes that changed since the
    /// scan end the walk with an error, never with a member out of bounds.
    /// With `releasingPages`, the pages read are dropped behind the walk.
    public func entries(in bytes: UnsafeRawBufferPointer, releasingPages: Bool) -> Entries {
        Entries(walk: RecordWalk(bytes: bytes, name: archive, directory: directoryOffset ..< directoryEnd,
                                 releasingPages: releasingPages))
    }

    /// A walk over the members of a scanned archive.
    public struct Entries {
        var walk: RecordWalk

        /// The next member, or `nil` after the last.
        ///
        /// - Throws: the ``ArchiveError`` of a record or local header that
        ///   no longer passes (the bytes changed since the scan).
        public mutating func next() throws(ArchiveError) -> ArchiveEntry? {
            while let record = try walk.next() {
                if !record.isDirectory { return record.entry }
            }
            walk.finish()
            return nil
        }
    }
}
