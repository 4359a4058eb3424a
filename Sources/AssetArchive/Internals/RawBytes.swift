#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Little-endian field reads from an archive's bytes. Callers check bounds
/// first; these do not.
extension UnsafeRawBufferPointer {
    @inline(__always)
    func u16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The bytes `start ..< start + count`, without a bounds check in
    /// release builds.
    @inline(__always)
    func slice(_ start: Int, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: baseAddress.map { $0 + start }, count: count)
    }

    /// Whether `count` bytes at `start` equal those of `other` at `otherStart`.
    @inline(__always)
    func bytesEqual(_ start: Int, _ other: UnsafeRawBufferPointer, _ otherStart: Int, count: Int) -> Bool {
        guard count > 0 else { return true }
        return memcmp(baseAddress! + start, other.baseAddress! + otherStart, count) == 0
    }
}

/// Little-endian appends, for building headers.
extension Array where Element == UInt8 {
    @inline(__always)
    mutating func append16(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    @inline(__always)
    mutating func append32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    @inline(__always)
    mutating func append64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes`, keeping `ArchiveError` as the thrown type.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(ArchiveError) -> R) throws(ArchiveError) -> R {
        try withUnsafeBytes { bytes in Result { () throws(ArchiveError) in try body(bytes) } }.get()
    }
}
