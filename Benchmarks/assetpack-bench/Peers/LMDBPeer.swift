import CLMDB

/// Raw LMDB holding the same bytes under the member path: the ceiling for a
/// lookup. One read transaction, kept reset between reads; a read is
/// `mdb_txn_renew`, `mdb_get`, (the caller's use of the value), `mdb_txn_reset`.
/// Opened with `MDB_NOTLS`, as the store's environment is.
final class RawLMDB: @unchecked Sendable {
    // Unchecked: one value is used by one thread at a time; other threads
    // read through readers of their own (``init(readerOf:)``).
    private let env: OpaquePointer
    private let dbi: MDB_dbi
    private let txn: OpaquePointer
    /// The value that opened the environment, for a reader that shares it.
    private let opener: RawLMDB?

    init(path: String) throws {
        var e: OpaquePointer?
        try RawLMDB.check(mdb_env_create(&e), "mdb_env_create")
        env = e!
        try RawLMDB.check(mdb_env_open(env, path, UInt32(MDB_NOTLS | MDB_RDONLY), 0o644), "mdb_env_open")
        var t: OpaquePointer?
        try RawLMDB.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &t), "mdb_txn_begin")
        var d: MDB_dbi = 0
        try RawLMDB.check(mdb_dbi_open(t, nil, 0, &d), "mdb_dbi_open")
        dbi = d
        txn = t!
        opener = nil
        mdb_txn_reset(txn)
    }

    /// Another reader of `other`'s environment, with a read transaction of
    /// its own, for another thread (an environment is opened once per process).
    init(readerOf other: RawLMDB) throws {
        var t: OpaquePointer?
        try RawLMDB.check(mdb_txn_begin(other.env, nil, UInt32(MDB_RDONLY), &t), "mdb_txn_begin")
        env = other.env
        dbi = other.dbi
        txn = t!
        opener = other
        mdb_txn_reset(txn)
    }

    deinit {
        mdb_txn_abort(txn)
        if opener == nil { mdb_env_close(env) }
    }

    /// Looks `key` up in a renewed transaction and gives the value (which
    /// points into the map) to `body` before the transaction is reset.
    @inline(__always)
    func get(_ key: String, _ body: (UnsafeRawBufferPointer) -> Int) throws -> Int {
        guard mdb_txn_renew(txn) == 0 else { throw PeerError("mdb_txn_renew") }
        var v = MDB_val()
        let rc = key.withCString { k in
            var k = MDB_val(mv_size: key.utf8.count, mv_data: UnsafeMutableRawPointer(mutating: k))
            return mdb_get(txn, dbi, &k, &v)
        }
        defer { mdb_txn_reset(txn) }
        guard rc == 0 else { throw PeerError("mdb_get: \(rc)") }
        return body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// Creates an environment in the existing directory `path` holding `count`
    /// pairs, in one transaction. `durable` keeps LMDB's default sync on commit.
    static func create(
        at path: String, mapSize: Int, count: Int, durable: Bool,
        pair: (Int, (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws {
        var e: OpaquePointer?
        try check(mdb_env_create(&e), "mdb_env_create")
        let env = e!
        defer { mdb_env_close(env) }
        try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
        try check(mdb_env_open(env, path, UInt32(MDB_NOTLS | (durable ? 0 : MDB_NOSYNC)), 0o644), "mdb_env_open")
        var t: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &t), "mdb_txn_begin")
        var d: MDB_dbi = 0
        try check(mdb_dbi_open(t, nil, 0, &d), "mdb_dbi_open")
        do {
            for i in 0 ..< count {
                try pair(i) { key, value in
                    var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
                    var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
                    try check(mdb_put(t, d, &k, &v, 0), "mdb_put")
                }
            }
        } catch {
            mdb_txn_abort(t)
            throw error
        }
        try check(mdb_txn_commit(t), "mdb_txn_commit")
        if !durable { try check(mdb_env_sync(env, 1), "mdb_env_sync") }
    }

    private static func check(_ rc: Int32, _ what: String) throws {
        guard rc == 0 else { throw PeerError("\(what): \(String(cString: mdb_strerror(rc)))") }
    }
}

/// `mdb_get` of a member's bytes by path, zero-copy.
struct LMDBRead: Operation {
    let lmdb: RawLMDB
    let keys: [String]
    let consume: Bool

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let consume = self.consume
        return try lmdb.get(keys[item]) { value in
            consume ? Int(truncatingIfNeeded: sumBytes(value)) : value.count
        }
    }
}
