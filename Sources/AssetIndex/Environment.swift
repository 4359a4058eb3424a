internal import CLMDB
internal import AssetSystem
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// An LMDB environment: the `data.mdb` and `lock.mdb` files in one directory,
/// holding named databases, shared by the threads of this process and by
/// other processes.
///
/// Open it once per process and share the object: it is `Sendable`, and LMDB
/// forbids two open environments on the same files in one process (the
/// second ``init(path:databases:options:)`` fails with `EBUSY`).
///
/// Reads (``read(_:)``) run on a snapshot in a pooled read transaction and
/// never block on writers. Writes (``write(_:)``) are serialized, within the
/// process and across processes, and grow the map when it fills.
/// Transactions are closure-scoped and synchronous: never hold one across an
/// `await`.
public final class Environment: Sendable {
    /// The `MDB_env`. The pointer never changes; LMDB's environment functions
    /// are safe from any thread except `mdb_env_set_mapsize`, which runs only
    /// behind the gate in ``pool`` (see ``ReaderPool``), with ``writeLock`` held.
    nonisolated(unsafe) let handle: OpaquePointer
    /// The environment's directory, as given.
    public let path: String
    /// The declared databases, by name.
    let databases: [String: Database]
    /// The map never grows beyond this many bytes.
    let maximumMapSize: Int
    /// Read transactions ready for reuse, and the map gate.
    let pool = ReaderPool()
    /// Serializes write transactions and map resizes in this process.
    let writeLock = Mutex<Void>(())
    /// The directory's identity, claimed in ``OpenEnvironments``.
    private let identity: OpenEnvironments.Identity
    /// The meta pages mapped by themselves, for ``lastCommittedTransactionID``;
    /// `nil` where they could not be (it then asks `mdb_env_info`).
    let metaPages: MetaPages?
    /// `data.mdb`'s length lock and block allocation, when writes go through
    /// the map (``Options/writesThroughMap``); `nil` otherwise.
    let mapFile: MapFile?

    /// Opens the environment in the existing directory `path`, creating
    /// `data.mdb` (with ``Options/fileMode``), `lock.mdb` and, with the
    /// writable map, `map.lock` (with ``Options/lockFileMode``) when missing,
    /// and opens or creates the named databases.
    ///
    /// The environment is opened with `MDB_NOTLS` (a Swift task may resume on
    /// another thread), clears reader slots left by dead processes
    /// (`mdb_reader_check`), and adopts a map size that another process grew
    /// beyond ``Options/mapSize``. The databases are opened in a read
    /// transaction when they all exist, else created in one write transaction.
    ///
    /// - Parameters:
    ///   - path: an existing directory. It is not created.
    ///   - databases: the named databases and their flags. Names are unique
    ///     and not empty (preconditions); `options.maxDatabases` bounds them.
    ///   - options: sizes and flags.
    /// - Throws: ``LMDBError`` naming `path`: `ENOENT` when the directory is
    ///   missing, `ENOTDIR` when it is not a directory, `EBUSY` when this
    ///   process already has it open, ``LMDBError/incompatible`` when a
    ///   database exists with other flags, ``LMDBError/notFound`` for a missing
    ///   database of a read-only environment, and the errors of the C calls.
    ///   The corresponding C functions are `mdb_env_create`, `mdb_env_open`
    ///   and `mdb_dbi_open`.
    public init(
        path: String, databases declared: [(name: String, flags: DatabaseFlags)], options: Options = .init()
    ) throws(LMDBError) {
        var names = Set<String>()
        for (name, _) in declared {
            precondition(!name.isEmpty && !name.utf8.contains(0), "database names are non-empty and contain no NUL")
            precondition(names.insert(name).inserted, "database \(name) is declared twice")
        }
        let status: FileStatus?
        do { status = try FileDescriptor.status(of: path) } catch {
            throw LMDBError(error.rawValue, operation: "mdb_env_open: cannot examine the directory", path: path)
        }
        guard let status else {
            throw LMDBError(ENOENT, operation: "mdb_env_open: the environment directory does not exist", path: path)
        }
        guard status.isDirectory else {
            throw LMDBError(ENOTDIR, operation: "mdb_env_open: the environment path is not a directory", path: path)
        }
        let identity = OpenEnvironments.Identity(device: status.device, inode: status.inode)
        guard OpenEnvironments.claim(identity) else {
            throw LMDBError(EBUSY, operation: "mdb_env_open: this process already has this environment open", path: path)
        }
        let page = MappedRegion.pageSize
        let mapSize = (max(options.mapSize, page) + page - 1) / page * page
        let maximum = max(mapSize, options.maximumMapSize / page * page)
        do {
            if !options.readOnly { Environment.prepareLockFile(path + "/lock.mdb", mode: options.lockFileMode) }
            let mapFile = options.writesThroughMap && !options.readOnly
                ? try MapFile(directory: path, mode: options.fileMode, lockMode: options.lockFileMode, wait: options.lockWait,
                              groupWrites: options.groupWrites) : nil
            (handle, databases) = try Environment.open(path: path, declared: declared, options: options, mapSize: mapSize, mapFile: mapFile)
            self.mapFile = mapFile
        } catch {
            OpenEnvironments.release(identity)
            throw error
        }
        self.path = path
        self.identity = identity
        self.metaPages = MetaPages(environment: handle)
        self.maximumMapSize = maximum
    }

    deinit {
        for txn in pool.removeAll() { mdb_txn_abort(txn.pointer) }
        mdb_env_close(handle)
        OpenEnvironments.release(identity)
    }

    /// The handle of a database declared when the environment was opened.
    /// Asking for an undeclared name is a programming error (a precondition).
    public func database(_ name: String) -> Database {
        guard let db = databases[name] else { preconditionFailure("database \(name) was not declared when \(path) was opened") }
        return db
    }

    // MARK: Opening

    /// Creates `lock.mdb` with `mode` before LMDB opens it (LMDB would give
    /// it `data.mdb`'s mode), or sets an existing one this process owns to
    /// `mode`. Best effort: what fails here, LMDB's own open reports.
    private static func prepareLockFile(_ path: String, mode: UInt32) {
        guard let fd = try? FileDescriptor.open(path, [.readWrite, .create, .noFollow], permissions: mode) else { return }
        _ = try? fd.setPermissionsIfOwned(mode)
    }

    private static func open(
        path: String, declared: [(name: String, flags: DatabaseFlags)], options: Options, mapSize: Int, mapFile: MapFile?
    ) throws(LMDBError) -> (OpaquePointer, [String: Database]) {
        var created: OpaquePointer?
        try check(mdb_env_create(&created), "mdb_env_create", path: path)
        guard let env = created else { throw LMDBError(ENOMEM, operation: "mdb_env_create", path: path) }
        do {
            try check(mdb_env_set_maxreaders(env, UInt32(options.maxReaders)), "mdb_env_set_maxreaders", path: path)
            try check(mdb_env_set_maxdbs(env, UInt32(options.maxDatabases)), "mdb_env_set_maxdbs", path: path)
            var flags = MDB_NOTLS
            if options.readOnly { flags |= MDB_RDONLY }
            if options.noSync { flags |= MDB_NOSYNC }
            if options.noReadAhead { flags |= MDB_NORDAHEAD }
            if let mapFile {
                flags |= MDB_WRITEMAP
                // Opening maps the file writable, which sets its length to
                // the map size: under the lock, and never below the length
                // another process may be writing up to (see MapFile), nor
                // below the size the last commit recorded.
                try mapFile.withLengthLocked { (length) throws(LMDBError) in
                    let size = mapFile.mapSize(for: 0, length: length)
                    if size > 0 { try check(mdb_env_set_mapsize(env, size), "mdb_env_set_mapsize", path: path) }
                    try openAndGrow(env, path: path, flags: flags, options: options, mapSize: mapSize)
                }
            } else {
                // No map size is set before opening, so LMDB adopts the size
                // recorded in the file, which another process may have grown.
                try openAndGrow(env, path: path, flags: flags, options: options, mapSize: mapSize)
            }
            if options.clearsStaleReadersOnOpen {
                var dead: Int32 = 0
                try check(mdb_reader_check(env, &dead), "mdb_reader_check", path: path)
            }
            return (env, try openDatabases(env, path: path, declared: declared, readOnly: options.readOnly, mapFile: mapFile))
        } catch {
            mdb_env_close(env)
            throw error
        }
    }

    /// `mdb_env_open`, then a map of at least `mapSize`.
    private static func openAndGrow(_ env: OpaquePointer, path: String, flags: Int32, options: Options, mapSize: Int) throws(LMDBError) {
        try check(mdb_env_open(env, path, UInt32(flags), mode_t(options.fileMode)), "mdb_env_open", path: path)
        // LMDB opens data.mdb without O_CLOEXEC. A child process must not
        // inherit it: one that writes to a descriptor number it was
        // promised (Swift's crash reporter does, when it could not make
        // its socket pair for lack of descriptors) writes into the index.
        var dataFile: mdb_filehandle_t = -1
        if mdb_env_get_fd(env, &dataFile) == 0 { _ = fcntl(dataFile, F_SETFD, FD_CLOEXEC) }
        var info = MDB_envinfo()
        _ = mdb_env_info(env, &info)
        if info.me_mapsize < mapSize {
            try check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize", path: path)
        }
    }

    /// Opens the declared databases in a read transaction, or, when some are
    /// missing and the environment is writable, creates them in a write one.
    private static func openDatabases(
        _ env: OpaquePointer, path: String, declared: [(name: String, flags: DatabaseFlags)], readOnly: Bool, mapFile: MapFile?
    ) throws(LMDBError) -> [String: Database] {
        for create in [false, true] {
            var txn: OpaquePointer?
            var rc = mdb_txn_begin(env, nil, create ? 0 : UInt32(MDB_RDONLY), &txn)
            if rc == MDB_MAP_RESIZED {
                try MapFile.setMapSize(0, of: mapFile, path: path) { mdb_env_set_mapsize(env, $0) }
                rc = mdb_txn_begin(env, nil, create ? 0 : UInt32(MDB_RDONLY), &txn)
            }
            try check(rc, "mdb_txn_begin", path: path)
            if create, let mapFile {
                do { try mapFile.allocateAhead(of: env, reserving: 0) } catch {
                    mdb_txn_abort(txn)
                    throw error
                }
            }
            var result: [String: Database] = [:]
            var missing: String?
            for (name, flags) in declared {
                var dbi: MDB_dbi = 0
                let sorted = flags == .duplicateSorted
                let rc = mdb_dbi_open(txn, name, UInt32((sorted ? MDB_DUPSORT : 0) | (create ? MDB_CREATE : 0)), &dbi)
                if rc == MDB_NOTFOUND && !create { missing = name; break }
                guard rc == 0 else {
                    mdb_txn_abort(txn)
                    throw LMDBError(rc, operation: "mdb_dbi_open \(name)", path: path)
                }
                // An existing database keeps the flags it was created with.
                var stored: UInt32 = 0
                _ = mdb_dbi_flags(txn, dbi, &stored)
                guard (stored & UInt32(MDB_DUPSORT) != 0) == sorted else {
                    mdb_txn_abort(txn)
                    throw LMDBError(MDB_INCOMPATIBLE, operation: "mdb_dbi_open \(name) (exists with other flags)", path: path)
                }
                result[name] = Database(dbi: dbi, name: name, isDuplicateSorted: sorted)
            }
            if let missing {
                mdb_txn_abort(txn)
                if readOnly { throw LMDBError(MDB_NOTFOUND, operation: "mdb_dbi_open \(missing) (read-only environment)", path: path) }
                continue
            }
            let committed = mdb_txn_commit(txn)
            guard committed == 0 else { throw commitError(committed, operation: "mdb_txn_commit (opening databases)", path: path, env: env) }
            return result
        }
        preconditionFailure("the second pass creates every database or throws")
    }
}
