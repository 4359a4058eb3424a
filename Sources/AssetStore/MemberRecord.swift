public import AssetArchive

/// Where a member's bytes are and what they must check out as: the `members`
/// database's value, 48 bytes little-endian.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | archive key (names the archive file of the pack version) |
/// | 8 | 8 | local header offset in the archive |
/// | 16 | 8 | data offset in the archive |
/// | 24 | 8 | stored (compressed) size |
/// | 32 | 8 | size |
/// | 40 | 4 | CRC-32 |
/// | 44 | 2 | method (0 stored, 8 deflated) |
/// | 46 | 2 | reserved, 0 |
public struct MemberRecord: Sendable, Hashable {
    public var archiveKey: UInt64
    public var localHeaderOffset: UInt64
    public var dataOffset: UInt64
    public var storedSize: UInt64
    public var size: UInt64
    public var crc32: UInt32
    public var method: CompressionMethod

    static let encodedSize = 48

    public init(archiveKey: UInt64, entry: ArchiveEntry) {
        self.archiveKey = archiveKey
        self.localHeaderOffset = entry.localHeaderOffset
        self.dataOffset = entry.dataOffset
        self.storedSize = entry.compressedSize
        self.size = entry.uncompressedSize
        self.crc32 = entry.crc32
        self.method = entry.method
    }

    private init() {
        archiveKey = 0
        localHeaderOffset = 0
        dataOffset = 0
        storedSize = 0
        size = 0
        crc32 = 0
        method = .stored
    }

    /// All zeros: the filler of an empty slot (``LookupCache``).
    static let none = MemberRecord()

    /// Decodes a record; `nil` if the bytes are not one.
    @inline(__always)
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.encodedSize,
              let method = CompressionMethod(rawValue: UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 44, as: UInt16.self)))
        else { return nil }
        archiveKey = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        localHeaderOffset = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        dataOffset = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        storedSize = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        size = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 32, as: UInt64.self))
        crc32 = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 40, as: UInt32.self))
        self.method = method
    }

    /// Writes the encoding into `buffer`, which must be ``encodedSize`` bytes.
    func encode(into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count == Self.encodedSize)
        buffer.storeBytes(of: archiveKey.littleEndian, toByteOffset: 0, as: UInt64.self)
        buffer.storeBytes(of: localHeaderOffset.littleEndian, toByteOffset: 8, as: UInt64.self)
        buffer.storeBytes(of: dataOffset.littleEndian, toByteOffset: 16, as: UInt64.self)
        buffer.storeBytes(of: storedSize.littleEndian, toByteOffset: 24, as: UInt64.self)
        buffer.storeBytes(of: size.littleEndian, toByteOffset: 32, as: UInt64.self)
        buffer.storeBytes(of: crc32.littleEndian, toByteOffset: 40, as: UInt32.self)
        buffer.storeBytes(of: method.rawValue.littleEndian, toByteOffset: 44, as: UInt16.self)
        buffer.storeBytes(of: UInt16(0), toByteOffset: 46, as: UInt16.self)
    }

    /// The archive entry this record describes, for inflating and checking.
    func entry(path: String) -> ArchiveEntry {
        ArchiveEntry(path: path, method: method, crc32: crc32, compressedSize: storedSize,
                     uncompressedSize: size, localHeaderOffset: localHeaderOffset, dataOffset: dataOffset)
    }
}
