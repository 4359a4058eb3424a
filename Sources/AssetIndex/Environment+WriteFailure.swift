internal import CLMDB
internal import AssetSystem
#if canImport(Glibc)
internal import Glibc
#endif

extension Environment {
    /// How close to full a file system (or to its size limit a file) must be
    /// for a short write to be explained by it: LMDB writes at most 64 pages
    /// at once (`MDB_COMMIT_PAGES`), so after a short write less than that is
    /// left; 1 MiB leaves room for pages larger than 4 KiB and for what other
    /// processes freed meanwhile.
    static let shortWriteSlack: UInt64 = 1 << 20

    /// The error for a failed `mdb_txn_commit` of environment `env` at `path`.
    ///
    /// LMDB reports a write that stopped short as `EIO` (`mdb_page_flush`:
    /// "short write, filesystem full?"), which is what a write that runs out
    /// of space part-way does, so a full disk would read "Input/output error".
    /// An `EIO` is therefore checked against its likely causes: the file
    /// system holding `path` has (almost) no space left for this user —
    /// `ENOSPC`; `data.mdb` has reached the process's file size limit
    /// (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored) — `EFBIG`. Otherwise, and for
    /// every other code (`ENOSPC` and `EDQUOT` from a write that wrote
    /// nothing arrive as they are), the code stands.
    /// The corresponding C functions are `statvfs`, `getrlimit` and `fstat`.
    static func commitError(_ rc: Int32, operation: String, path: String, env: OpaquePointer) -> LMDBError {
        guard rc == EIO else { return LMDBError(rc, operation: operation, path: path) }
        if let free = FileSystem.freeSpace(at: path), free < shortWriteSlack {
            return LMDBError(ENOSPC, operation: "\(operation) (a short write, which LMDB reports as EIO; \(free) bytes free)", path: path)
        }
        if let limit = FileSystem.fileSizeLimit {
            var fd: mdb_filehandle_t = -1
            var status = stat()
            if mdb_env_get_fd(env, &fd) == 0, fstat(fd, &status) == 0,
               UInt64(max(0, status.st_size)) + shortWriteSlack >= limit {
                return LMDBError(EFBIG, operation: "\(operation) (a short write at the file size limit of \(limit) bytes, which LMDB reports as EIO)", path: path)
            }
        }
        return LMDBError(rc, operation: operation, path: path)
    }
}
