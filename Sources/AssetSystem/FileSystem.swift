internal import CAssetShim
#if canImport(Glibc)
import Glibc
#endif

/// Name-level file system operations, relative to an anchor directory.
public enum FileSystem {
    /// Renames `source` (relative to `anchor`) to `destination` (relative to
    /// `destinationAnchor`, by default `anchor`). With `noReplace`, fails with
    /// `EEXIST` rather than replacing. A symlink is renamed itself, never
    /// followed. The corresponding C function is `renameat2`.
    public static func rename(
        _ source: String, to destination: String,
        relativeTo anchor: DirectoryAnchor = .workingDirectory, destinationRelativeTo destinationAnchor: DirectoryAnchor? = nil,
        noReplace: Bool = false
    ) throws(Errno) {
        let (dir, target) = (anchor.raw, (destinationAnchor ?? anchor).raw)
        _ = try valueOrErrno("rename", path: source) {
            cas_renameat2(dir, source, target, destination, noReplace ? CAS_RENAME_NOREPLACE : 0)
        }
    }

    /// Gives the file `source` (relative to `anchor`) a second name,
    /// `destination` (relative to `destinationAnchor`, by default `anchor`): a
    /// hard link. A symlink at `source` is linked itself, never followed.
    /// Fails with `EEXIST` when `destination` exists. The corresponding C
    /// function is `linkat`.
    public static func link(
        _ source: String, to destination: String,
        relativeTo anchor: DirectoryAnchor = .workingDirectory, destinationRelativeTo destinationAnchor: DirectoryAnchor? = nil
    ) throws(Errno) {
        let (dir, target) = (anchor.raw, (destinationAnchor ?? anchor).raw)
        _ = try valueOrErrno("link", path: destination) { cas_linkat(dir, source, target, destination) }
    }

    /// Creates the directory `path`, relative to `anchor`; an existing entry
    /// of any kind is fine (open it with `O_NOFOLLOW | O_DIRECTORY` to know
    /// what it is). Returns whether this call made it: a new directory is
    /// durable only once its parent is flushed (``syncDirectory(_:)``, or
    /// `sync()` of the parent's descriptor), which the caller does before
    /// anything that depends on it is acknowledged. The corresponding C
    /// function is `mkdirat`.
    @discardableResult
    public static func createDirectory(
        _ path: String, relativeTo anchor: DirectoryAnchor = .workingDirectory, permissions: UInt32 = 0o755
    ) throws(Errno) -> Bool {
        let dir = anchor.raw
        let r = cas_mkdirat(dir, path, mode_t(permissions))
        if r < 0 && -r != Errno.fileExists.rawValue { throw Errno(-r, operation: "mkdir", path: path) }
        return r == 0
    }

    /// Removes the file `path`. The corresponding C function is `unlinkat`.
    public static func unlink(_ path: String, relativeTo anchor: DirectoryAnchor = .workingDirectory) throws(Errno) {
        let dir = anchor.raw
        _ = try valueOrErrno("unlink", path: path) { cas_unlinkat(dir, path, 0) }
    }

    /// Gives `path` (not following a final symlink) the group `gid`, keeping
    /// its owner. The corresponding C function is `fchownat`.
    public static func changeGroup(of path: String, to gid: UInt32) throws(Errno) {
        _ = try valueOrErrno("chgrp", path: path) { cas_chgrp(path, gid) }
    }

    /// Removes the empty directory `path`.
    public static func removeDirectory(_ path: String, relativeTo anchor: DirectoryAnchor = .workingDirectory) throws(Errno) {
        let dir = anchor.raw
        _ = try valueOrErrno("rmdir", path: path) { cas_unlinkat(dir, path, 1) }
    }

    /// Creates the directory `path` and any missing parents, durably: each
    /// directory it makes is flushed into its parent (an `fsync` of the
    /// parent) before the next one is made and before it returns, so that a
    /// power loss cannot take back a directory the caller goes on to rely
    /// on. An existing directory is fine (one `mkdir` call finds it, and
    /// nothing is flushed); an existing non-directory is `ENOTDIR`.
    ///
    /// A directory made by a process killed before that flush is not
    /// flushed by a later call, which finds it there: a caller whose own
    /// acknowledgement depends on the whole chain flushes it itself (the
    /// store does so once, when it writes a new index's first record).
    public static func createDirectories(_ path: String, permissions: UInt32 = 0o755) throws(Errno) {
        let r = cas_mkdirat(AT_FDCWD, path, mode_t(permissions))
        if r == 0 {
            try syncDirectory(containing: path)
            return
        }
        switch -r {
        case Errno.fileExists.rawValue:
            guard let status = try FileDescriptor.status(of: path), status.isDirectory else {
                throw Errno(Errno.notDirectory.rawValue, operation: "mkdir", path: path)
            }
        case Errno.noSuchFile.rawValue:
            let parent = parentPath(of: path)
            guard parent != "/" && parent != "." && parent != trimmed(path) else { throw Errno(-r, operation: "mkdir", path: path) }
            try createDirectories(parent, permissions: permissions)
            let again = cas_mkdirat(AT_FDCWD, path, mode_t(permissions))
            if again < 0 && -again != Errno.fileExists.rawValue { throw Errno(-again, operation: "mkdir", path: path) }
            if again == 0 { try syncDirectory(containing: path) }
        default:
            throw Errno(-r, operation: "mkdir", path: path)
        }
    }

    /// Flushes the directory `path`'s entries to storage, so that renames and
    /// new names in it survive a power loss. The corresponding C function
    /// is `fsync`.
    public static func syncDirectory(_ path: String) throws(Errno) {
        let fd = try FileDescriptor.open(path, [.readOnly, .directory])
        do { try fd.sync() } catch { throw error.with(operation: "fsync", path: path) }
    }

    /// Flushes the directory that holds `path` (its entry for `path`: a
    /// file or directory made, renamed or unlinked there), as
    /// ``syncDirectory(_:)`` does. A relative `path` of one component is in
    /// the working directory.
    public static func syncDirectory(containing path: String) throws(Errno) {
        try syncDirectory(parentPath(of: path))
    }

    /// `path` without its last component (and trailing slashes): `/` for a
    /// component of the root, `.` for a relative one-component path.
    static func parentPath(of path: String) -> String {
        let path = trimmed(path)
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = trimmed(String(path[..<slash]))
        return parent.isEmpty ? "/" : parent
    }

    /// `path` without trailing slashes (`/` stays).
    private static func trimmed(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }

    /// The names in directory `path` (without `.` and `..`), unsorted; empty
    /// when it cannot be read. The corresponding C function is `readdir`.
    public static func names(in path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        return names(of: dir)
    }

    /// The names in the open directory `anchor` (without `.` and `..`),
    /// unsorted; empty when it cannot be read (``contents(of:path:)`` tells
    /// the reasons apart). Reads a new description of the
    /// directory, so the caller's descriptor is left as it was. The
    /// corresponding C functions are `openat` and `fdopendir`.
    public static func names(in anchor: DirectoryAnchor) -> [String] {
        let raw = anchor.raw
        guard let fd = try? valueOrErrno("open", { cas_openat(raw, ".", O_RDONLY | O_DIRECTORY, 0) }) else { return [] }
        guard let dir = fdopendir(fd) else {
            _ = cas_close(fd)
            return []
        }
        return names(of: dir)
    }

    /// The names in the open directory `anchor` (without `.` and `..`),
    /// unsorted. Reads a new description of the directory, so the caller's
    /// descriptor is left as it was.
    ///
    /// - Throws: `Errno` naming `path` (the directory's, for messages) for
    ///   every failure: `EMFILE`, `ENFILE` and `ENOMEM` when it cannot be
    ///   opened again, `EACCES`, `EIO` while it is read, … — so that a caller
    ///   never takes a directory it could not read for an empty one. The
    ///   corresponding C functions are `openat`, `fdopendir` and `readdir`.
    public static func contents(of anchor: DirectoryAnchor, path: String) throws(Errno) -> [String] {
        let raw = anchor.raw
        let fd = try valueOrErrno("open", path: path) { cas_openat(raw, ".", O_RDONLY | O_DIRECTORY, 0) }
        guard let dir = fdopendir(fd) else {
            let code = errno
            _ = cas_close(fd)
            throw Errno(code, operation: "fdopendir", path: path)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw Errno(errno, operation: "readdir", path: path) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    private static func names(of dir: OpaquePointer) -> [String] {
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
