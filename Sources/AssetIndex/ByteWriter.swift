/// Builds a fixed-layout record or key: integers little-endian, strings and
/// byte runs either raw or with a 32-bit length before them.
///
/// ```swift
/// var w = ByteWriter()
/// w.u32(version); w.u64(size); w.string(archiveName)
/// try txn.put(packs, key: id, value: w)
/// ```
///
/// ``ByteReader`` reads the same layout back.
public struct ByteWriter: Sendable, Equatable, IndexBytes {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends one byte.
    public mutating func u8(_ value: UInt8) { bytes.append(value) }
    /// Appends 2 bytes, little-endian.
    public mutating func u16(_ value: UInt16) { integer(value) }
    /// Appends 4 bytes, little-endian.
    public mutating func u32(_ value: UInt32) { integer(value) }
    /// Appends 8 bytes, little-endian.
    public mutating func u64(_ value: UInt64) { integer(value) }
    /// Appends 8 bytes, the two's complement little-endian.
    public mutating func i64(_ value: Int64) { integer(UInt64(bitPattern: value)) }
    /// Appends 8 bytes, big-endian: keys built this way sort numerically.
    public mutating func u64BigEndian(_ value: UInt64) { integer(value.byteSwapped) }

    /// Appends `bytes` as they are, with no length: for fields of fixed size
    /// (a SHA-256) or at the end of a record.
    public mutating func bytes(_ bytes: some Sequence<UInt8>) { self.bytes.append(contentsOf: bytes) }

    /// Appends `bytes` after their length as a `u32`.
    public mutating func lengthPrefixed(_ bytes: some Collection<UInt8>) {
        u32(UInt32(bytes.count))
        self.bytes.append(contentsOf: bytes)
    }

    /// Appends the string's UTF-8 after its length as a `u32`.
    public mutating func string(_ string: String) { lengthPrefixed(string.utf8) }

    /// Appends the string's UTF-8 as it is, with no length: for keys such as
    /// `packID \0 path`, whose parts sort byte by byte.
    public mutating func rawString(_ string: String) { bytes.append(contentsOf: string.utf8) }

    private mutating func integer<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Lends the bytes written. See ``IndexBytes``.
    @inlinable
    public func withIndexBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try bytes.withIndexBytes(body)
    }
}
