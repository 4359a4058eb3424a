public import AssetSystem

extension Environment {
    /// How to open an environment. The defaults suit an index of a few
    /// hundred thousand records shared by a handful of processes.
    public struct Options: Sendable {
        /// The initial size of the memory map, in bytes. Writes that need more
        /// grow the map (doubling) up to ``maximumMapSize``. When the file was
        /// already grown further, by this or another process, its size wins.
        /// The corresponding C function is `mdb_env_set_mapsize`.
        public var mapSize: Int = 64 << 20
        /// The size beyond which the map does not grow: a write that needs more
        /// fails with ``LMDBError/mapFull``.
        public var maximumMapSize: Int = 16 << 30
        /// The size of the reader table, shared by every process that opens
        /// the environment; only the first process to open it decides.
        /// Each concurrent read in a process holds one slot, and keeps it for
        /// reuse. The corresponding C function is `mdb_env_set_maxreaders`.
        public var maxReaders: Int = 126
        /// The most named databases the environment can hold.
        /// The corresponding C function is `mdb_env_set_maxdbs`.
        public var maxDatabases: Int = 16
        /// Opens for reading only (`MDB_RDONLY`): ``Environment/write(_:)``
        /// fails with `EACCES`, and every declared database must exist.
        public var readOnly = false
        /// Does not flush to storage on commit (`MDB_NOSYNC`): faster, but a
        /// system crash may lose the last transactions (never the database's
        /// integrity).
        public var noSync = false
        /// Writes through a writable map (`MDB_WRITEMAP`, unless
        /// ``readOnly``): a write transaction's pages are the file's own pages
        /// in the page cache, written in place, instead of buffers LMDB
        /// allocates on the heap, copies out with `pwrite` at the commit and
        /// then keeps for reuse until the environment closes. A write of a
        /// million records then adds about 15 MB of heap instead of 130 MB,
        /// and what it wrote is page cache the kernel writes back and may
        /// reclaim.
        ///
        /// The file's length is then the map size (its unwritten part a hole,
        /// which takes no space); the map is only ever set, in any process,
        /// under an exclusive lock on `map.lock` (waited for as ``lockWait``
        /// says) and never below the file's length, so that it never shrinks under another process's write;
        /// and before each write transaction the blocks it may reach are
        /// allocated (`fallocate`), so that a full disk fails the write with
        /// `ENOSPC` instead of a `SIGBUS` in the middle of it. Every process
        /// that writes an environment must agree on this option, as LMDB
        /// requires.
        public var writesThroughMap = true
        /// Turns off the kernel's read-ahead on the map (`MDB_NORDAHEAD`),
        /// which helps random reads of a database larger than memory.
        public var noReadAhead = false
        /// Permission bits for `data.mdb` when it is created (the umask
        /// applies). 0644 lets other users read the file; reading it through
        /// LMDB takes write access to `lock.mdb` as well (``lockFileMode``).
        public var fileMode: UInt32 = 0o644
        /// Permission bits for `lock.mdb` and `map.lock`, the files every
        /// process of the environment locks: set when they are created and
        /// whenever this process owns one that has others. 0600 lets only
        /// the owner open them; 0660 the group as well. Whoever can write
        /// `lock.mdb` can hold LMDB's writer mutex, and so every writer; a
        /// reader of it can take a shared `fcntl` lock over the whole file,
        /// which fails every other process's first read transaction
        /// (`EAGAIN`, from LMDB's lock on the byte at its pid).
        public var lockFileMode: UInt32 = 0o600
        /// Whether the group writes the environment too: `data.mdb` is then
        /// given group read-write when this process owns it (the umask may
        /// have taken it away), as the lock files have with a
        /// ``lockFileMode`` of 0660.
        public var groupWrites = false
        /// How long to wait for the map-length lock (``writesThroughMap``),
        /// which a process holds while it maps the file: an instant.
        public var lockWait: FileLock.Wait = .standard
        /// Whether opening frees the reader slots of dead processes
        /// (`mdb_reader_check`). Verification tools turn it off to see them.
        public var clearsStaleReadersOnOpen = true

        /// The defaults.
        public init() {}
    }

    /// What a named database keeps under one key.
    public enum DatabaseFlags: Sendable, Hashable {
        /// One value per key.
        case plain
        /// Several values per key, kept sorted (`MDB_DUPSORT`). Values are at
        /// most 511 bytes.
        case duplicateSorted
    }
}
