internal import CLMDB
internal import AssetSystem
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// `data.mdb`, held open by an environment that writes through its map
/// (`MDB_WRITEMAP`), for the two things such a map needs that LMDB does not
/// do for it.
///
/// **The file never shrinks under a writer.** With a writable map, LMDB sets
/// the file's length to the map size (`ftruncate`) each time it maps it: when
/// the environment opens and at every `mdb_env_set_mapsize`. Another process
/// may have grown the file and be writing pages past the old end in a
/// transaction it has not committed, so that no meta page records the larger
/// size yet; mapping at the recorded size would cut those pages off under it.
/// So every mapping is made under an exclusive OFD lock, at no less than the
/// file's length read under the lock (``withLengthLocked(_:)``). The lock is
/// on a file of its own, `map.lock` beside `data.mdb`, created with the
/// environment's lock file mode (0600 unless told otherwise): `data.mdb` may
/// be readable by other users, and any reader of a file can hold a shared
/// lock on it that an exclusive lock waits for.
///
/// **Blocks before writes.** A page written through a shared map takes its
/// block when it is first written, in a page fault; on a full file system
/// that fault is `SIGBUS`, not an error. So each write transaction, once it
/// holds LMDB's writer lock, allocates the blocks its writes may reach
/// (``allocateAhead(of:reserving:)``, `fallocate` keeping the length), and a
/// full file system fails the write with `ENOSPC` before anything is written.
/// A large write allocates by a generous estimate; afterwards the blocks past
/// what it used are given back (``trim(_:)``), so that the file does not keep
/// them.
final class MapFile: Sendable {
    /// The file's path, for errors.
    let path: String
    private let descriptor: FileDescriptor
    /// `map.lock`, the length lock's file, and how long to wait for it.
    private let lockPath: String
    private let lock: FileDescriptor
    private let wait: FileLock.Wait

    /// The length lock's file, in the environment's directory.
    static let lockName = "map.lock"
    /// Set once the file system turned out not to allocate ahead: then
    /// writes take their blocks as they come, as LMDB's own would.
    private let cannotAllocate = Atomic<Bool>(false)

    /// The least margin allocated past the pages in use.
    static let step = 256 << 10

    /// What is kept allocated past `used` bytes in use, besides what a write
    /// reserves: an eighth, at least a ``step``. Small writes (a pack's
    /// record, a removal's first pages) fit in it, also on a full disk.
    static func margin(past used: Int) -> Int { max(step, used / 8) }

    /// Opens (creating, with `mode`, as LMDB would) `data.mdb` in `directory`
    /// (giving it group read-write when `groupWrites`), and (creating, with
    /// `lockMode`) the length lock's file, `map.lock`, whose lock is waited
    /// for as `wait` says.
    init(directory: String, mode: UInt32, lockMode: UInt32, wait: FileLock.Wait, groupWrites: Bool) throws(LMDBError) {
        path = directory + "/data.mdb"
        lockPath = directory + "/" + Self.lockName
        self.wait = wait
        do {
            descriptor = try FileDescriptor.open(path, [.readWrite, .create, .noFollow], permissions: mode)
        } catch {
            throw LMDBError(error.rawValue, operation: "open", path: path)
        }
        if groupWrites { _ = try? descriptor.addPermissionsIfOwned(0o060) }
        do {
            lock = try FileDescriptor.open(lockPath, [.readWrite, .create, .noFollow], permissions: lockMode)
        } catch {
            throw LMDBError(error.rawValue, operation: "open (the map-length lock)", path: lockPath)
        }
        _ = try? lock.setPermissionsIfOwned(lockMode)
    }

    /// Runs `body` with the file's length, holding the exclusive lock that
    /// every change of a writable map's size in any process holds.
    ///
    /// - Throws: ``LMDBError`` with `ETIMEDOUT` and ``LMDBError/lockTimeout``
    ///   when the lock is held past the wait, or the error of `fcntl`.
    func withLengthLocked<R>(_ body: (_ length: Int) throws(LMDBError) -> R) throws(LMDBError) -> R {
        do {
            try FileLock.lock(lock, kind: .exclusive, wait: wait, path: lockPath)
        } catch {
            switch error {
            case .timedOut(let t): throw LMDBError(lockTimeout: t.named("the index's map-length lock"))
            case .system(let e): throw LMDBError(e.rawValue, operation: "fcntl F_OFD_SETLK (the map-length lock)", path: lockPath)
            }
        }
        defer { FileLock.unlock(lock) }
        let length: Int
        do { length = Int(try descriptor.status().size) } catch {
            throw LMDBError(error.rawValue, operation: "fstat", path: path)
        }
        return try body(length)
    }

    /// In a write transaction of `env`, which holds LMDB's writer lock (so
    /// no writer of any process is past the pages in use): allocates the
    /// blocks from the last page in use through the `reserving` bytes the
    /// write expects to add and the ``margin(past:)``, up to the map's size.
    ///
    /// - Throws: ``LMDBError`` with `ENOSPC` (or `EDQUOT`) naming the file
    ///   when the file system has no room for them.
    func allocateAhead(of env: OpaquePointer, reserving: Int) throws(LMDBError) {
        guard !cannotAllocate.load(ordering: .relaxed), let (used, mapSize) = Self.extent(of: env) else { return }
        let end = min(mapSize, used + max(0, reserving) + Self.margin(past: used))
        guard end > used else { return }
        do {
            try descriptor.allocate(from: Int64(used), count: Int64(end - used))
        } catch where error == .notSupported || error == .noSys {
            cannotAllocate.store(true, ordering: .relaxed)
        } catch {
            throw LMDBError(error.rawValue, operation: "fallocate: no room for the index to grow by \(end - used) bytes", path: path)
        }
    }

    /// After a write that reserved room: frees the blocks past the pages in
    /// use and the margin, in a write transaction of its own (for LMDB's
    /// writer lock: no writer is past the pages in use, and none allocates
    /// meanwhile), which it aborts. Pages past the last in use belong to no
    /// snapshot: LMDB never lowers that page. Best effort: a file system that
    /// cannot punch holes, or a map another process grew, keeps its blocks.
    ///
    /// It also drops this process's view of the map's pages, which the
    /// commit touched (it clears a flag on every page the write changed):
    /// they stay in the page cache, and a process that keeps the index open
    /// after a large install does not keep them in its resident set.
    func trim(_ env: OpaquePointer) {
        var txn: OpaquePointer?
        guard mdb_txn_begin(env, nil, 0, &txn) == 0, let txn else { return }
        defer { mdb_txn_abort(txn) }
        TransactionCore(txn: txn).releaseResidentPages()
        guard !cannotAllocate.load(ordering: .relaxed), let (used, mapSize) = Self.extent(of: env) else { return }
        let from = (used + Self.margin(past: used) + Self.step - 1) / Self.step * Self.step
        guard from < mapSize else { return }
        try? descriptor.punchHole(from: Int64(from), count: Int64(mapSize - from))
    }

    /// The bytes of `env`'s pages in use (through the last committed page)
    /// and its map size.
    private static func extent(of env: OpaquePointer) -> (used: Int, mapSize: Int)? {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        guard mdb_env_info(env, &info) == 0, mdb_env_stat(env, &stat) == 0 else { return nil }
        return ((info.me_last_pgno + 1) * Int(stat.ms_psize), info.me_mapsize)
    }

    /// Sets the map size of `env` to `size` (0: the size recorded in the
    /// file) with `apply`, which calls `mdb_env_set_mapsize`: under the
    /// length lock, and never below the file's length.
    static func setMapSize(_ size: Int, of file: MapFile?, path: String, _ apply: (Int) -> Int32) throws(LMDBError) {
        guard let file else { return try check(apply(size), "mdb_env_set_mapsize \(size)", path: path) }
        try file.withLengthLocked { (length) throws(LMDBError) in
            let size = file.mapSize(for: size, length: length)
            try check(apply(size), "mdb_env_set_mapsize \(size)", path: path)
        }
    }

    /// The size to map the file at, the length lock held and the file
    /// `length` bytes long: `requested`, or when it is 0 the size the last
    /// commit recorded (a process without a writable map records one without
    /// setting the file's length to it), and never below `length`.
    func mapSize(for requested: Int, length: Int) -> Int {
        let page = MappedRegion.pageSize
        return max(requested == 0 ? recordedMapSize() : requested, (length + page - 1) / page * page)
    }

    /// The map size the last commit recorded: `mm_mapsize` of the meta page
    /// with the larger transaction ID (offsets as in ``MetaPages``, whose
    /// `mm_mapsize` is 16 bytes into `MDB_meta`); 0 when they cannot be read.
    private func recordedMapSize() -> Int {
        let page = MappedRegion.pageSize
        guard let bytes = try? descriptor.read(count: 2 * page, at: 0), bytes.count == 2 * page else { return 0 }
        var best: (txnid: Int, mapSize: Int) = (-1, 0)
        for p in 0..<2 {
            let meta = p * page + MetaPages.header
            let (magic, txnid, mapSize) = bytes.withUnsafeBytes {
                ($0.loadUnaligned(fromByteOffset: meta, as: UInt32.self),
                 $0.loadUnaligned(fromByteOffset: p * page + MetaPages.transactionIDOffset, as: Int.self),
                 $0.loadUnaligned(fromByteOffset: meta + 16, as: Int.self))
            }
            if magic == MetaPages.magic && txnid > best.txnid { best = (txnid, mapSize) }
        }
        return max(0, best.mapSize)
    }
}
