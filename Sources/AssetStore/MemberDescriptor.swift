public import AssetSystem

/// A file descriptor with the byte range that holds one member, as Android's
/// `AssetFileDescriptor`. Read-only and close-on-exec; its owner closes it.
///
/// Unless asked for with ``DescriptorOptions/ownOffset``, the descriptor is
/// a `dup` of one the store keeps open (the archive's, or the cached memory
/// file's), as Android's are of the APK's: it shares one open file
/// description, and so one file position, with every other such handout of
/// the same file in this process. Reading with `pread` (or `mmap` of the
/// range) is safe however many hold it; `read` and `lseek` move the position
/// for all of them. The position is set to ``offset`` at each handout. The
/// bytes never change either way: an archive is never written once
/// installed, and a memory file is sealed.
public struct MemberDescriptor: ~Copyable, Sendable {
    /// Where the bytes come from.
    public enum Source: String, Sendable {
        /// The installed archive: the member is the range
        /// `offset ..< offset + length` of it (a stored member).
        case archive
        /// A sealed memory file holding exactly the member at offset 0
        /// (a deflated member, or any member asked for standalone).
        case memory
    }

    /// The descriptor. Its file position is at `offset` when handed out.
    public let descriptor: FileDescriptor
    /// Where the member starts in the file.
    public let offset: Int64
    /// The member's length in bytes.
    public let length: Int64
    public let source: Source
    /// The CRC-32 the member's bytes must have (the index's record of it).
    public let crc32: UInt32
    /// For a memory file: the ``MemoryFileCache/File/id`` of the file it
    /// opens, the same for every handout of that file.
    public let memoryFile: Int?

    public init(descriptor: consuming FileDescriptor, offset: Int64, length: Int64, source: Source, crc32: UInt32,
                memoryFile: Int? = nil) {
        self.descriptor = descriptor
        self.offset = offset
        self.length = length
        self.source = source
        self.crc32 = crc32
        self.memoryFile = memoryFile
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

    /// A new open file description, with a file position of its own, instead
    /// of a `dup` that shares one (see ``MemberDescriptor``): for a consumer
    /// that reads with `read` while others may read the same file, and for
    /// a descriptor passed to another process. Costs an `open` per handout
    /// (of the archive by name, or of a memory file through `/proc/self/fd`).
    public static let ownOffset = DescriptorOptions(rawValue: 2)
}
