import AssetSystem

/// A parsed ZIP archive whose structure has been validated: everything but
/// the members' data (see ``verify(_:in:archive:)``).
///
/// ``parse(_:name:)`` trusts nothing. It finds the end records (ZIP64 ones
/// too), reads every central-directory record, checks every local header
/// (and data descriptor) against its record, and refuses unsafe names,
/// symbolic links and other special files, encryption, methods other than
/// stored and deflated, duplicate names, members that overlap each other or
/// the central directory, and any byte that belongs to nothing — including a
/// prefix before the first member, such as a self-extractor stub, so that a
/// reader walking local headers from the start sees the same members.
/// Names need not carry flag bit 11: any valid UTF-8 name is accepted (as
/// Info-ZIP writes them) and invalid UTF-8 is refused. Names that are
/// canonically equivalent Unicode (`é` precomposed and decomposed) count as
/// duplicates. Unix file types are read when "version made by" names a Unix
/// host; the one FIFO accepted is Info-ZIP's record of standard input, named
/// `-`, which `unzip` extracts as a regular file.
///
/// Parsing allocates one `String` per member, sorts members by offset only
/// when the central directory is out of order, and finds duplicates with
/// one hash set: 100,000 members take tens of milliseconds. ``ZipDirectory``
/// validates the same without holding the members.
public struct ZipArchive: Sendable {
    /// The regular-file members, in central-directory order.
    public let entries: [ArchiveEntry]
    /// How many directory entries (names ending in `/`, no data) the archive
    /// holds. They are accepted and checked, but are not members.
    public let directoryCount: Int
    /// The archive comment from the end record.
    public let comment: [UInt8]
    /// Whether the archive has ZIP64 end records, or a central record or
    /// local header that takes a size or offset from a ZIP64 extra field.
    public let usesZip64: Bool

    /// Parses and validates the archive `bytes`: the whole file, usually a
    /// mapping of it.
    ///
    /// - Parameters:
    ///   - bytes: every byte of the archive file, from its first.
    ///   - name: how errors name the archive, usually its path.
    /// - Throws: the ``ArchiveError`` case that describes the first problem
    ///   found. Data CRCs are not checked here.
    public static func parse(_ bytes: UnsafeRawBufferPointer, name: String) throws(ArchiveError) -> ZipArchive {
        try parse(bytes, name: name, releasingPages: false)
    }

    /// ``parse(_:name:)`` of a file mapping, dropping the pages of the
    /// central directory and of the local headers behind the walk over them
    /// (``ReadBehind``) when `releasingPages`: an archive of a million
    /// members does not stay resident because its headers were read.
    public static func parse(_ bytes: UnsafeRawBufferPointer, name: String, releasingPages: Bool) throws(ArchiveError) -> ZipArchive {
        var entries: [ArchiveEntry] = []
        let directory = try ZipDirectory.scan(bytes, name: name, releasingPages: releasingPages) { entries.append($0) }
        return ZipArchive(
            entries: entries, directoryCount: directory.directoryCount,
            comment: directory.comment, usesZip64: directory.usesZip64)
    }

    /// Opens the file at `path`, maps it and parses it with `path` as its name.
    ///
    /// - Throws: ``ArchiveError/io(archive:error:)`` when the file cannot be
    ///   opened, is not a regular file (`EISDIR`, `EINVAL`) or cannot be
    ///   mapped; otherwise what ``parse(_:name:)`` throws.
    public static func open(path: String) throws(ArchiveError) -> ZipArchive {
        try open(path: path, name: path)
    }

    /// Opens `path` and parses it, naming it `name` in errors.
    static func open(path: String, name: String) throws(ArchiveError) -> ZipArchive {
        let region = try map(path: path, name: name)
        return try parse(region.bytes, name: name)
    }

    /// Opens the regular file `path` and maps all of it read-only.
    static func map(path: String, name: String) throws(ArchiveError) -> MappedRegion {
        do throws(Errno) {
            let descriptor = try FileDescriptor.open(path)
            let status = try descriptor.status()
            guard status.isRegularFile else {
                let code = status.isDirectory ? Errno.isDirectory.rawValue : Errno.invalidArgument.rawValue
                throw Errno(code, operation: "open", path: path)
            }
            return try MappedRegion(mapping: descriptor, count: Int(status.size))
        } catch {
            throw .io(archive: name, error: error)
        }
    }
}
