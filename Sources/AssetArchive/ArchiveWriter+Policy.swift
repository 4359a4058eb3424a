extension ArchiveWriter {
    /// File extensions (lowercase, without the dot) whose data is already
    /// compressed: `.automatic` stores these members without trying deflate.
    /// Images, audio, video, archives and compressed streams, and web fonts.
    public static let storedExtensions: Set<String> = [
        "png", "jpg", "jpeg", "gif", "webp", "heic", "heif", "avif", "jxl",
        "mp3", "m4a", "aac", "ogg", "oga", "opus", "flac",
        "mp4", "m4v", "mov", "webm", "mkv", "avi",
        "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "br", "lz4", "lzma", "rar", "jar", "apk",
        "woff", "woff2",
    ]

    /// `.automatic` stores members smaller than this many bytes: deflate
    /// saves little on them, and stored members are read without a copy.
    public static let smallMemberLimit = 256

    /// The zlib compression level of deflated members. With a given zlib,
    /// the same bytes always deflate to the same output.
    public static let deflateLevel: Int32 = 9

    /// `.automatic` keeps deflated data only when it is smaller than this
    /// percentage of the original size; otherwise the member is stored.
    public static let deflateThresholdPercent: UInt64 = 97

    /// Stored members' data is aligned to this many bytes…
    public static let storedAlignment = 16

    /// …and to the page size (`MappedRegion.pageSize`) for members of at
    /// least this many bytes, so they can be mapped on their own.
    public static let pageAlignmentThreshold: UInt64 = 64 * 1024

    /// How a member will be written, once its name and size are known.
    enum Plan {
        /// Store the bytes as they are.
        case stored
        /// Deflate, whatever the result's size.
        case deflated
        /// Deflate, and fall back to stored when that does not pay.
        case deflatedIfSmaller
    }

    static func plan(_ compression: Compression, path: String, size: UInt64) -> Plan {
        switch compression {
        case .stored: return .stored
        case .deflated: return .deflated
        case .automatic:
            if size < UInt64(smallMemberLimit) { return .stored }
            return storedExtensions.contains(fileExtension(of: path)) ? .stored : .deflatedIfSmaller
        }
    }

    /// Whether `compressed` bytes of deflate for `original` bytes are worth
    /// keeping under `.automatic`.
    static func deflatePays(compressed: UInt64, original: UInt64) -> Bool {
        compressed.multipliedFullWidth(by: 100) < original.multipliedFullWidth(by: deflateThresholdPercent)
    }

    /// The lowercase extension of the last component of `path`, or "".
    static func fileExtension(of path: String) -> String {
        let last = path.split(separator: "/").last ?? ""
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return "" }
        return last[last.index(after: dot)...].lowercased()
    }
}
