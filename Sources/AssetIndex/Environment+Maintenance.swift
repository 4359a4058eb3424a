internal import CLMDB
#if canImport(Glibc)
internal import Glibc
#endif

extension Environment {
    /// One slot of the reader table, shared by every process that has the
    /// environment open, as ``readers()`` reports it.
    public struct Reader: Sendable, Equatable {
        /// The process that holds the slot.
        public var pid: Int32
        /// The thread that took the slot (with `MDB_NOTLS`, only the one that
        /// first began the transaction).
        public var thread: UInt
        /// The snapshot the reader is using, or `nil` when its transaction is
        /// reset and waiting in a pool.
        public var transactionID: Int?
        /// Whether process `pid` exists (`kill(pid, 0)`). A dead process's
        /// slot is stale: ``Environment/clearStaleReaders()`` frees it. A pid
        /// reused by an unrelated process looks alive; LMDB's own check, with
        /// a lock on `lock.mdb`, does not have that flaw.
        public var isProcessAlive: Bool
    }

    /// Every used slot of the reader table, for verification tools: which
    /// processes hold readers, which are idle in a pool, which are dead.
    /// The corresponding C function is `mdb_reader_list`.
    public func readers() -> [Reader] {
        var lines: [String] = []
        _ = withUnsafeMutablePointer(to: &lines) { lines in
            mdb_reader_list(handle, { message, context in
                guard let message, let context else { return 0 }
                context.assumingMemoryBound(to: [String].self).pointee.append(String(cString: message))
                return 0
            }, lines)
        }
        // Lines are "<pid> <thread in hex> <txnid or ->", after a header.
        return lines.compactMap { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\n" })
            guard fields.count == 3, let pid = Int32(fields[0]), let thread = UInt(fields[1], radix: 16) else { return nil }
            let alive = kill(pid, 0) == 0 || errno == EPERM
            return Reader(pid: pid, thread: thread, transactionID: Int(fields[2]), isProcessAlive: alive)
        }
    }

    /// Frees the reader slots of processes that died without closing the
    /// environment, so that their old snapshots no longer keep pages from
    /// reuse. Done on open, and when the reader table is full.
    ///
    /// - Returns: the number of slots freed.
    /// - Throws: ``LMDBError``. The corresponding C function is `mdb_reader_check`.
    @discardableResult
    public func clearStaleReaders() throws(LMDBError) -> Int {
        var dead: Int32 = 0
        try check(mdb_reader_check(handle, &dead), "mdb_reader_check", path: path)
        return Int(dead)
    }

    /// The current size of this process's map, in bytes.
    /// The corresponding C function is `mdb_env_info`.
    public var mapSize: Int { info().mapSize }

    /// The ID of the last transaction committed by any process, read from
    /// the meta pages without beginning a transaction — cheap enough to ask
    /// on every lookup, so a cache of lookups can tell that nothing changed
    /// since a ``ReadTransaction/snapshotID``: two atomic loads from the meta
    /// pages' own mapping (``MetaPages``), or, where that could not be made,
    /// `mdb_env_info` with the map pinned. The corresponding C function
    /// is `mdb_env_info`.
    public var lastCommittedTransactionID: Int {
        if let metaPages { return metaPages.lastCommittedTransactionID }
        return pool.pinningMap { () throws(Never) in
            var info = MDB_envinfo()
            _ = mdb_env_info(handle, &info)
            return info.me_last_txnid
        }
    }

    /// What ``info()`` reports.
    public struct Info: Sendable, Equatable {
        /// The size of this process's map, in bytes.
        public var mapSize: Int
        /// The page size, in bytes.
        public var pageSize: Int
        /// The last page in use: (last page + 1) × page size bytes of the map
        /// are used.
        public var lastPage: Int
        /// The last committed transaction.
        public var lastTransactionID: Int
        /// The size of the reader table.
        public var maxReaders: Int
        /// Reader slots ever used since the table was created (a high-water
        /// mark, not the number in use now).
        public var readerSlotsUsed: Int
    }

    /// Sizes and counters of the environment.
    /// The corresponding C functions are `mdb_env_info` and `mdb_env_stat`.
    public func info() -> Info {
        // Both read the meta pages in the map, which no resize may remap meanwhile.
        pool.pinningMap { () throws(Never) in
            var info = MDB_envinfo()
            var stat = MDB_stat()
            _ = mdb_env_info(handle, &info)
            _ = mdb_env_stat(handle, &stat)
            return Info(
                mapSize: info.me_mapsize, pageSize: Int(stat.ms_psize), lastPage: info.me_last_pgno,
                lastTransactionID: info.me_last_txnid, maxReaders: Int(info.me_maxreaders),
                readerSlotsUsed: Int(info.me_numreaders))
        }
    }

    /// Copies the environment's data file into the existing directory
    /// `directory` (which must not hold a `data.mdb`), from a consistent
    /// snapshot, while other threads and processes keep reading and writing.
    /// With `compact`, free pages are left out and pages renumbered: the copy
    /// is smaller and has no free list, which also makes it a repair tool.
    ///
    /// A map resize waits until the copy ends.
    /// - Throws: ``LMDBError`` naming `directory` (`EEXIST` when it already
    ///   holds a `data.mdb`). The corresponding C function is `mdb_env_copy2`.
    public func copy(to directory: String, compact: Bool = false) throws(LMDBError) {
        try pool.pinningMap { () throws(LMDBError) in
            try check(mdb_env_copy2(handle, directory, compact ? UInt32(MDB_CP_COMPACT) : 0), "mdb_env_copy2", path: directory)
        }
    }
}
