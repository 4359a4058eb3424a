public import AssetSystem

/// Every way reading or writing a pack archive can fail.
///
/// Each case names the archive (the `archive` string given to the reader or
/// the writer) and, where one is concerned, the member path. Reasons that
/// come in several kinds carry a small enum, so a caller can match the exact
/// failure: `catch ArchiveError.unsafePath(_, _, .parentTraversal)`.
/// ``description`` is a one-line message a person can act on.
public enum ArchiveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file has no end-of-central-directory record and does not start
    /// like a ZIP archive: it is not one (an empty file included).
    case notAnArchive(archive: String)

    /// The file starts like a ZIP archive, or ends in part of an
    /// end-of-central-directory record, but ends before the records it needs.
    case truncated(archive: String)

    /// A member name that is not a safe, relative, normalized path.
    /// `path` is the name as well as it can be shown (invalid UTF-8 is
    /// replaced by U+FFFD).
    case unsafePath(archive: String, path: String, reason: PathProblem)

    /// A member whose Unix file type is not a regular file or a directory.
    case nonRegularEntry(archive: String, path: String, kind: EntryKind)

    /// Two members with the same name (byte for byte, or canonically
    /// equivalent Unicode). Also thrown by the writer for repeated paths.
    case duplicateMember(archive: String, path: String)

    /// Two members whose names differ only in case (`Read.me` and
    /// `README.ME`): one file on a case-insensitive file system. Also thrown
    /// by the writer.
    case caseCollision(archive: String, path: String, with: String)

    /// A file whose name is also a directory of another member (`a` beside
    /// `a/b` or `a/`, compared ignoring case): the two cannot both exist on
    /// a file system. Also thrown by the writer.
    case fileDirectoryCollision(archive: String, file: String, member: String)

    /// A member that is encrypted (general-purpose flag bit 0, 6 or 13).
    case encrypted(archive: String, path: String)

    /// A member compressed with a method other than stored (0) or deflated (8).
    case unsupportedMethod(archive: String, path: String, method: UInt16)

    /// A member's local header (or data descriptor) disagrees with its
    /// central-directory record about `field`.
    case headerMismatch(archive: String, path: String, field: HeaderField)

    /// A central-directory record that contradicts itself.
    case malformedEntry(archive: String, path: String, problem: EntryProblem)

    /// A member's bytes (local header through data descriptor) overlap
    /// another member or the central directory.
    case overlap(archive: String, path: String, with: OverlapTarget)

    /// A member's local header, data or data descriptor reaches past the end
    /// of the file.
    case outOfBounds(archive: String, path: String, part: MemberPart)

    /// The end records and the central directory disagree with each other or
    /// with the file: counts, offsets and sizes that lie, several disks,
    /// bytes that belong to nothing.
    case inconsistentDirectory(archive: String, problem: DirectoryProblem)

    /// A member's data does not have the CRC-32 its headers declare.
    case crcMismatch(archive: String, path: String, expected: UInt32, actual: UInt32)

    /// A member's data does not inflate to the size its headers declare.
    /// Inflation never writes past the declared size.
    case sizeMismatch(archive: String, path: String, declared: UInt64, actual: ObservedSize)

    /// A deflated member whose compressed data is not a valid deflate stream
    /// of exactly its compressed size; `detail` says what zlib found.
    case corruptData(archive: String, path: String, detail: String)

    /// A system call failed while opening, mapping, reading or writing the
    /// archive file.
    case io(archive: String, error: Errno)

    /// The writer could not read a member's source file.
    case unreadableSource(archive: String, path: String, source: String, problem: SourceProblem)

    /// The writer was given an archive comment longer than 65,535 bytes or
    /// containing the end-of-central-directory signature `PK\5\6`.
    case invalidComment(archive: String, length: Int)
}

extension ArchiveError {
    /// Why a member path is refused.
    public enum PathProblem: Sendable, Equatable {
        /// A `..` component.
        case parentTraversal
        /// Starts with `/`, or with a drive letter such as `C:`.
        case absolute
        /// Contains `\`, a path separator elsewhere.
        case backslash
        /// Contains a NUL byte.
        case nulByte
        /// The name is flagged as UTF-8 (general-purpose bit 11), or comes
        /// from an Info-ZIP Unicode Path field, and is not valid UTF-8.
        /// (An unflagged name that is not UTF-8 is read as CP437.)
        case invalidUTF8
        /// The name is empty.
        case empty
        /// An empty component (`a//b`, or a file name ending in `/`).
        case emptyComponent
        /// A `.` component.
        case currentDirectoryComponent
        /// Longer than the 65,535 bytes a ZIP name can hold (writer only).
        case tooLong
    }

    /// The file type an entry's Unix mode declares, when it is refused.
    public enum EntryKind: Sendable, Equatable {
        /// A symbolic link (mode 0o120000).
        case symbolicLink
        /// A named pipe (mode 0o010000), unless it is Info-ZIP's record of
        /// standard input, named `-`, which is read as a regular file.
        case fifo
        /// A character device (mode 0o020000).
        case characterDevice
        /// A block device (mode 0o060000).
        case blockDevice
        /// A Unix-domain socket (mode 0o140000).
        case socket
        /// A directory mode on a name that does not end in `/`.
        case directory
        /// A file-type value (`mode & 0o170000`) no system defines.
        case unknown(mode: UInt32)
    }

    /// The field a local header or data descriptor disagrees on.
    public enum HeaderField: Sendable, Equatable {
        /// No local-header signature where the central directory points.
        case signature
        /// The name bytes.
        case name
        /// The compression method.
        case method
        /// General-purpose flag bits 0, 3, 6 or 11.
        case flags
        /// The CRC-32 of the data.
        case crc32
        /// The number of data bytes in the archive.
        case compressedSize
        /// The number of bytes once inflated.
        case uncompressedSize
    }

    /// What is wrong inside one central-directory record.
    public enum EntryProblem: Sendable, Equatable {
        /// The extra field is malformed, or lacks a ZIP64 value the record
        /// defers to it.
        case extraField
        /// A stored member whose compressed and uncompressed sizes differ.
        case storedSizes
        /// A deflated member declaring more than deflate can expand its
        /// compressed size to (about 1,032 : 1): a lie, or a zip bomb.
        case impossibleRatio
        /// A directory entry (name ending in `/`) with data.
        case directoryWithData
    }

    /// What a member overlaps.
    public enum OverlapTarget: Sendable, Equatable {
        /// Another member, by path.
        case member(String)
        /// The central directory, which members must end before.
        case centralDirectory
    }

    /// The part of a member that reaches past the end of the file.
    public enum MemberPart: Sendable, Equatable {
        /// The local header, with its name and extra field.
        case localHeader
        /// The member's data.
        case data
        /// The data descriptor after the data (flag bit 3).
        case dataDescriptor
    }

    /// How the end records and central directory lie.
    public enum DirectoryProblem: Sendable, Equatable {
        /// The archive claims to span several disks (or a member starts on
        /// another disk). Spanned archives are not supported.
        case multipleDisks
        /// The declared entry count differs from the records present.
        case entryCount(declared: UInt64, found: UInt64)
        /// The declared central-directory offset and size do not end where
        /// the end records begin, or point outside the file.
        case centralDirectoryBounds(offset: UInt64, size: UInt64)
        /// A central-directory record with a bad signature, or running past
        /// the end of the central directory; `index` counts from 0.
        case malformedRecord(index: Int)
        /// The ZIP64 locator or end record is malformed, misplaced, or
        /// disagrees with the classic end record.
        case zip64EndRecord
        /// Bytes that belong to no member: before the first local header (a
        /// self-extractor stub, for example), between members, between the
        /// last member and the central directory, or after the end record.
        case unaccountedBytes(offset: UInt64, count: UInt64)
    }

    /// What inflating a member produced instead of its declared size.
    public enum ObservedSize: Sendable, Equatable {
        /// More than declared; inflation stopped at the declared size.
        case moreThanDeclared
        /// The stream ended after this many bytes.
        case fewer(UInt64)
    }

    /// Why the writer could not read a source file.
    public enum SourceProblem: Sendable, Equatable {
        /// `open`, `fstat` or `pread` failed.
        case system(Errno)
        /// The source is a directory, device or other non-regular file.
        case notRegularFile
        /// The file changed size or content while it was being read.
        case changedWhileReading
    }
}
