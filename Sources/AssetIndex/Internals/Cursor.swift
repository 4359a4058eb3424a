internal import CLMDB

/// An LMDB cursor over one database, closed when it goes out of scope.
///
/// Cursors live inside one method of a transaction, so they always close
/// before their transaction ends, as LMDB requires of write transactions.
struct Cursor: ~Copyable {
    let pointer: OpaquePointer
    let database: Database

    /// Opens a cursor. The corresponding C function is `mdb_cursor_open`.
    init(_ txn: OpaquePointer, _ database: Database) throws(LMDBError) {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, database.dbi, &cursor), "mdb_cursor_open \(database.name)")
        self.pointer = cursor!
        self.database = database
    }

    deinit { mdb_cursor_close(pointer) }

    /// Moves the cursor by `op`, reading into `key` and `value`. Returns
    /// `false` at the end (`MDB_NOTFOUND`). The corresponding C function is
    /// `mdb_cursor_get`.
    @inline(__always)
    func move(_ op: MDB_cursor_op, _ key: inout MDB_val, _ value: inout MDB_val) throws(LMDBError) -> Bool {
        let rc = mdb_cursor_get(pointer, &key, &value, op)
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "mdb_cursor_get \(database.name)")
        return true
    }

    /// The number of values under the current key of a duplicate-sorted
    /// database. The corresponding C function is `mdb_cursor_count`.
    func duplicateCount() throws(LMDBError) -> Int {
        var count = 0
        try check(mdb_cursor_count(pointer, &count), "mdb_cursor_count \(database.name)")
        return count
    }

    /// Deletes the pair under the cursor; with `allValues`, every value of
    /// its key (`MDB_NODUPDATA`). The corresponding C function is `mdb_cursor_del`.
    func deleteCurrent(allValues: Bool) throws(LMDBError) {
        try check(mdb_cursor_del(pointer, allValues ? UInt32(MDB_NODUPDATA) : 0), "mdb_cursor_del \(database.name)")
    }
}
