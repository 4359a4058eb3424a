internal import CLibdeflate

/// The CRC-32 of ZIP, gzip and PNG (polynomial 0xEDB88320, reflected), as
/// zlib computes it.
public enum CRC32 {
    /// The CRC-32 of `bytes`, continuing from `crc`, the CRC-32 of the bytes
    /// before them (0 to start).
    ///
    /// The corresponding C function is libdeflate's `libdeflate_crc32`,
    /// which gives zlib's `crc32` values (and carry-less multiplication
    /// makes it several times faster than zlib's, on a pack's every byte).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return libdeflate_crc32(crc, base, bytes.count)
    }
}
