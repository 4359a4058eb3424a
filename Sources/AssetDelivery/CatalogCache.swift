import Foundation
import AssetArchive
public import AssetStore
import AssetSystem

/// The container's catalog cache, `catalog/`: a directory per catalog URL
/// (``CatalogFetcher`` writes and reads it), kept within ``Limits``.
///
/// Every directory and file is reached relative to the descriptor of
/// `catalog/` that the container's layout opened (``AssetStore/catalogDirectory``),
/// without following a symlink; a file is read only when it is a regular
/// file (opened with `O_NONBLOCK`, so a FIFO never blocks the reader) of at
/// most ``CatalogFetcher/maximumSize`` bytes.
///
/// After each catalog it fetches, the fetcher prunes the others: an entry
/// not used for ``Limits/maximumAge`` goes, then the least recently used
/// ones beyond ``Limits/maximumCatalogs`` or ``Limits/maximumBytes``. The
/// entry of the catalog just fetched is never pruned, whatever its size.
/// An entry's last use is the modification time of its `url` file, which
/// every fetch answered from it (`304`, offline) sets to now.
public struct CatalogCache: Sendable {
    /// How much the cache keeps.
    public struct Limits: Sendable, Hashable {
        /// Catalog URLs kept at most, the one in use included (default 8).
        public var maximumCatalogs: Int
        /// Bytes kept at most, over every entry's files (default 64 MiB);
        /// the entry in use is kept whatever its size.
        public var maximumBytes: Int64
        /// Seconds after its last use that an entry goes (default 30 days).
        public var maximumAge: Double

        public init(maximumCatalogs: Int = 8, maximumBytes: Int64 = 64 << 20, maximumAge: Double = 30 * 86_400) {
            self.maximumCatalogs = maximumCatalogs
            self.maximumBytes = maximumBytes
            self.maximumAge = maximumAge
        }
    }

    public let store: AssetStore
    public let limits: Limits

    public init(store: AssetStore, limits: Limits = Limits()) {
        self.store = store
        self.limits = limits
    }

    /// The entry name of `url`: the first 16 hex digits of its SHA-256.
    public static func name(for url: String) -> String {
        String(SHA256.hex(Array(url.utf8).withUnsafeBytes { SHA256.hash($0) }).prefix(16))
    }

    /// Whether `name` is an entry's name (16 lowercase hex digits).
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 16 && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// The entry directory of `url`, made when `creating` and missing.
    ///
    /// - Throws: `.symlinkInContainer` when `catalog/` or the entry is a
    ///   symlink, `.system`.
    public func entry(for url: String, creating: Bool) throws(StoreError) -> LayoutDirectory {
        try store.catalogDirectory.subdirectory(Self.name(for: url), creating: creating)
    }

    /// The bytes of the file `name` in `entry`, or `nil` when there is none.
    ///
    /// - Throws: `.notAFile` for anything but a regular file, `.system`
    ///   (`EFBIG` past ``CatalogFetcher/maximumSize``), `.symlinkInContainer`.
    public static func read(_ name: String, in entry: LayoutDirectory) throws(StoreError) -> [UInt8]? {
        let path = entry.path(of: name)
        let fd: FileDescriptor
        do { fd = try entry.openFile(name, [.readOnly, .nonBlocking]) } catch where error == .noSuchFile {
            return nil
        } catch {
            throw entry.storeError(opening: name, error)
        }
        let status: FileStatus
        do { status = try fd.status() } catch { throw .system(error.with(operation: "fstat", path: path)) }
        guard status.isRegularFile else { throw .notAFile(path) }
        guard status.size <= Int64(CatalogFetcher.maximumSize) else { throw .system(Errno(EFBIG, operation: "read", path: path)) }
        do { return try fd.read(count: CatalogFetcher.maximumSize, at: 0) } catch { throw .system(error.with(operation: "read", path: path)) }
    }

    /// Marks `entry` used now (its `url` file's modification time).
    public func touch(_ entry: LayoutDirectory) {
        guard let fd = try? entry.openFile("url", [.writeOnly, .nonBlocking]), (try? fd.status())?.isRegularFile == true else { return }
        try? fd.touchModificationTime()
    }

    /// Removes the entries ``Limits`` leaves no room for, never `kept` (an
    /// entry name). Entries that cannot be looked at or removed (a symlink,
    /// another user's) are left; verify reports symlinks.
    ///
    /// - Returns: the names of the entries removed.
    @discardableResult
    public func prune(keeping kept: String, now: Double = Date().timeIntervalSince1970) -> [String] {
        let catalog = store.catalogDirectory
        guard let anchor = catalog.openAnchor else { return [] }
        var entries: [(name: String, used: Double, bytes: Int64)] = []
        var keptBytes: Int64 = 0
        for name in catalog.names where Self.isEntryName(name) {
            guard let entry = try? catalog.subdirectory(name, creating: false), entry.openAnchor != nil else { continue }
            let (used, bytes) = Self.measure(entry)
            if name == kept { keptBytes = bytes } else { entries.append((name, used, bytes)) }
        }
        var count = 1
        var total = keptBytes
        var removed: [String] = []
        for e in entries.sorted(by: { $0.used > $1.used }) {
            if now - e.used <= limits.maximumAge, count < limits.maximumCatalogs, total + e.bytes <= limits.maximumBytes {
                count += 1
                total += e.bytes
                continue
            }
            guard let entry = try? catalog.subdirectory(e.name, creating: false) else { continue }
            // catalog.json first: a reader meanwhile finds no cache, not half of one.
            try? entry.unlink("catalog.json")
            for file in entry.names { try? entry.unlink(file) }
            if (try? FileSystem.removeDirectory(e.name, relativeTo: anchor)) != nil { removed.append(e.name) }
        }
        return removed
    }

    /// An entry's last use (its `url` file's modification time, else its
    /// directory's) and the bytes of the files in it.
    private static func measure(_ entry: LayoutDirectory) -> (used: Double, bytes: Int64) {
        var bytes: Int64 = 0
        for name in entry.names {
            if let status = entry.status(of: name), status.isRegularFile { bytes += status.size }
        }
        let stamp = (try? entry.openFile("url", [.path]))
        let used = (try? stamp?.modificationTime()) ?? (try? entry.withDescriptor { (fd) throws(Errno) in try fd.modificationTime() })
        return (used ?? 0, bytes)
    }
}
