/// What every transaction can do: look up, iterate and count. Both
/// ``ReadTransaction`` and ``WriteTransaction`` conform, so code that only
/// reads takes either:
///
/// ```swift
/// func member(_ txn: borrowing some ReadableTransaction & ~Copyable, _ key: String) throws(LMDBError) -> Member? {
///     try txn.get(members, key: key).flatMap(Member.init)
/// }
/// ```
///
/// Every buffer a transaction returns or passes to a closure points into the
/// memory map and stays valid only until the transaction's body returns (in a
/// write, only until the next change to the same database). Copy what must
/// live longer.
public protocol ReadableTransaction: ~Copyable {
    /// The value stored under `key`, or `nil` when there is none. In a
    /// duplicate-sorted database, the first (smallest) value.
    ///
    /// A key that LMDB cannot store (empty, or longer than 511 bytes) is
    /// reported absent.
    /// - Throws: ``LMDBError`` if the database is corrupt or the transaction
    ///   unusable. The corresponding C function is `mdb_get`.
    func get(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer?

    /// Calls `body` with each key/value pair whose key begins with `prefix`,
    /// in ascending byte order of keys (values of one key in ascending order),
    /// until `body` returns `false`. An empty prefix visits everything.
    ///
    /// - Throws: ``LMDBError`` from the cursor. The corresponding C function is
    ///   `mdb_cursor_get` with `MDB_SET_RANGE` and `MDB_NEXT`.
    func forEach(
        _ db: Database, prefix: UnsafeRawBufferPointer,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(LMDBError)

    /// Calls `body` with each value stored under `key`, in ascending order,
    /// until it returns `false`. In a plain database that is at most one value.
    ///
    /// - Throws: ``LMDBError`` from the cursor. The corresponding C function is
    ///   `mdb_cursor_get` with `MDB_SET_KEY` and `MDB_NEXT_DUP`.
    func values(_ db: Database, key: UnsafeRawBufferPointer, _ body: (_ value: UnsafeRawBufferPointer) -> Bool) throws(LMDBError)

    /// How many values `key` has: 0 when absent, at most 1 in a plain database.
    ///
    /// - Throws: ``LMDBError`` from the cursor. The corresponding C function is
    ///   `mdb_cursor_count`.
    func valueCount(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> Int

    /// Whether exactly this key/value pair is stored.
    ///
    /// - Throws: ``LMDBError`` from the cursor. The corresponding C function is
    ///   `mdb_cursor_get` with `MDB_GET_BOTH`.
    func contains(_ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(LMDBError) -> Bool

    /// The sizes of the database's B-tree as this transaction sees it.
    ///
    /// - Throws: ``LMDBError``. The corresponding C function is `mdb_stat`.
    func statistics(_ db: Database) throws(LMDBError) -> DatabaseStatistics

    /// Lets go of the index pages this process has read through the map, so
    /// that a walk over the whole index keeps only what it read since the
    /// last call resident, not the whole file. The data stays in the page
    /// cache: the pages are not read again from disk, only mapped again
    /// (a minor fault each) when any thread of the process next touches
    /// them. Values already returned stay valid; a write transaction's own
    /// pages are its memory until it commits, not the map's, and are not
    /// affected. The corresponding C functions are `mdb_env_info` and
    /// `madvise` with `MADV_DONTNEED`.
    func releaseResidentPages()
}

extension ReadableTransaction where Self: ~Copyable {
    /// The value stored under `key`; see the raw-buffer `get`.
    /// The corresponding C function is `mdb_get`.
    @inlinable
    public func get(_ db: Database, key: some IndexBytes) throws(LMDBError) -> UnsafeRawBufferPointer? {
        try key.withIndexBytes { (k) throws(LMDBError) in try get(db, key: k) }
    }

    /// Whether anything is stored under `key`. The corresponding C function is `mdb_get`.
    @inlinable
    public func contains(_ db: Database, key: some IndexBytes) throws(LMDBError) -> Bool {
        try get(db, key: key) != nil
    }

    /// Whether exactly this key/value pair is stored. The corresponding C
    /// function is `mdb_cursor_get` with `MDB_GET_BOTH`.
    @inlinable
    public func contains(_ db: Database, key: some IndexBytes, value: some IndexBytes) throws(LMDBError) -> Bool {
        try key.withIndexBytes { (k) throws(LMDBError) in
            try value.withIndexBytes { (v) throws(LMDBError) in try contains(db, key: k, value: v) }
        }
    }

    /// Visits the pairs whose key begins with `prefix`, in key order, until
    /// `body` returns `false`. The corresponding C function is `mdb_cursor_get`.
    @inlinable
    public func forEach(
        _ db: Database, prefix: some IndexBytes,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(LMDBError) {
        try prefix.withIndexBytes { (p) throws(LMDBError) in try forEach(db, prefix: p, body) }
    }

    /// Visits every pair of the database, in key order, until `body` returns
    /// `false`. The corresponding C function is `mdb_cursor_get`.
    @inlinable
    public func forEach(
        _ db: Database, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(LMDBError) {
        try forEach(db, prefix: UnsafeRawBufferPointer(start: nil, count: 0), body)
    }

    /// Visits the values of `key` in ascending order until `body` returns
    /// `false`. The corresponding C function is `mdb_cursor_get` with `MDB_NEXT_DUP`.
    @inlinable
    public func values(_ db: Database, key: some IndexBytes, _ body: (_ value: UnsafeRawBufferPointer) -> Bool) throws(LMDBError) {
        try key.withIndexBytes { (k) throws(LMDBError) in try values(db, key: k, body) }
    }

    /// Copies of the values of `key`, in ascending order; empty when absent.
    /// The corresponding C function is `mdb_cursor_get` with `MDB_NEXT_DUP`.
    @inlinable
    public func values(_ db: Database, key: some IndexBytes) throws(LMDBError) -> [[UInt8]] {
        var result: [[UInt8]] = []
        try values(db, key: key) { value in
            result.append(Array(value))
            return true
        }
        return result
    }

    /// How many values `key` has. The corresponding C function is `mdb_cursor_count`.
    @inlinable
    public func valueCount(_ db: Database, key: some IndexBytes) throws(LMDBError) -> Int {
        try key.withIndexBytes { (k) throws(LMDBError) in try valueCount(db, key: k) }
    }

    /// The number of key/value pairs in the database (every value counts in a
    /// duplicate-sorted one). The corresponding C function is `mdb_stat`.
    @inlinable
    public func count(_ db: Database) throws(LMDBError) -> Int {
        try statistics(db).entries
    }
}
