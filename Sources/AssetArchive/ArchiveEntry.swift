/// One regular-file member of a parsed archive, validated against its local
/// header.
///
/// Offsets are absolute byte offsets into the archive file, so a stored
/// member's bytes are `bytes[dataOffset ..< dataOffset + compressedSize]`.
public struct ArchiveEntry: Sendable, Hashable {
    /// The member's path: relative, `/`-separated, with no empty, `.` or
    /// `..` component; decoded from UTF-8 or CP437 (see ``MemberPath``) and
    /// in Unicode Normalization Form C, whatever form the archive spells it in.
    public let path: String
    /// How the data is stored.
    public let method: CompressionMethod
    /// The CRC-32 of the uncompressed bytes, as declared.
    public let crc32: UInt32
    /// The number of data bytes in the archive file.
    public let compressedSize: UInt64
    /// The number of bytes the member holds once inflated (equal to
    /// ``compressedSize`` when stored).
    public let uncompressedSize: UInt64
    /// The offset of the member's local header.
    public let localHeaderOffset: UInt64
    /// The offset of the member's data, just after its local header.
    public let dataOffset: UInt64

    /// Creates an entry. The reader makes these; other code may, for tests
    /// or to describe members it has indexed.
    public init(
        path: String, method: CompressionMethod, crc32: UInt32, compressedSize: UInt64,
        uncompressedSize: UInt64, localHeaderOffset: UInt64, dataOffset: UInt64
    ) {
        self.path = path
        self.method = method
        self.crc32 = crc32
        self.compressedSize = compressedSize
        self.uncompressedSize = uncompressedSize
        self.localHeaderOffset = localHeaderOffset
        self.dataOffset = dataOffset
    }
}
