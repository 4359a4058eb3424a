/// The names of one archive, checked against each other the way a file
/// system would see them if the pack were extracted: no two canonically
/// equivalent names, no two that differ only in case, and no file whose
/// name is also a directory of another member.
///
/// Case is compared after Unicode lowercasing, which is how case-insensitive
/// file systems (APFS and HFS+ by default, NTFS, FAT) fold names closely
/// enough: two names that fold alike would land on one file there. Two
/// directories that fold alike (`A/` and `a/`) merge harmlessly and are
/// allowed; their files are still checked.
enum NameCollisions {
    /// Throws the first collision among `paths` (directory entries end in
    /// `/`), in `paths` order. One pass: each name is folded once, and each
    /// directory above a name is recorded once.
    static func check(_ paths: [String], archive: String) throws(ArchiveError) {
        // Folded name (a directory's without its slash) -> a path with it.
        var names = [String: String](minimumCapacity: paths.count)
        // Folded directory above some member -> the first such member.
        var directories: [String: String] = [:]
        for path in paths {
            let isDirectory = path.utf8.last == UInt8(ascii: "/")
            let folded = fold(path)
            let name = isDirectory ? String(folded.dropLast()) : folded
            if let other = names.updateValue(path, forKey: name) {
                if other == path { throw .duplicateMember(archive: archive, path: path) }
                switch (isDirectory, other.utf8.last == UInt8(ascii: "/")) {
                case (true, true): break  // either directory may stand for both
                case (false, false): throw .caseCollision(archive: archive, path: path, with: other)
                case (false, true): throw .fileDirectoryCollision(archive: archive, file: path, member: other)
                case (true, false): throw .fileDirectoryCollision(archive: archive, file: other, member: path)
                }
            } else if !isDirectory, let member = directories[name] {
                throw .fileDirectoryCollision(archive: archive, file: path, member: member)
            }
            // The directories above, longest first; one seen before has had
            // its own recorded, and been checked against the files.
            var end = name.utf8.endIndex
            while let slash = name.utf8[..<end].lastIndex(of: UInt8(ascii: "/")) {
                let directory = String(name[..<slash])
                guard directories[directory] == nil else { break }
                if let file = names[directory], file.utf8.last != UInt8(ascii: "/") {
                    throw .fileDirectoryCollision(archive: archive, file: file, member: path)
                }
                directories[directory] = path
                end = slash
            }
        }
    }

    /// `name` lowercased; returned as it is when it is ASCII without
    /// capitals. Lowercasing maps scalar by scalar and never makes or
    /// removes a `/`, so the folded prefix up to a slash is the fold of the
    /// prefix.
    private static func fold(_ name: String) -> String {
        for byte in name.utf8 where byte >= 0x80 || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) {
            return name.lowercased()
        }
        return name
    }
}
