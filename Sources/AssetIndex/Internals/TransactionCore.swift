internal import CLMDB
internal import Glibc
internal import AssetSystem

/// The operations shared by read and write transactions, on a live `MDB_txn`.
/// ``ReadTransaction`` and ``WriteTransaction`` wrap one and forward to it.
@usableFromInline
struct TransactionCore {
    @usableFromInline let txn: OpaquePointer

    @usableFromInline
    init(txn: OpaquePointer) { self.txn = txn }

    /// The transaction's ID: for a read, the commit its snapshot shows.
    /// The corresponding C function is `mdb_txn_id`.
    @inline(__always)
    var id: Int { Int(mdb_txn_id(txn)) }

    /// The corresponding C function is `mdb_get`.
    @inline(__always)
    func get(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        var k = MDB_val(key)
        var v = MDB_val()
        let rc = mdb_get(txn, db.dbi, &k, &v)
        if rc == 0 { return v.bytes }
        // A key LMDB cannot store (empty, or longer than 511 bytes) is absent.
        if rc == MDB_NOTFOUND || rc == MDB_BAD_VALSIZE { return nil }
        throw LMDBError(rc, operation: "mdb_get \(db.name)")
    }

    func forEach(
        _ db: Database, prefix: UnsafeRawBufferPointer,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) throws(LMDBError) {
        let cursor = try Cursor(txn, db)
        var k = MDB_val(prefix)
        var v = MDB_val()
        var more = try cursor.move(prefix.isEmpty ? MDB_FIRST : MDB_SET_RANGE, &k, &v)
        while more {
            let key = k.bytes
            guard key.hasPrefix(prefix), body(key, v.bytes) else { return }
            more = try cursor.move(MDB_NEXT, &k, &v)
        }
    }

    func values(_ db: Database, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) throws(LMDBError) {
        guard !key.isEmpty else { return }
        let cursor = try Cursor(txn, db)
        var k = MDB_val(key)
        var v = MDB_val()
        var more = try cursor.move(MDB_SET_KEY, &k, &v)
        while more, body(v.bytes) {
            more = try cursor.move(MDB_NEXT_DUP, &k, &v)
        }
    }

    func valueCount(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> Int {
        guard !key.isEmpty else { return 0 }
        let cursor = try Cursor(txn, db)
        var k = MDB_val(key)
        var v = MDB_val()
        guard try cursor.move(MDB_SET_KEY, &k, &v) else { return 0 }
        return db.isDuplicateSorted ? try cursor.duplicateCount() : 1
    }

    func contains(_ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        guard db.isDuplicateSorted else {
            // MDB_GET_BOTH compares values only in duplicate-sorted databases.
            return try get(db, key: key)?.isEqual(to: value) ?? false
        }
        guard !key.isEmpty else { return false }
        let cursor = try Cursor(txn, db)
        var k = MDB_val(key)
        var v = MDB_val(value)
        let rc = mdb_cursor_get(cursor.pointer, &k, &v, MDB_GET_BOTH)
        if rc == 0 { return true }
        if rc == MDB_NOTFOUND || rc == MDB_BAD_VALSIZE { return false }
        throw LMDBError(rc, operation: "mdb_cursor_get \(db.name)")
    }

    /// The corresponding C function is `mdb_stat`.
    func statistics(_ db: Database) throws(LMDBError) -> DatabaseStatistics {
        var s = MDB_stat()
        try check(mdb_stat(txn, db.dbi, &s), "mdb_stat \(db.name)")
        return DatabaseStatistics(
            pageSize: Int(s.ms_psize), depth: Int(s.ms_depth), branchPages: s.ms_branch_pages,
            leafPages: s.ms_leaf_pages, overflowPages: s.ms_overflow_pages, entries: s.ms_entries)
    }

    /// Drops this process's view of the map's pages (`MADV_DONTNEED`): the
    /// file's pages stay in the page cache and come back on the next touch.
    /// The transaction pins the map, so no resize can move it meanwhile.
    /// With a writable map, so do pages a write transaction changed: the
    /// mapping is shared, so they are the page cache's, which keeps them
    /// (dirty, until written back); LMDB's pointers to them stay valid.
    ///
    /// LMDB does not say where its map is (`mdb_env_info` gives the address
    /// only of a fixed map), so the mappings of the data file are found in
    /// `/proc/self/maps` by its device and inode.
    func releaseResidentPages() {
        guard let env = mdb_txn_env(txn) else { return }
        var fd: Int32 = -1
        var file = Glibc.stat()
        guard mdb_env_get_fd(env, &fd) == 0, fstat(fd, &file) == 0,
              let maps = try? FileDescriptor.open("/proc/self/maps").readToEnd() else { return }
        // As glibc's major() and minor() split a dev_t, in the maps file's hex.
        let dev = UInt64(file.st_dev)
        let major = (dev >> 8) & 0xfff | (dev >> 32) & ~0xfff
        let minor = dev & 0xff | (dev >> 12) & ~0xff
        let device = Array((String(major, radix: 16).leftPadded(to: 2) + ":" + String(minor, radix: 16).leftPadded(to: 2)).utf8)
        let inode = Array(String(UInt64(file.st_ino)).utf8)
        for line in maps.split(separator: UInt8(ascii: "\n")) {
            // start-end perms offset dev inode path
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[3].elementsEqual(device), fields[4].elementsEqual(inode),
                  fields[2].allSatisfy({ $0 == UInt8(ascii: "0") }) else { continue }
            let range = fields[0].split(separator: UInt8(ascii: "-"))
            guard range.count == 2, let start = UInt(String(decoding: range[0], as: UTF8.self), radix: 16),
                  let end = UInt(String(decoding: range[1], as: UTF8.self), radix: 16), end > start,
                  let base = UnsafeMutableRawPointer(bitPattern: start) else { continue }
            // Only advice: a mapping that refuses it keeps its pages.
            _ = madvise(base, Int(end - start), MADV_DONTNEED)
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
