import CSQLite
import CZlib

/// A SQLite database holding the members in a table shaped like SQLite's own
/// archive format, `sqlar`: `name TEXT PRIMARY KEY, mode, mtime, sz, data BLOB`,
/// where `data` is zlib-compressed exactly when it is shorter than `sz`.
///
/// Reads are what a tuned reader does: the connection is read-only with no
/// mutex, memory-mapped I/O up to 4 GiB, one prepared lookup statement
/// (`SELECT rowid, sz … WHERE name = ?`) and one blob handle moved from row to
/// row with `sqlite3_blob_reopen`, then `sqlite3_blob_read` into a buffer.
/// The open blob handle keeps one read transaction open across reads.
final class SQLiteArchive {
    private let db: OpaquePointer
    private let lookup: OpaquePointer
    private var blob: OpaquePointer?

    init(readingFrom path: String) throws {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let handle else { throw PeerError("sqlite3_open_v2 \(path): \(rc)") }
        db = handle
        try SQLiteArchive.exec(db, "PRAGMA mmap_size = 4294967296; PRAGMA cache_size = -262144;")
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT rowid, sz FROM sqlar WHERE name = ?1", -1, &statement, nil) == SQLITE_OK,
              let statement else {
            sqlite3_close_v2(handle)
            throw PeerError("sqlite3_prepare_v2: \(String(cString: sqlite3_errmsg(handle)))")
        }
        lookup = statement
    }

    deinit {
        if let blob { sqlite3_blob_close(blob) }
        sqlite3_finalize(lookup)
        sqlite3_close_v2(db)
    }

    /// Reads the `data` of member `name` into `buffer`. Returns the number of
    /// bytes read and the member's size (`sz`).
    @inline(__always)
    func read(_ name: String, into buffer: ByteBuffer) throws -> (count: Int, size: Int) {
        let found = name.withCString { text in
            sqlite3_bind_text(lookup, 1, text, Int32(name.utf8.count), nil)
            return sqlite3_step(lookup) == SQLITE_ROW
        }
        guard found else {
            sqlite3_reset(lookup)
            throw PeerError("sqlar has no \(name)")
        }
        let rowid = sqlite3_column_int64(lookup, 0)
        let size = Int(sqlite3_column_int64(lookup, 1))
        sqlite3_reset(lookup)
        if let blob {
            guard sqlite3_blob_reopen(blob, rowid) == SQLITE_OK else { throw PeerError("sqlite3_blob_reopen") }
        } else {
            guard sqlite3_blob_open(db, "main", "sqlar", "data", rowid, 0, &blob) == SQLITE_OK else {
                throw PeerError("sqlite3_blob_open: \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        let count = Int(sqlite3_blob_bytes(blob))
        guard count <= buffer.capacity, sqlite3_blob_read(blob, buffer.pointer, Int32(count), 0) == SQLITE_OK else {
            throw PeerError("sqlite3_blob_read")
        }
        return (count, size)
    }

    /// Creates an `sqlar` database at `path` holding `count` members, in one
    /// transaction. `durable` keeps SQLite's defaults (rollback journal,
    /// `synchronous = FULL`); otherwise journal and syncs are off, for
    /// building benchmark data quickly.
    static func create(
        at path: String, count: Int, durable: Bool,
        member: (Int, (_ name: String, _ size: Int, _ data: UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
              let db = handle else { throw PeerError("sqlite3_open_v2 \(path)") }
        defer { sqlite3_close_v2(db) }
        if !durable { try exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;") }
        try exec(db, "CREATE TABLE sqlar(name TEXT PRIMARY KEY, mode INT, mtime INT, sz INT, data BLOB); BEGIN;")
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "INSERT INTO sqlar VALUES (?1, 420, 0, ?2, ?3)", -1, &statement, nil) == SQLITE_OK,
              let insert = statement else { throw PeerError("sqlite3_prepare_v2 insert") }
        defer { sqlite3_finalize(insert) }
        for i in 0 ..< count {
            try member(i) { name, size, data in
                sqlite3_bind_text(insert, 1, name, -1, SQLiteArchive.transient)
                sqlite3_bind_int64(insert, 2, Int64(size))
                sqlite3_bind_blob(insert, 3, data.baseAddress, Int32(data.count), nil)
                guard sqlite3_step(insert) == SQLITE_DONE else {
                    throw PeerError("insert: \(String(cString: sqlite3_errmsg(db)))")
                }
                sqlite3_reset(insert)
            }
        }
        try exec(db, "COMMIT;")
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the bound value.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func exec(_ db: OpaquePointer, _ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "error"
            sqlite3_free(message)
            throw PeerError("sqlite3_exec \(sql): \(text)")
        }
    }
}

/// `sqlite3_blob_read` of a member by name into `buffer`; a compressed
/// value (shorter than `sz`) is then inflated with zlib's `uncompress` into
/// `inflated`, as the `sqlar` tools do.
struct SQLiteRead: Operation {
    let archive: SQLiteArchive
    let names: [String]
    let buffer: ByteBuffer
    let inflated: ByteBuffer
    let consume: Bool

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let (count, size) = try archive.read(names[item], into: buffer)
        guard count < size else {
            return consume ? Int(truncatingIfNeeded: sumBytes(buffer.pointer, count)) : count
        }
        var length = uLongf(inflated.capacity)
        guard uncompress(inflated.pointer.assumingMemoryBound(to: Bytef.self), &length,
                         buffer.pointer.assumingMemoryBound(to: Bytef.self), uLong(count)) == Z_OK,
              Int(length) == size else { throw PeerError("uncompress") }
        return consume ? Int(truncatingIfNeeded: sumBytes(inflated.pointer, size)) : size
    }
}
