#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
        if provablyDistinct(paths) { return }
        try check(paths, archive: archive, collidingHashes: false)
    }

    /// Whether `paths` certainly hold no collision, decided in one
    /// sequential pass with no table (``DistinctProof``). `false` says only
    /// "look the long way", which then finds and names the first collision.
    static func provablyDistinct(_ paths: [String]) -> Bool {
        var proof = DistinctProof()
        for path in paths {
            proof.add(path)
            if !proof.holds { return false }
        }
        return true
    }

    /// The proof of ``provablyDistinct(_:)``, fed one name at a time, so a
    /// walk over a million records needs no array of their names: it keeps
    /// the last name and a stack of its prefixes, nothing per name.
    ///
    /// It holds for the archives this package writes (sorted by their bytes)
    /// of ASCII names without capitals (each its own fold), where the
    /// tables' look-ups missed the cache at every step of a million names.
    /// In byte order, the names that start with a file's name come right
    /// after it, so a file and a name below it (`a` and `a/b`, or the
    /// directory entry `a/`) meet on a stack of the files that are
    /// prefixes of the current name; distinct names that are their own
    /// folds cannot fold alike.
    struct DistinctProof {
        private var previous: [UInt8] = []
        /// The files on the stack are prefixes of `top` of these lengths.
        private var top: [UInt8] = []
        private var lengths: [Int] = []
        /// Whether every name added so far is certainly distinct; once
        /// `false`, it stays so and names are no longer looked at.
        private(set) var holds = true

        /// Adds the next name (a directory entry's ends in `/`).
        mutating func add(_ path: String) {
            guard holds else { return }
            var path = path
            let fine = path.withUTF8 { add($0) }
            holds = fine
        }

        private mutating func add(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            for byte in bytes where byte >= 0x80 || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) { return false }
            guard previous.isEmpty || previous.lexicographicallyPrecedes(bytes) else { return false }
            previous.removeAll(keepingCapacity: true)
            previous.append(contentsOf: bytes)
            let isDirectory = bytes.last == UInt8(ascii: "/")
            let name = isDirectory ? UnsafeBufferPointer(rebasing: bytes.dropLast()) : bytes
            while let length = lengths.last, !(length <= name.count && top.prefix(length).elementsEqual(name.prefix(length))) {
                lengths.removeLast()
            }
            if let length = lengths.last, length == name.count || name[length] == UInt8(ascii: "/") { return false }
            if !isDirectory {
                top.removeAll(keepingCapacity: true)
                top.append(contentsOf: name)
                lengths.append(name.count)
            }
            return true
        }
    }

    /// ``check(_:archive:)``; with `collidingHashes` (for tests) every
    /// name hashes alike, so that each lookup probes past all the others.
    ///
    /// The tables are keyed by a hash of the folded bytes and hold indices
    /// into `paths`, each match confirmed against the bytes: no string is
    /// made, hashed as a `String` or retained per name and directory, which
    /// made this check a third of an install of many small members. The
    /// hash is the standard library's (seeded per process), so an archive
    /// cannot be made to collide on purpose.
    static func check(_ paths: [String], archive: String, collidingHashes: Bool) throws(ArchiveError) {
        // Folded name (a directory's without its slash) -> the index of a path with it.
        var names = Table(capacity: paths.count)
        // Folded directory above some member -> the index of the first such member.
        var directories = Table(capacity: 0)
        var bytes: [UInt8] = []
        var above: [(end: Int, hash: Int)] = []
        /// Whether path `i`, folded, is `bytes[..<count]` (a directory's slash aside).
        func isName(_ i: Int, _ count: Int) -> Bool {
            withFolded(paths[i]) { c in
                (c.count == count || (c.count == count + 1 && c[count] == UInt8(ascii: "/"))) && samePrefix(c, bytes, count)
            }
        }
        /// Whether path `i`, folded, lies in directory `bytes[..<count]`.
        func isBelow(_ i: Int, _ count: Int) -> Bool {
            withFolded(paths[i]) { c in c.count > count && c[count] == UInt8(ascii: "/") && samePrefix(c, bytes, count) }
        }
        for (index, path) in paths.enumerated() {
            let isDirectory = path.utf8.last == UInt8(ascii: "/")
            withFolded(path) { folded in
                bytes.removeAll(keepingCapacity: true)
                bytes.append(contentsOf: isDirectory ? UnsafeBufferPointer(rebasing: folded.dropLast()) : folded)
            }
            let hash = hashes(of: bytes, directories: &above, colliding: collidingHashes)
            let found = names.find(hash, bytes.count) { isName($0, bytes.count) }
            names.set(found.slot, hash: hash, length: bytes.count, index)
            if let o = found.index {
                let other = paths[o]
                if other == path { throw .duplicateMember(archive: archive, path: path) }
                switch (isDirectory, other.utf8.last == UInt8(ascii: "/")) {
                case (true, true): break  // either directory may stand for both
                case (false, false): throw .caseCollision(archive: archive, path: path, with: other)
                case (false, true): throw .fileDirectoryCollision(archive: archive, file: path, member: other)
                case (true, false): throw .fileDirectoryCollision(archive: archive, file: other, member: path)
                }
            } else if !isDirectory, let member = directories.find(hash, bytes.count, { isBelow($0, bytes.count) }).index {
                throw .fileDirectoryCollision(archive: archive, file: path, member: paths[member])
            }
            // The directories above, longest first; one seen before has had
            // its own recorded, and been checked against the files.
            for (end, hash) in above.reversed() {
                let slot = directories.find(hash, end) { isBelow($0, end) }
                guard slot.index == nil else { break }
                if let file = names.find(hash, end, { isName($0, end) }).index, paths[file].utf8.last != UInt8(ascii: "/") {
                    throw .fileDirectoryCollision(archive: archive, file: paths[file], member: path)
                }
                directories.set(slot.slot, hash: hash, length: end, index)
            }
        }
    }

    /// The hash of `name`, and in `directories` that of each directory
    /// above it (the bytes before each `/`) with its length. A directory
    /// hashes as the same bytes as a name would: they are fed to the hasher
    /// in the same pieces, split before each slash.
    private static func hashes(of name: [UInt8], directories: inout [(end: Int, hash: Int)], colliding: Bool) -> Int {
        directories.removeAll(keepingCapacity: true)
        return name.withUnsafeBytes { bytes in
            var hasher = Hasher()
            var start = 0
            for end in bytes.indices where bytes[end] == UInt8(ascii: "/") {
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end
                let copy = hasher
                directories.append((end, colliding ? 0 : copy.finalize()))
            }
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes[start...]))
            return colliding ? 0 : hasher.finalize()
        }
    }

    /// Whether the first `count` bytes of `a` and `b` (both at least that long) are equal.
    private static func samePrefix(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8], _ count: Int) -> Bool {
        count == 0 || b.withUnsafeBufferPointer { b in memcmp(a.baseAddress!, b.baseAddress!, count) == 0 }
    }

    /// Indices of paths by the hash and length of their folded bytes (a
    /// directory: of the bytes before its slash in that path): open
    /// addressing on the hash itself (seeded, so it spreads), probing on
    /// past entries of other hashes or lengths, or of other names with the
    /// same ones. Nothing is ever removed.
    private struct Table {
        private struct Entry {
            var hash = 0
            var length = 0
            /// Into `paths`; -1 when the slot is free.
            var index = -1
        }
        private var entries: [Entry]
        private var count = 0

        init(capacity: Int) { entries = Self.slots(for: capacity) }

        private static func slots(for count: Int) -> [Entry] {
            var size = 16
            while size < 2 * count { size *= 2 }
            return [Entry](repeating: Entry(), count: size)
        }

        /// The slot of the entry with `hash` and `length` that `matches`
        /// accepts, and its index; or the free slot where it would go, and
        /// `nil`. A slot is good until the next ``set(_:hash:length:_:)``.
        func find(_ hash: Int, _ length: Int, _ matches: (Int) -> Bool) -> (slot: Int, index: Int?) {
            let mask = entries.count - 1
            var slot = hash & mask
            while entries[slot].index >= 0 {
                let entry = entries[slot]
                if entry.hash == hash && entry.length == length && matches(entry.index) { return (slot, entry.index) }
                slot = (slot + 1) & mask
            }
            return (slot, nil)
        }

        /// Stores `index` in `slot`, which ``find(_:_:_:)`` returned for
        /// `hash` and `length`.
        mutating func set(_ slot: Int, hash: Int, length: Int, _ index: Int) {
            if entries[slot].index >= 0 {
                entries[slot].index = index
                return
            }
            entries[slot] = Entry(hash: hash, length: length, index: index)
            count += 1
            guard 2 * count > entries.count else { return }
            let old = entries
            entries = Self.slots(for: count)
            let mask = entries.count - 1
            for entry in old where entry.index >= 0 {
                var slot = entry.hash & mask
                while entries[slot].index >= 0 { slot = (slot + 1) & mask }
                entries[slot] = entry
            }
        }
    }

    /// Calls `body` with `name` lowercased and in NFC, as UTF-8: two names
    /// that fold alike are canonically equivalent after lowercasing, as
    /// `String` compares them. Lowercasing maps scalar by scalar and never
    /// makes or removes a `/`, and NFC never composes across one, so the
    /// folded prefix up to a slash is the fold of the prefix. An ASCII name
    /// without capitals is its own fold, read in place.
    private static func withFolded<R>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        var text = name
        return text.withUTF8 { bytes in
            for byte in bytes where byte >= 0x80 || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) {
                var folded = MemberPath.normalized(name.lowercased())
                return folded.withUTF8(body)
            }
            return body(bytes)
        }
    }
}
