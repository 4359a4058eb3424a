internal import CLMDB

/// A write transaction, lent to the body of ``Environment/write(_:)``, which
/// commits it when the body returns and aborts it when the body throws.
///
/// It reads like a ``ReadTransaction`` (and conforms to
/// ``ReadableTransaction``), and sees its own changes. Buffers it returns
/// stay valid until the next change to the same database.
public struct WriteTransaction: ~Copyable, ReadableTransaction {
    let core: TransactionCore
    /// Set when LMDB reports `MDB_MAP_FULL`, so that ``Environment/write(_:)``
    /// grows the map and runs the body again even if the body caught the error.
    let mapFull: UnsafeMutablePointer<Bool>

    init(_ txn: OpaquePointer, mapFull: UnsafeMutablePointer<Bool>) {
        core = TransactionCore(txn: txn)
        self.mapFull = mapFull
    }

    /// How `put` stores a pair.
    public struct PutFlags: OptionSet, Sendable {
        /// The flags as bits; see the static members.
        public let rawValue: UInt32
        /// Creates flags from their raw value.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// Leave an existing key alone: `put` returns `false` (`MDB_NOOVERWRITE`).
        /// In a duplicate-sorted database, refuse if the key has any value.
        public static let noOverwrite = PutFlags(rawValue: 1)
        /// In a duplicate-sorted database, leave an existing key/value pair
        /// alone: `put` returns `false` (`MDB_NODUPDATA`).
        public static let noDuplicateData = PutFlags(rawValue: 2)
        /// Bulk loading in sorted order: the key is after every key in the
        /// database (`MDB_APPEND`); in a duplicate-sorted database, the value
        /// is after every value of its key (`MDB_APPENDDUP`). Pages fill up
        /// completely and no search is made. A pair out of order fails with
        /// ``LMDBError/keyExists``.
        public static let append = PutFlags(rawValue: 4)

        func lmdb(for db: Database) -> UInt32 {
            var flags: Int32 = 0
            if contains(.noOverwrite) { flags |= MDB_NOOVERWRITE }
            if contains(.noDuplicateData) { flags |= MDB_NODUPDATA }
            if contains(.append) { flags |= db.isDuplicateSorted ? MDB_APPENDDUP : MDB_APPEND }
            return UInt32(flags)
        }
    }

    /// Records `MDB_MAP_FULL` and makes the error for `rc`.
    private func failure(_ rc: Int32, _ operation: String) -> LMDBError {
        if rc == MDB_MAP_FULL { mapFull.pointee = true }
        return LMDBError(rc, operation: operation)
    }

    /// Runs `body`, recording `MDB_MAP_FULL` if it throws that.
    private func noting<R>(_ body: () throws(LMDBError) -> R) throws(LMDBError) -> R {
        do { return try body() } catch {
            if error.isMapFull { mapFull.pointee = true }
            throw error
        }
    }

    // MARK: Writing

    /// Stores `value` under `key`, replacing the value of a plain database
    /// or adding one to the values of a duplicate-sorted database.
    ///
    /// - Returns: `true` if stored; `false` if `flags` has ``PutFlags/noOverwrite``
    ///   or ``PutFlags/noDuplicateData`` and the key or pair already exists.
    /// - Throws: ``LMDBError``: ``LMDBError/badValueSize`` for an empty key
    ///   or one over 511 bytes, ``LMDBError/keyExists`` for an out-of-order
    ///   ``PutFlags/append``, ``LMDBError/mapFull`` (the environment grows the
    ///   map and runs the body again). The corresponding C function is `mdb_put`.
    @discardableResult
    public func put(
        _ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: PutFlags = []
    ) throws(LMDBError) -> Bool {
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdb_put(core.txn, db.dbi, &k, &v, flags.lmdb(for: db))
        if rc == 0 { return true }
        if rc == MDB_KEYEXIST && !flags.contains(.append) { return false }
        throw failure(rc, flags.contains(.append) ? "mdb_put \(db.name) (append out of order)" : "mdb_put \(db.name)")
    }

    /// Stores `value` under `key`; see the raw-buffer `put`. The corresponding
    /// C function is `mdb_put`.
    @inlinable @discardableResult
    public func put(
        _ db: Database, key: some IndexBytes, value: some IndexBytes, flags: PutFlags = []
    ) throws(LMDBError) -> Bool {
        try key.withIndexBytes { (k) throws(LMDBError) in
            try value.withIndexBytes { (v) throws(LMDBError) in try put(db, key: k, value: v, flags: flags) }
        }
    }

    /// Reserves `count` bytes for the value of `key` and lets `fill` write
    /// them in place, in the map, with no intermediate buffer (`MDB_RESERVE`).
    /// `fill` must write every byte: the space is not cleared.
    ///
    /// Not for duplicate-sorted databases (a precondition).
    /// - Returns: `true` if stored; `false`, without calling `fill`, if
    ///   ``PutFlags/noOverwrite`` found the key.
    /// - Throws: ``LMDBError`` as the raw-buffer `put`. The corresponding C
    ///   function is `mdb_put` with `MDB_RESERVE`.
    @discardableResult
    public func put(
        _ db: Database, key: UnsafeRawBufferPointer, reserving count: Int, flags: PutFlags = [],
        fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(LMDBError) -> Bool {
        precondition(!db.isDuplicateSorted, "MDB_RESERVE cannot store into the duplicate-sorted database \(db.name)")
        precondition(count >= 0, "a value cannot have a negative size")
        var k = MDB_val(key)
        var v = MDB_val(mv_size: count, mv_data: nil)
        let rc = mdb_put(core.txn, db.dbi, &k, &v, flags.lmdb(for: db) | UInt32(MDB_RESERVE))
        if rc == MDB_KEYEXIST && !flags.contains(.append) { return false }
        guard rc == 0 else { throw failure(rc, "mdb_put \(db.name) (reserve)") }
        fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
        return true
    }

    /// Reserves `count` bytes for the value of `key` and lets `fill` write
    /// them in place; see the raw-buffer version. The corresponding C
    /// function is `mdb_put` with `MDB_RESERVE`.
    @inlinable @discardableResult
    public func put(
        _ db: Database, key: some IndexBytes, reserving count: Int, flags: PutFlags = [],
        fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(LMDBError) -> Bool {
        try key.withIndexBytes { (k) throws(LMDBError) in try put(db, key: k, reserving: count, flags: flags, fill: fill) }
    }

    /// Appends a pair during a sorted bulk load: `put` with ``PutFlags/append``.
    ///
    /// - Throws: ``LMDBError/keyExists`` when the key is not after the last
    ///   key (in a duplicate-sorted database, the value not after its key's
    ///   last value). The corresponding C function is `mdb_put` with `MDB_APPEND`.
    @inlinable
    public func append(_ db: Database, key: some IndexBytes, value: some IndexBytes) throws(LMDBError) {
        try put(db, key: key, value: value, flags: .append)
    }

    // MARK: Deleting

    /// Deletes `key` and, in a duplicate-sorted database, all its values.
    ///
    /// - Returns: whether anything was deleted.
    /// - Throws: ``LMDBError``. The corresponding C function is `mdb_del`.
    @discardableResult
    public func delete(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        var k = MDB_val(key)
        let rc = mdb_del(core.txn, db.dbi, &k, nil)
        if rc == MDB_NOTFOUND || rc == MDB_BAD_VALSIZE { return false }
        guard rc == 0 else { throw failure(rc, "mdb_del \(db.name)") }
        return true
    }

    /// Deletes `key`; see the raw-buffer version. The corresponding C function is `mdb_del`.
    @inlinable @discardableResult
    public func delete(_ db: Database, key: some IndexBytes) throws(LMDBError) -> Bool {
        try key.withIndexBytes { (k) throws(LMDBError) in try delete(db, key: k) }
    }

    /// Deletes the pair `key`/`value` only: one value of a duplicate-sorted
    /// database, or a plain database's key if its value is exactly `value`.
    ///
    /// - Returns: whether the pair existed and was deleted.
    /// - Throws: ``LMDBError``. The corresponding C function is `mdb_del`.
    @discardableResult
    public func delete(_ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        // mdb_del ignores the value of a plain database; compare first.
        if !db.isDuplicateSorted, try core.get(db, key: key)?.isEqual(to: value) != true { return false }
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdb_del(core.txn, db.dbi, &k, &v)
        if rc == MDB_NOTFOUND || rc == MDB_BAD_VALSIZE { return false }
        guard rc == 0 else { throw failure(rc, "mdb_del \(db.name)") }
        return true
    }

    /// Deletes the pair `key`/`value`; see the raw-buffer version.
    /// The corresponding C function is `mdb_del`.
    @inlinable @discardableResult
    public func delete(_ db: Database, key: some IndexBytes, value: some IndexBytes) throws(LMDBError) -> Bool {
        try key.withIndexBytes { (k) throws(LMDBError) in
            try value.withIndexBytes { (v) throws(LMDBError) in try delete(db, key: k, value: v) }
        }
    }

    /// Deletes every pair whose key begins with `prefix` (everything for an
    /// empty prefix).
    ///
    /// - Returns: the number of pairs deleted (every value counts in a
    ///   duplicate-sorted database).
    /// - Throws: ``LMDBError``. The corresponding C function is `mdb_cursor_del`.
    @discardableResult
    public func deleteAll(_ db: Database, prefix: UnsafeRawBufferPointer) throws(LMDBError) -> Int {
        try noting { () throws(LMDBError) in
            let cursor = try Cursor(core.txn, db)
            var removed = 0
            while true {
                // Seek afresh after each deletion: the cursor's position
                // after mdb_cursor_del is not worth relying on.
                var k = MDB_val(prefix)
                var v = MDB_val()
                guard try cursor.move(prefix.isEmpty ? MDB_FIRST : MDB_SET_RANGE, &k, &v),
                      k.bytes.hasPrefix(prefix) else { return removed }
                removed += db.isDuplicateSorted ? try cursor.duplicateCount() : 1
                try cursor.deleteCurrent(allValues: db.isDuplicateSorted)
            }
        }
    }

    /// Deletes every pair whose key begins with `prefix`; see the raw-buffer
    /// version. The corresponding C function is `mdb_cursor_del`.
    @inlinable @discardableResult
    public func deleteAll(_ db: Database, prefix: some IndexBytes) throws(LMDBError) -> Int {
        try prefix.withIndexBytes { (p) throws(LMDBError) in try deleteAll(db, prefix: p) }
    }

    /// What ``sweep(_:prefix:_:)`` does with the pair it shows.
    public enum SweepStep: Sendable {
        /// Leave the pair and go on to the next.
        case keep
        /// Delete the pair and go on to the next.
        case delete
        /// Leave the pair and end the sweep.
        case stop
    }

    /// Shows `body` each pair whose key begins with `prefix`, in key order,
    /// and deletes those it says to: a walk that drops what it finds with no
    /// list of them held. `body` may write to the transaction's other
    /// databases, not to `db`.
    ///
    /// Not for duplicate-sorted databases (a precondition).
    /// - Returns: the number of pairs deleted.
    /// - Throws: ``LMDBError``. The corresponding C functions are
    ///   `mdb_cursor_get` and `mdb_cursor_del`.
    @discardableResult
    public func sweep(
        _ db: Database, prefix: UnsafeRawBufferPointer,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> SweepStep
    ) throws(LMDBError) -> Int {
        precondition(!db.isDuplicateSorted, "sweep visits one value a key; \(db.name) is duplicate-sorted")
        return try noting { () throws(LMDBError) in
            let cursor = try Cursor(core.txn, db)
            var removed = 0
            var deleted: [UInt8] = []
            var k = MDB_val(prefix)
            var v = MDB_val()
            var more = try cursor.move(prefix.isEmpty ? MDB_FIRST : MDB_SET_RANGE, &k, &v)
            while more, k.bytes.hasPrefix(prefix) {
                switch body(k.bytes, v.bytes) {
                case .stop:
                    return removed
                case .keep:
                    more = try cursor.move(MDB_NEXT, &k, &v)
                case .delete:
                    deleted.removeAll(keepingCapacity: true)
                    deleted.append(contentsOf: k.bytes)
                    try cursor.deleteCurrent(allValues: false)
                    removed += 1
                    // Seek past the deleted key afresh, as deleteAll does.
                    more = try deleted.withIndexBytes { (key) throws(LMDBError) -> Bool in
                        k = MDB_val(key)
                        return try cursor.move(MDB_SET_RANGE, &k, &v)
                    }
                }
            }
            return removed
        }
    }

    /// ``sweep(_:prefix:_:)`` with the prefix as any index bytes.
    @inlinable @discardableResult
    public func sweep(
        _ db: Database, prefix: some IndexBytes,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> SweepStep
    ) throws(LMDBError) -> Int {
        try prefix.withIndexBytes { (p) throws(LMDBError) in try sweep(db, prefix: p, body) }
    }

    /// Lets go of the index pages read through the map. See ``ReadableTransaction``.
    public func releaseResidentPages() { core.releaseResidentPages() }

    /// Deletes every pair of the database; the database itself remains.
    ///
    /// - Throws: ``LMDBError``. The corresponding C function is `mdb_drop`
    ///   with `del` 0.
    public func drop(_ db: Database) throws(LMDBError) {
        let rc = mdb_drop(core.txn, db.dbi, 0)
        guard rc == 0 else { throw failure(rc, "mdb_drop \(db.name)") }
    }

    // MARK: Reading (ReadableTransaction)

    /// The value under `key`, including this transaction's changes. See
    /// ``ReadableTransaction``. The corresponding C function is `mdb_get`.
    @inline(__always)
    public func get(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        try core.get(db, key: key)
    }

    /// Visits the pairs whose key begins with `prefix`. See
    /// ``ReadableTransaction``. The corresponding C function is `mdb_cursor_get`.
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
}
