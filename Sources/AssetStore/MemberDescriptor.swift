public import AssetSystem

/// A file descriptor with the byte range that holds one member, as Android's
/// `AssetFileDescriptor`. Read-only and close-on-exec; its owner closes it.
public struct MemberDescriptor: ~Copyable, Sendable {
    /// Where the bytes come from.
    public enum Source: String, Sendable {
        /// A new description of the installed archive: the member is the
        /// range `offset ..< offset + length` of it (a stored member).
        case archive
        /// A sealed memory file holding exactly the member at offset 0
        /// (a deflated member, or any member asked for standalone).
        case memory
    }

    /// The descriptor. Its file position is at `offset`.
    public let descriptor: FileDescriptor
    /// Where the member starts in the file.
    public let offset: Int64
    /// The member's length in bytes.
    public let length: Int64
    public let source: Source
    /// The CRC-32 the member's bytes must have (the index's record of it).
    public let crc32: UInt32

    public init(descriptor: consuming FileDescriptor, offset: Int64, length: Int64, source: Source, crc32: UInt32) {
        self.descriptor = descriptor
        self.offset = offset
        self.length = length
        self.source = source
        self.crc32 = crc32
    }

    /// Gives up ownership of the descriptor and returns its number.
    public consuming func take() -> Int32 { descriptor.take() }
}

/// How ``AssetStore/descriptor(for:inPack:options:)`` hands out a member.
public struct DescriptorOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Always a descriptor of exactly the member's bytes at offset 0 (a
    /// sealed memory file), for consumers that cannot take an offset.
    public static let standalone = DescriptorOptions(rawValue: 1)
}
