internal import CLMDB

extension Environment {
    /// Runs `body` in a read transaction: a consistent snapshot of every
    /// database, unaffected by concurrent writers in any process.
    ///
    /// The transaction comes from a pool of reset transactions
    /// (`mdb_txn_renew`, then `mdb_txn_reset` after the body), so a warm read
    /// does not call `mdb_txn_begin` or allocate. Buffers the body sees point
    /// into the map and are valid only inside it; copy what you return.
    /// Reads may nest, and may run inside a write body (they then see the
    /// last commit, not the write's changes). Keep bodies short, and never
    /// wait in one for another thread's read: a map resize waits for every
    /// read of the process to end, and holds new ones back meanwhile.
    ///
    /// Threads read in parallel without contending for a lock: the pool
    /// keeps its idle transactions in shards, one per thread.
    ///
    /// When another process has grown the map past this process's mapping
    /// (`MDB_MAP_RESIZED`), the read waits for the current write of this
    /// process, adopts the new size and proceeds; if this thread already
    /// holds another transaction, adopting is impossible and the read throws
    /// `.lmdb(.mapResized)` — end the outer transaction and retry. When the
    /// reader table is full, stale slots of dead processes are cleared and
    /// the read tried once more.
    ///
    /// - Throws: ``TransactionError/body(_:)`` with what `body` threw;
    ///   ``TransactionError/lmdb(_:)`` when the transaction could not start
    ///   (``LMDBError/readersFull``, ``LMDBError/mapResized``, …).
    ///   The corresponding C functions are `mdb_txn_renew` and `mdb_txn_reset`.
    @inlinable @discardableResult
    public func read<R, E: Error>(_ body: (borrowing ReadTransaction) throws(E) -> R) throws(TransactionError<E>) -> R {
        let lease: ReadLease
        do { lease = try beginRead() } catch { throw .lmdb(error) }
        defer { endRead(lease) }
        do { return try body(ReadTransaction(lease.txn)) } catch { throw .body(error) }
    }

    /// Ends a read: resets its transaction and returns it to the pool.
    @usableFromInline
    func endRead(_ lease: ReadLease) {
        mdb_txn_reset(lease.txn)
        pool.dismiss(lease.thread, keeping: ReaderPool.Transaction(pointer: lease.txn))
    }

    /// Runs `body` in a write transaction and commits it; aborts it if `body`
    /// throws, so that nothing it wrote becomes visible.
    ///
    /// Writes are serialized: within this process by a lock, across
    /// processes by LMDB's writer mutex. **`body` may run more than once:**
    /// when the map fills (`MDB_MAP_FULL`, from a `put` or from the commit,
    /// even if `body` caught the error), the transaction is aborted, the map
    /// doubles (up to ``Options/maximumMapSize``) once this process's reads
    /// have drained, and `body` runs again in a fresh transaction; when
    /// another process grew the map (`MDB_MAP_RESIZED`), the new size is
    /// adopted and the transaction begun again. Keep effects outside the
    /// transaction out of `body`, or make them idempotent.
    ///
    /// Calling `write` inside a read or a write body on the same thread is a
    /// programming error (a precondition): the write could wait forever for
    /// the enclosing transaction.
    ///
    /// - Throws: ``TransactionError/body(_:)`` with what `body` threw
    ///   (LMDB errors from its calls included); ``TransactionError/lmdb(_:)``
    ///   when beginning, growing or committing failed, such as
    ///   ``LMDBError/mapFull`` at the size limit or `EACCES` in a read-only
    ///   environment. The corresponding C functions are `mdb_txn_begin`,
    ///   `mdb_txn_commit` and `mdb_env_set_mapsize`.
    ///
    /// - Parameter reserving: bytes the transaction is expected to add to
    ///   the file (an estimate, 0 by default). Before beginning, the map
    ///   grows (doubling, up to ``Options/maximumMapSize``) until that many
    ///   bytes fit past the last page in use: a large write then runs once
    ///   instead of once per doubling it would otherwise fill. The map keeps
    ///   growing on `MDB_MAP_FULL` as ever when the estimate falls short.
    @discardableResult
    public func write<R, E: Error>(
        reserving: Int = 0, _ body: (borrowing WriteTransaction) throws(E) -> R
    ) throws(TransactionError<E>) -> R {
        let thread = ThreadIndex.current
        precondition(pool.writer.load(ordering: .relaxed) != thread, "Environment.write called inside a write body on the same thread")
        precondition(!pool.isReading(thread), "Environment.write called inside a read body on the same thread; end the read first")
        var result: R?
        try writeLock.withLock { (_: inout Void) throws(TransactionError<E>) in
            pool.writer.store(thread, ordering: .relaxed)
            defer { pool.writer.store(0, ordering: .relaxed) }
            if reserving > 0 { reserve(reserving) }
            result = try runWrite(reserving: reserving, body)
        }
        guard let result else { preconditionFailure("a write that did not throw has a result") }
        return result
    }

    /// Begins, runs and commits until the body's transaction fits the map.
    /// With a writable map, each attempt first allocates the file's blocks
    /// the write may reach, and a write that reserved room gives back what it
    /// did not use (see ``MapFile``). The caller holds ``writeLock``.
    private func runWrite<R, E: Error>(reserving: Int, _ body: (borrowing WriteTransaction) throws(E) -> R) throws(TransactionError<E>) -> R {
        while true {
            var begun: OpaquePointer?
            let rc = mdb_txn_begin(handle, nil, 0, &begun)
            if rc == MDB_MAP_RESIZED {
                do { try remap(to: 0) } catch { throw .lmdb(error) }
                continue
            }
            guard rc == 0, let txn = begun else {
                throw .lmdb(LMDBError(rc, operation: "mdb_txn_begin (write)", path: path))
            }
            if let mapFile {
                do { try mapFile.allocateAhead(of: handle, reserving: reserving) } catch {
                    mdb_txn_abort(txn)
                    throw .lmdb(error)
                }
            }
            var mapFull = false
            let outcome = withUnsafeMutablePointer(to: &mapFull) { flag in
                Result { () throws(E) -> R in try body(WriteTransaction(txn, mapFull: flag)) }
            }
            if mapFull {
                mdb_txn_abort(txn)
                do { try grow() } catch { throw .lmdb(error) }
                continue
            }
            switch outcome {
            case .failure(let error):
                mdb_txn_abort(txn)
                throw .body(error)
            case .success(let value):
                let rc = mdb_txn_commit(txn)
                if rc == MDB_MAP_FULL {
                    do { try grow() } catch { throw .lmdb(error) }
                    continue
                }
                guard rc == 0 else { throw .lmdb(Environment.commitError(rc, operation: "mdb_txn_commit", path: path, env: handle)) }
                if reserving > 0 { mapFile?.trim(handle) }
                return value
            }
        }
    }

    // MARK: The read pool

    /// Lends a renewed read transaction from the pool, beginning one when
    /// no pooled transaction is idle.
    @usableFromInline
    func beginRead() throws(LMDBError) -> ReadLease {
        let thread = ThreadIndex.current
        var clearedStaleReaders = false
        while true {
            let pooled = pool.admit(thread)
            var txn = pooled?.pointer
            let rc: Int32
            if let pooled { rc = mdb_txn_renew(pooled.pointer) } else { rc = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn) }
            if rc == 0, let txn { return ReadLease(thread: thread, txn: txn) }
            // A failed renew leaves a transaction that is not worth keeping; a
            // failed begin leaves none.
            if let pooled { mdb_txn_abort(pooled.pointer) }
            pool.dismiss(thread, keeping: nil)
            if rc == MDB_MAP_RESIZED {
                try adoptGrownMap(thread: thread)
                continue
            }
            if rc == MDB_READERS_FULL && !clearedStaleReaders {
                clearedStaleReaders = true
                if try clearStaleReaders() > 0 { continue }
            }
            throw LMDBError(rc, operation: pooled == nil ? "mdb_txn_begin (read)" : "mdb_txn_renew", path: path)
        }
    }

    // MARK: Resizing the map

    /// Adopts the map size another process recorded, unless this thread holds
    /// a transaction (then the map cannot be remapped until it ends).
    private func adoptGrownMap(thread: Int) throws(LMDBError) {
        let generation = pool.generation.load(ordering: .sequentiallyConsistent)
        guard !pool.isReading(thread), pool.writer.load(ordering: .relaxed) != thread else {
            throw LMDBError(MDB_MAP_RESIZED, operation: "mdb_txn_renew: another process grew the map while this thread holds a transaction", path: path)
        }
        try writeLock.withLock { (_: inout Void) throws(LMDBError) in
            // Another thread may have adopted it while this one waited.
            guard pool.generation.load(ordering: .sequentiallyConsistent) == generation else { return }
            try remap(to: 0)
        }
    }

    /// Grows the map, doubling up to the limit, until `bytes` fit past the
    /// last page in use. A map that cannot grow stays as it is: the write
    /// then grows it on `MDB_MAP_FULL`, or fails there as it would have.
    /// The caller holds ``writeLock`` and no transaction.
    private func reserve(_ bytes: Int) {
        let info = info()
        let needed = (info.lastPage + 1) * info.pageSize + bytes
        var size = info.mapSize
        while size < needed && size < maximumMapSize { size = min(maximumMapSize, size * 2) }
        guard size > info.mapSize else { return }
        try? remap(to: size)
    }

    /// Doubles the map, up to the limit. The caller holds ``writeLock``.
    ///
    /// - Throws: ``LMDBError/mapFull`` naming the index when the map is at
    ///   its limit, or when it cannot grow (the error of
    ///   `mdb_env_set_mapsize`, such as `ENOMEM` from `mmap`, in the
    ///   operation's text): either way the write does not fit.
    private func grow() throws(LMDBError) {
        let current = mapSize
        guard current < maximumMapSize else {
            throw LMDBError(MDB_MAP_FULL, operation: "mdb_txn_commit: the index is full, its map reached its limit of \(maximumMapSize) bytes", path: path)
        }
        let size = min(maximumMapSize, current * 2)
        do { try remap(to: size) } catch {
            throw LMDBError(MDB_MAP_FULL, operation: "mdb_txn_commit: the index is full and its map cannot grow to \(size) bytes (mdb_env_set_mapsize: \(error.message))", path: path)
        }
    }

    /// Sets the map size (0: adopt the size recorded in the file) once no
    /// read of this process uses the map; reads that start meanwhile wait.
    /// The caller holds ``writeLock`` and no transaction.
    private func remap(to size: Int) throws(LMDBError) {
        try MapFile.setMapSize(size, of: mapFile, path: path) { (size) in pool.drain { mdb_env_set_mapsize(handle, size) } }
    }
}

/// A read transaction lent by the pool to a thread, from ``Environment/beginRead()``
/// to ``Environment/endRead(_:)``.
@usableFromInline
struct ReadLease {
    @usableFromInline let thread: Int
    @usableFromInline let txn: OpaquePointer
}
