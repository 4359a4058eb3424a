/// Reads a record that ``ByteWriter`` laid out, from bytes it does not own —
/// typically a value that points into the map, inside a transaction's body.
///
/// Every read returns `nil` when the input is too short (or a string is not
/// valid UTF-8), and then consumes nothing, so a truncated or corrupt record
/// is reported, never a crash:
///
/// ```swift
/// var r = ByteReader(value)
/// guard let version = r.u32(), let size = r.u64(), let name = r.string() else {
///     throw StoreError.corruptRecord(id)
/// }
/// ```
public struct ByteReader {
    /// The bytes being read.
    public let bytes: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    public private(set) var offset = 0

    /// A reader at the start of `bytes`, which must outlive it.
    public init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The number of bytes left.
    public var remaining: Int { bytes.count - offset }
    /// Whether every byte was read; records end exactly.
    public var isAtEnd: Bool { offset == bytes.count }

    /// Reads one byte.
    public mutating func u8() -> UInt8? { integer() }
    /// Reads 2 bytes, little-endian.
    public mutating func u16() -> UInt16? { integer() }
    /// Reads 4 bytes, little-endian.
    public mutating func u32() -> UInt32? { integer() }
    /// Reads 8 bytes, little-endian.
    public mutating func u64() -> UInt64? { integer() }
    /// Reads 8 bytes, two's complement little-endian.
    public mutating func i64() -> Int64? { integer().map { Int64(bitPattern: $0) } }
    /// Reads 8 bytes, big-endian.
    public mutating func u64BigEndian() -> UInt64? { (integer() as UInt64?).map { $0.byteSwapped } }

    /// The next `count` bytes, without copying: valid as long as ``bytes``.
    public mutating func bytes(count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    /// A copy of the next `count` bytes.
    public mutating func array(count: Int) -> [UInt8]? { bytes(count: count).map(Array.init) }

    /// Bytes written by ``ByteWriter/lengthPrefixed(_:)``, without copying.
    public mutating func lengthPrefixed() -> UnsafeRawBufferPointer? {
        let start = offset
        guard let length = u32(), let result = bytes(count: Int(length)) else {
            offset = start
            return nil
        }
        return result
    }

    /// A string written by ``ByteWriter/string(_:)``; `nil` if short or not UTF-8.
    public mutating func string() -> String? {
        let start = offset
        guard let utf8 = lengthPrefixed(), let string = String(validating: utf8, as: UTF8.self) else {
            offset = start
            return nil
        }
        return string
    }

    /// The rest of the bytes as a UTF-8 string; `nil` if not UTF-8.
    public mutating func remainingString() -> String? {
        let start = offset
        guard let utf8 = bytes(count: remaining), let string = String(validating: utf8, as: UTF8.self) else {
            offset = start
            return nil
        }
        return string
    }

    private mutating func integer<T: FixedWidthInteger>() -> T? {
        let size = MemoryLayout<T>.size
        guard size <= remaining else { return nil }
        defer { offset += size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
