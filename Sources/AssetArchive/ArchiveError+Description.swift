extension ArchiveError {
    /// The archive the error concerns.
    public var archive: String {
        switch self {
        case .notAnArchive(let a), .truncated(let a), .unsafePath(let a, _, _), .nonRegularEntry(let a, _, _),
             .duplicateMember(let a, _), .caseCollision(let a, _, _), .fileDirectoryCollision(let a, _, _),
             .encrypted(let a, _), .unsupportedMethod(let a, _, _),
             .headerMismatch(let a, _, _), .malformedEntry(let a, _, _), .overlap(let a, _, _),
             .outOfBounds(let a, _, _), .inconsistentDirectory(let a, _), .crcMismatch(let a, _, _, _),
             .sizeMismatch(let a, _, _, _), .corruptData(let a, _, _), .io(let a, _),
             .unreadableSource(let a, _, _, _), .invalidComment(let a, _):
            return a
        }
    }

    /// The member path the error concerns, if it concerns one.
    public var path: String? {
        switch self {
        case .unsafePath(_, let p, _), .nonRegularEntry(_, let p, _), .duplicateMember(_, let p),
             .caseCollision(_, let p, _), .fileDirectoryCollision(_, _, let p),
             .encrypted(_, let p), .unsupportedMethod(_, let p, _), .headerMismatch(_, let p, _),
             .malformedEntry(_, let p, _), .overlap(_, let p, _), .outOfBounds(_, let p, _),
             .crcMismatch(_, let p, _, _), .sizeMismatch(_, let p, _, _), .corruptData(_, let p, _),
             .unreadableSource(_, let p, _, _):
            return p
        case .notAnArchive, .truncated, .inconsistentDirectory, .io, .invalidComment:
            return nil
        }
    }

    /// One line: the archive, the member, and what is wrong with them.
    /// Control characters in names (C0, DEL and C1) are shown escaped
    /// (`\x00`, `\x1b`, `\u{85}`).
    public var description: String {
        let subject = path.map { "archive '\(shown(archive))', member '\(shown($0))'" } ?? "archive '\(shown(archive))'"
        return "\(subject): \(message)"
    }

    private func shown(_ text: String) -> String { MemberPath.escapingControlCharacters(text) }

    private var message: String {
        switch self {
        case .notAnArchive:
            return "not a ZIP archive (no end-of-central-directory record)"
        case .truncated:
            return "the file is truncated (it ends before the ZIP end records)"
        case .unsafePath(_, _, let reason):
            return "unsafe member path: \(reason.message)"
        case .nonRegularEntry(_, _, let kind):
            return "not a regular file: the entry is \(kind.message)"
        case .duplicateMember:
            return "the path appears more than once"
        case .caseCollision(_, _, let other):
            return "the path differs only in case from '\(shown(other))'"
        case .fileDirectoryCollision(_, let file, _):
            return "the path needs '\(shown(file))' to be a directory, and it is a file"
        case .encrypted:
            return "the member is encrypted, which packs do not support"
        case .unsupportedMethod(_, _, let method):
            return "compression method \(method) is not supported (only 0, stored, and 8, deflated)"
        case .headerMismatch(_, _, let field):
            return "the local header disagrees with the central directory about the \(field.message)"
        case .malformedEntry(_, _, let problem):
            return problem.message
        case .overlap(_, _, .member(let other)):
            return "the member's bytes overlap those of member '\(other)'"
        case .overlap(_, _, .centralDirectory):
            return "the member's bytes overlap the central directory"
        case .outOfBounds(_, _, let part):
            return "the member's \(part.message) reaches past the end of the file"
        case .inconsistentDirectory(_, let problem):
            return problem.message
        case .crcMismatch(_, _, let expected, let actual):
            return "CRC-32 mismatch: declared \(hex(expected)), data has \(hex(actual))"
        case .sizeMismatch(_, _, let declared, .moreThanDeclared):
            return "the data inflates to more than the declared \(declared) bytes"
        case .sizeMismatch(_, _, let declared, .fewer(let actual)):
            return "the data inflates to \(actual) bytes, not the declared \(declared)"
        case .corruptData(_, _, let detail):
            return "corrupt deflate data: \(detail)"
        case .io(_, let error):
            return "I/O error: \(error)"
        case .unreadableSource(_, _, let source, .system(let error)):
            return "cannot read source file '\(source)': \(error.message)"
        case .unreadableSource(_, _, let source, .notRegularFile):
            return "source '\(source)' is not a regular file"
        case .unreadableSource(_, _, let source, .changedWhileReading):
            return "source file '\(source)' changed while it was being read"
        case .invalidComment(_, let length):
            return "the archive comment (\(length) bytes) is longer than 65535 bytes or contains 'PK\\5\\6'"
        }
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}

extension ArchiveError.PathProblem {
    fileprivate var message: String {
        switch self {
        case .parentTraversal: return "it contains a '..' component"
        case .absolute: return "it is absolute"
        case .backslash: return "it contains a backslash"
        case .nulByte: return "it contains a NUL byte"
        case .invalidUTF8: return "it is not valid UTF-8"
        case .empty: return "it is empty"
        case .emptyComponent: return "it has an empty component"
        case .currentDirectoryComponent: return "it contains a '.' component"
        case .tooLong: return "it is longer than 65535 bytes"
        }
    }
}

extension ArchiveError.EntryKind {
    fileprivate var message: String {
        switch self {
        case .symbolicLink: return "a symbolic link"
        case .fifo: return "a FIFO"
        case .characterDevice: return "a character device"
        case .blockDevice: return "a block device"
        case .socket: return "a socket"
        case .directory: return "a directory whose name does not end in '/'"
        case .unknown(let mode): return "of unknown type (mode \(String(mode, radix: 8)))"
        }
    }
}

extension ArchiveError.HeaderField {
    fileprivate var message: String {
        switch self {
        case .signature: return "signature (no local header where the central directory points)"
        case .name: return "name"
        case .method: return "compression method"
        case .flags: return "general-purpose flags"
        case .crc32: return "CRC-32"
        case .compressedSize: return "compressed size"
        case .uncompressedSize: return "uncompressed size"
        }
    }
}

extension ArchiveError.EntryProblem {
    fileprivate var message: String {
        switch self {
        case .extraField: return "the central directory record's extra field is malformed or lacks a ZIP64 value"
        case .storedSizes: return "a stored member's compressed and uncompressed sizes differ"
        case .impossibleRatio: return "the declared size is larger than deflate can expand the compressed data to"
        case .directoryWithData: return "a directory entry has data"
        }
    }
}

extension ArchiveError.MemberPart {
    fileprivate var message: String {
        switch self {
        case .localHeader: return "local header"
        case .data: return "data"
        case .dataDescriptor: return "data descriptor"
        }
    }
}

extension ArchiveError.DirectoryProblem {
    fileprivate var message: String {
        switch self {
        case .multipleDisks:
            return "the archive spans several disks, which is not supported"
        case .entryCount(let declared, let found):
            return "the end record declares \(declared) entries but the central directory holds \(found)"
        case .centralDirectoryBounds(let offset, let size):
            return "the central directory's declared offset \(offset) and size \(size) do not end where the end records begin"
        case .malformedRecord(let index):
            return "central directory record #\(index) is malformed"
        case .zip64EndRecord:
            return "the ZIP64 end records are malformed or disagree with the end record"
        case .unaccountedBytes(let offset, let count):
            return "\(count) bytes at offset \(offset) belong to no member (prefix, gap or trailing data)"
        }
    }
}
