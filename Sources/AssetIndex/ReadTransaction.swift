/// A read-only snapshot of the environment, lent to the body of
/// ``Environment/read(_:)``.
///
/// The snapshot does not change while the body runs, whatever other threads
/// and processes commit. It cannot leave the body (it is `~Copyable` and only
/// borrowed), and neither may the buffers it returns: they point into the map.
/// See ``ReadableTransaction`` for the operations.
public struct ReadTransaction: ~Copyable, ReadableTransaction {
    @usableFromInline let core: TransactionCore

    @usableFromInline
    init(_ txn: OpaquePointer) { core = TransactionCore(txn: txn) }

    /// The ID of the commit this snapshot shows: equal to
    /// ``Environment/lastCommittedTransactionID`` while nothing newer has been
    /// committed. The corresponding C function is `mdb_txn_id`.
    @inline(__always)
    public var snapshotID: Int { core.id }

    /// The value under `key`, or `nil`. See ``ReadableTransaction``.
    /// The corresponding C function is `mdb_get`.
    @inline(__always)
    public func get(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        try core.get(db, key: key)
    }

    /// Visits the pairs whose key begins with `prefix`. See
    /// ``ReadableTransaction``.
    /// The corresponding C function is `mdb_cursor_get`.
    public func forEach(
        _ db: Database, prefix: UnsafeRawBufferPointer,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) throws(LMDBError) {
        try core.forEach(db, prefix: prefix, body)
    }

    /// Visits the values of `key`. See ``ReadableTransaction``.
    /// The corresponding C function is `mdb_cursor_get`.
    public func values(_ db: Database, key: UnsafeRawBufferPointer, _ body: (_ value: UnsafeRawBufferPointer) -> Bool) throws(LMDBError) {
        try core.values(db, key: key, body)
    }

    /// How many values `key` has. The corresponding C function is `mdb_cursor_count`.
    public func valueCount(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> Int {
        try core.valueCount(db, key: key)
    }

    /// Whether the pair is stored. The corresponding C function is `mdb_cursor_get`.
    public func contains(_ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        try core.contains(db, key: key, value: value)
    }

    /// The database's B-tree sizes. The corresponding C function is `mdb_stat`.
    public func statistics(_ db: Database) throws(LMDBError) -> DatabaseStatistics {
        try core.statistics(db)
    }

    /// Lets go of the index pages read through the map. See ``ReadableTransaction``.
    public func releaseResidentPages() { core.releaseResidentPages() }
}
