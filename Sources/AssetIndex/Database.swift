/// A named database inside an ``Environment`` (an `MDB_dbi` handle), valid for
/// the environment's lifetime.
///
/// Get one from ``Environment/database(_:)``. A handle belongs to the
/// environment that opened it; using it with another environment is a
/// programming error LMDB cannot always detect.
public struct Database: Sendable, Hashable, CustomStringConvertible {
    /// The LMDB handle.
    let dbi: UInt32
    /// Whether the database keeps several sorted values per key (`MDB_DUPSORT`).
    public let isDuplicateSorted: Bool
    /// The database's name, as declared when the environment was opened.
    public let name: String

    init(dbi: UInt32, name: String, isDuplicateSorted: Bool) {
        self.dbi = dbi
        self.name = name
        self.isDuplicateSorted = isDuplicateSorted
    }

    /// The name.
    public var description: String { name }
}

/// Sizes of one database's B-tree, from ``ReadableTransaction/statistics(_:)``.
public struct DatabaseStatistics: Sendable, Equatable {
    /// The page size in bytes.
    public var pageSize: Int
    /// The height of the B-tree.
    public var depth: Int
    /// Internal (non-leaf) pages.
    public var branchPages: Int
    /// Leaf pages.
    public var leafPages: Int
    /// Overflow pages, which hold values too large for a leaf.
    public var overflowPages: Int
    /// Key/value pairs; in a duplicate-sorted database every value counts.
    public var entries: Int
}
