internal import CLMDB
public import AssetSystem
#if canImport(Glibc)
internal import Glibc
#endif

/// An error reported by LMDB (an `MDB_*` code) or by the system beneath it (an
/// `errno` value), with the operation that failed and the path it concerned.
///
/// Errors compare by ``code`` only, so `catch let e where e == .mapFull` works
/// whatever the operation was:
///
/// ```swift
/// do { try env.write { txn in try txn.put(db, key: k, value: v) } }
/// catch .lmdb(let e) where e == .readersFull { … }
/// ```
public struct LMDBError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The `MDB_*` return code (negative, from -30799 to -30780) or an `errno`
    /// value (positive), such as `ENOENT` or `EACCES`.
    public let code: Int32
    /// The LMDB function that failed and what it acted on, such as
    /// `mdb_put packs` or `mdb_env_open`.
    public let operation: String
    /// The file or directory the operation concerned, if any.
    public let path: String?
    /// For `ETIMEDOUT` from a lock of the environment's own (the map-length
    /// lock): which lock, how long and who held it.
    public let lockTimeout: LockTimeout?

    /// Creates an error for `code`, as reported by `operation` on `path`.
    public init(_ code: Int32, operation: String = "", path: String? = nil) {
        self.code = code
        self.operation = operation
        self.path = path
        self.lockTimeout = nil
    }

    /// An `ETIMEDOUT` for a lock the environment waited for in vain.
    public init(lockTimeout: LockTimeout) {
        self.code = ETIMEDOUT
        self.operation = lockTimeout.description
        self.path = lockTimeout.path
        self.lockTimeout = lockTimeout
    }

    /// LMDB's text for the code; for `errno` values the system's
    /// (`strerror`). The corresponding C function is `mdb_strerror`.
    public var message: String { String(cString: mdb_strerror(code)) }

    /// `operation 'path': message`, one line; a lock's timeout as
    /// ``LockTimeout`` says it.
    public var description: String {
        if let lockTimeout { return lockTimeout.description }
        var parts: [String] = []
        if !operation.isEmpty { parts.append(operation) }
        if let path { parts.append("'\(path)'") }
        let what = parts.joined(separator: " ")
        return what.isEmpty ? message : "\(what): \(message)"
    }

    /// Compares codes only.
    public static func == (a: LMDBError, b: LMDBError) -> Bool { a.code == b.code }
    /// Hashes the code only, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The environment's map is full (`MDB_MAP_FULL`). ``Environment/write(_:)``
    /// grows the map and retries by itself; this reaches a caller only when
    /// ``Environment/Options/maximumMapSize`` is reached.
    public var isMapFull: Bool { code == MDB_MAP_FULL }

    /// `MDB_KEYEXIST`: the key/value pair already exists.
    public static let keyExists = LMDBError(MDB_KEYEXIST)
    /// `MDB_NOTFOUND`: the key/value pair was not found.
    public static let notFound = LMDBError(MDB_NOTFOUND)
    /// `MDB_PAGE_NOTFOUND`: a page was missing; the file is probably corrupt.
    public static let pageNotFound = LMDBError(MDB_PAGE_NOTFOUND)
    /// `MDB_CORRUPTED`: a page had the wrong type; the file is corrupt.
    public static let corrupted = LMDBError(MDB_CORRUPTED)
    /// `MDB_PANIC`: a meta page update failed; the environment must be reopened.
    public static let panic = LMDBError(MDB_PANIC)
    /// `MDB_VERSION_MISMATCH`: the files were made by an incompatible LMDB.
    public static let versionMismatch = LMDBError(MDB_VERSION_MISMATCH)
    /// `MDB_INVALID`: the file is not an LMDB file.
    public static let invalid = LMDBError(MDB_INVALID)
    /// `MDB_MAP_FULL`: the map is full.
    public static let mapFull = LMDBError(MDB_MAP_FULL)
    /// `MDB_DBS_FULL`: more named databases than `maxDatabases`.
    public static let databasesFull = LMDBError(MDB_DBS_FULL)
    /// `MDB_READERS_FULL`: every reader slot is taken.
    public static let readersFull = LMDBError(MDB_READERS_FULL)
    /// `MDB_TXN_FULL`: the transaction has too many dirty pages.
    public static let transactionFull = LMDBError(MDB_TXN_FULL)
    /// `MDB_MAP_RESIZED`: another process grew the map.
    public static let mapResized = LMDBError(MDB_MAP_RESIZED)
    /// `MDB_INCOMPATIBLE`: the operation does not suit the database's flags,
    /// or a database was reopened with different flags.
    public static let incompatible = LMDBError(MDB_INCOMPATIBLE)
    /// `MDB_BAD_RSLOT`: a reader slot was reused wrongly.
    public static let badReaderSlot = LMDBError(MDB_BAD_RSLOT)
    /// `MDB_BAD_TXN`: the transaction had an earlier error and must abort.
    public static let badTransaction = LMDBError(MDB_BAD_TXN)
    /// `MDB_BAD_VALSIZE`: a key is empty or longer than 511 bytes, or a value
    /// of a duplicate-sorted database is longer than 511 bytes.
    public static let badValueSize = LMDBError(MDB_BAD_VALSIZE)
    /// `MDB_BAD_DBI`: the database handle changed unexpectedly.
    public static let badDatabase = LMDBError(MDB_BAD_DBI)
}

/// Throws an ``LMDBError`` for a non-zero LMDB return code.
@inline(__always)
func check(_ code: Int32, _ operation: @autoclosure () -> String, path: String? = nil) throws(LMDBError) {
    if code != 0 { throw LMDBError(code, operation: operation(), path: path) }
}
