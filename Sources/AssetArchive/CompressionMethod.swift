/// How a member's data is stored in the archive: the ZIP "compression
/// method" field. Packs use only these two.
public enum CompressionMethod: UInt16, Sendable {
    /// Method 0: the data is the member's bytes, uncompressed.
    case stored = 0
    /// Method 8: raw deflate (RFC 1951), as zlib writes with window bits -15.
    case deflated = 8
}
