internal import CZlib

/// The CRC-32 of ZIP, gzip and PNG (polynomial 0xEDB88320, reflected), as
/// zlib computes it.
public enum CRC32 {
    /// The CRC-32 of `bytes`, continuing from `crc`, the CRC-32 of the bytes
    /// before them (0 to start).
    ///
    /// The corresponding C function is zlib's `crc32_z`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return UInt32(truncatingIfNeeded: crc32_z(UInt(crc), base.assumingMemoryBound(to: UInt8.self), bytes.count))
    }
}
