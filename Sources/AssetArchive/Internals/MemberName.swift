/// How a central record's name bytes become a member path.
///
/// - General-purpose bit 11 set: the bytes are UTF-8 (APPNOTE 4.4.4), and
///   must be valid.
/// - Bit 11 clear, with an Info-ZIP Unicode Path extra field (`0x7075`,
///   APPNOTE 4.6.9) of version 1 whose CRC-32 is that of the name bytes, in
///   the central record: the field's UTF-8 name. A field whose CRC-32 does
///   not match belongs to a name some tool changed afterwards, and is
///   ignored, as APPNOTE says; so is one that disagrees with the name about
///   being a directory (a trailing `/`).
/// - Bit 11 clear, otherwise: bytes that are valid UTF-8 (ASCII included)
///   are read as UTF-8, as macOS and older Info-ZIP write them without the
///   flag; anything else is CP437, the specification's default. A CP437
///   name that happens to be valid UTF-8 needs box-drawing characters before
///   accented letters, which real names do not have.
///
/// The raw bytes must be a safe path apart from their encoding, and so must
/// the name chosen, so no reader sees a traversal whichever name it takes.
/// The result is in NFC.
struct MemberName {
    /// The path, NFC, with a directory's trailing `/`.
    var path: String
    /// Whether the name ends in `/`.
    var isDirectory: Bool

    static func decode(
        _ bytes: UnsafeRawBufferPointer, nameStart: Int, nameCount: Int, extra: Range<Int>, flags: UInt16,
        archive: String
    ) throws(ArchiveError) -> MemberName {
        let raw = bytes.slice(nameStart, nameCount)
        let rawProblem = problem(raw)
        let flagged = flags & ZipFormat.flagUTF8 != 0
        if let rawProblem, rawProblem != .invalidUTF8 || flagged {
            let shown = flagged || MemberPath.isValidUTF8(raw) ? MemberPath.display(raw) : CP437.decode(raw)
            throw .unsafePath(archive: archive, path: shown, reason: rawProblem)
        }
        let isDirectory = nameCount > 0 && raw[nameCount - 1] == UInt8(ascii: "/")
        if !flagged, let unicode = unicodePath(bytes, raw: raw, extra: extra),
           (unicode.last == UInt8(ascii: "/")) == isDirectory {
            if let problem = problem(unicode) {
                throw .unsafePath(archive: archive, path: MemberPath.display(unicode), reason: problem)
            }
            return MemberName(path: MemberPath.normalized(String(decoding: unicode, as: UTF8.self)), isDirectory: isDirectory)
        }
        let text = rawProblem == nil ? String(decoding: raw, as: UTF8.self) : CP437.decode(raw)
        return MemberName(path: MemberPath.normalized(text), isDirectory: isDirectory)
    }

    /// The path problem of a name, its directory slash aside.
    private static func problem(_ name: UnsafeRawBufferPointer) -> ArchiveError.PathProblem? {
        let isDirectory = name.count > 0 && name[name.count - 1] == UInt8(ascii: "/")
        let path = isDirectory ? UnsafeRawBufferPointer(rebasing: name[..<(name.count - 1)]) : name
        guard let problem = MemberPath.problem(in: path) else { return nil }
        return isDirectory && problem == .empty ? .absolute : problem  // the name is "/"
    }

    /// The UTF-8 name of a Unicode Path extra field that applies to `raw`:
    /// version 1, CRC-32 of `raw`. A malformed extra block has no such field.
    private static func unicodePath(
        _ bytes: UnsafeRawBufferPointer, raw: UnsafeRawBufferPointer, extra: Range<Int>
    ) -> UnsafeRawBufferPointer? {
        guard !extra.isEmpty,
              let field = try? ExtraFields.find(ZipFormat.unicodePathExtraID, in: bytes, block: extra),
              field.count >= 5, bytes[field.lowerBound] == 1,
              bytes.u32(field.lowerBound + 1) == CRC32.checksum(raw)
        else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[field.lowerBound + 5 ..< field.upperBound])
    }
}
