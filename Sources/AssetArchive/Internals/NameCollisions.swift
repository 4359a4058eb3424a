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
    /// `/`), in `paths` order.
    static func check(_ paths: [String], archive: String) throws(ArchiveError) {
        var seen = Set<String>(minimumCapacity: paths.count)
        for path in paths where !seen.insert(path).inserted {
            throw .duplicateMember(archive: archive, path: path)
        }
        // Folded name (without a directory's slash) -> the first path.
        var folded = [String: String](minimumCapacity: paths.count)
        for path in paths {
            let isDirectory = path.utf8.last == UInt8(ascii: "/")
            let key = fold(isDirectory ? path.dropLast() : Substring(path))
            guard let other = folded[key] else {
                folded[key] = path
                continue
            }
            let otherIsDirectory = other.utf8.last == UInt8(ascii: "/")
            switch (isDirectory, otherIsDirectory) {
            case (true, true): continue
            case (false, false): throw .caseCollision(archive: archive, path: path, with: other)
            case (false, true): throw .fileDirectoryCollision(archive: archive, file: path, member: other)
            case (true, false): throw .fileDirectoryCollision(archive: archive, file: other, member: path)
            }
        }
        // A file's name as a directory of another member: `a` and `a/b`.
        for path in paths {
            let key = fold(Substring(path))
            var index = key.utf8.startIndex
            while let slash = key.utf8[index...].firstIndex(of: UInt8(ascii: "/")) {
                if let file = folded[String(key[..<slash])], file.utf8.last != UInt8(ascii: "/") {
                    throw .fileDirectoryCollision(archive: archive, file: file, member: path)
                }
                index = key.utf8.index(after: slash)
            }
        }
    }

    /// `name` lowercased; ASCII without allocating when already lowercase.
    /// Lowercasing maps scalar by scalar and never makes or removes a `/`,
    /// so the folded prefix up to a slash is the fold of the prefix.
    private static func fold(_ name: Substring) -> String {
        if name.utf8.allSatisfy({ $0 < 0x80 && !($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }) {
            return String(name)
        }
        return name.lowercased()
    }
}
