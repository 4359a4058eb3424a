public import AssetSystem
#if canImport(Glibc)
import Glibc
#endif

/// One directory of the container's layout and what opening it found.
///
/// Public for AssetDelivery, which keeps its records, slots and catalog
/// cache in the directories the layout opens (``AssetStore/downloadsDirectory``).
public final class LayoutDirectory: Sendable {
    enum State: ~Copyable, Sendable {
        /// Opened without following a symlink: names are opened relative to it.
        case open(FileDescriptor)
        /// A symlink is where the directory belongs; nothing is opened through it.
        case symlink
        /// Nothing is there (a store that does not create the layout).
        case missing
    }

    /// The path relative to the container (`packs`, `locks/packs`); empty for
    /// the container itself.
    public let name: String
    /// The absolute path, for messages.
    public let path: String
    /// The directory this one is in; `nil` for the container.
    let parent: LayoutDirectory?
    let state: State

    init(name: String, path: String, parent: LayoutDirectory?, state: consuming State) {
        self.name = name
        self.path = path
        self.parent = parent
        self.state = state
    }

    /// The last component of ``name``.
    var leaf: String { String(name.split(separator: "/").last ?? "") }

    /// Whether a symlink is now where this directory belongs (asked of its
    /// parent afresh, so a repair that replaced the link is seen).
    var isSymlinkNow: Bool { parent?.status(of: leaf)?.isSymbolicLink == true }

    /// The descriptor to open names relative to, or `nil` when the
    /// directory is a symlink or missing.
    public var openAnchor: DirectoryAnchor? {
        switch state {
        case .open(let fd): return .descriptor(fd.rawValue)
        case .symlink: return nil
        case .missing: return nil
        }
    }

    /// Whether a symlink was where the directory belongs when it was opened.
    public var isSymlink: Bool {
        switch state {
        case .symlink: return true
        case .open: return false
        case .missing: return false
        }
    }

    /// Whether nothing was there when it was opened.
    public var isMissing: Bool {
        switch state {
        case .missing: return true
        case .open: return false
        case .symlink: return false
        }
    }

    /// The descriptor to open names relative to.
    ///
    /// - Throws: `.symlinkInContainer` for a symlinked directory,
    ///   `.system(ENOENT)` for a missing one.
    public func anchor() throws(StoreError) -> DirectoryAnchor {
        switch state {
        case .open(let fd): return .descriptor(fd.rawValue)
        case .symlink: throw .symlinkInContainer(path: path)
        case .missing: throw .system(Errno.noSuchFile.with(operation: "open", path: path))
        }
    }

    /// The absolute path of `name` in this directory, for messages.
    public func path(of name: String) -> String { path + "/" + name }

    /// Opens the file `name` in this directory with `O_NOFOLLOW`. Returns
    /// `nil` when nothing has that name.
    ///
    /// - Throws: `.symlinkInContainer` naming the file when it is a symlink
    ///   (or the directory is), `.system` naming it for other failures.
    public func open(_ name: String, _ options: OpenOptions = .readOnly, permissions: UInt32 = 0o644) throws(StoreError) -> FileDescriptor? {
        let anchor = try anchor()
        do {
            return try FileDescriptor.open(name, options.union(.noFollow), permissions: permissions, relativeTo: anchor)
        } catch where error == .noSuchFile {
            return nil
        } catch {
            throw Self.storeError(error, path: path(of: name))
        }
    }

    /// Opens the file `name` in this directory with `O_NOFOLLOW`, reporting
    /// every failure as the `Errno` it is: `ELOOP` for a symlink (the file,
    /// or this directory), `ENOENT` when nothing has that name.
    public func openFile(_ name: String, _ options: OpenOptions = .readOnly, permissions: UInt32 = 0o644) throws(Errno) -> FileDescriptor {
        switch state {
        case .open(let fd):
            do {
                return try FileDescriptor.open(name, options.union(.noFollow), permissions: permissions, relativeTo: .descriptor(fd.rawValue))
            } catch {
                throw error.with(operation: error.operation, path: path(of: name))
            }
        case .symlink: throw Errno.tooManySymbolicLinkLevels.with(operation: "open", path: path)
        case .missing: throw Errno.noSuchFile.with(operation: "open", path: path)
        }
    }

    /// Opens the lock file `name` here for reading and writing, making it
    /// with `mode` when missing (and setting an existing one this process
    /// owns to it), without following a symlink and without waiting
    /// (`O_NONBLOCK`: a FIFO planted there opens at once), and only when it
    /// is a regular file; the caller locks it.
    ///
    /// - Throws: `.notAFile` naming it when it is not a regular file (a FIFO,
    ///   a directory); `.symlinkInContainer` (it, or this directory);
    ///   `.system` naming it.
    public func openLockFile(_ name: String, mode: UInt32) throws(StoreError) -> FileDescriptor {
        let fd: FileDescriptor
        do { fd = try openFile(name, [.readWrite, .create, .nonBlocking], permissions: mode) } catch { throw storeError(opening: name, error) }
        let isRegular: Bool
        do { isRegular = try fd.status().isRegularFile } catch { throw .system(error.with(operation: "fstat", path: path(of: name))) }
        guard isRegular else { throw .notAFile(path(of: name)) }
        // Best effort, as FileLock does: a file that cannot be changed still locks.
        _ = try? fd.setPermissionsIfOwned(mode)
        return fd
    }

    /// The type, size and identity of `name` here, not following a symlink;
    /// `nil` when nothing has that name or the directory is not open.
    public func status(of name: String) -> FileStatus? {
        guard let anchor = openAnchor else { return nil }
        return (try? FileDescriptor.status(of: name, relativeTo: anchor, followingLinks: false)) ?? nil
    }

    /// The names in this directory, unsorted; empty when it is not open.
    public var names: [String] {
        guard let anchor = openAnchor else { return [] }
        return FileSystem.names(in: anchor)
    }

    // What verify, repair and reclaim look at, failing rather than guessing:
    // a directory that cannot be read is not an empty one, a name that
    // cannot be looked at is not a missing one. Only `ENOENT` means absent.

    /// The names in this directory, unsorted; none when the directory itself
    /// is missing or is a symlink the layout refused to open (verify reports
    /// that link as `layout.symlink`).
    ///
    /// - Throws: `.system` naming the directory for every failure to read it
    ///   (`EMFILE`, `ENFILE`, `ENOMEM`, `EACCES`, `EIO`, …).
    public func listing() throws(StoreError) -> [String] {
        guard let anchor = openAnchor else { return [] }
        do { return try FileSystem.contents(of: anchor, path: path) } catch { throw .system(error) }
    }

    /// The type, size and identity of `name` here, not following a symlink;
    /// `nil` only when nothing has that name (`ENOENT`), which is also the
    /// answer when this directory is missing or a refused symlink.
    ///
    /// - Throws: `.system` naming the file for every other failure.
    public func linkStatus(of name: String) throws(StoreError) -> FileStatus? {
        guard let anchor = openAnchor else { return nil }
        do { return try FileDescriptor.status(of: name, relativeTo: anchor, followingLinks: false) } catch {
            throw .system(error.with(operation: error.operation, path: path(of: name)))
        }
    }

    /// Whether another process holds the lock file `name` here (an OFD lock
    /// probe); `false` when nothing has that name (or this directory is
    /// missing).
    ///
    /// - Throws: `.symlinkInContainer` naming it when it is a symlink (or
    ///   naming this directory when that is one), `.system` naming it for
    ///   every other failure.
    func isHeld(_ name: String) throws(StoreError) -> Bool {
        guard let anchor = openAnchor else {
            if isSymlink { throw .symlinkInContainer(path: path) }
            return false
        }
        do { return try FileLock.isHeld(path: name, relativeTo: anchor) } catch {
            throw Self.storeError(error, path: path(of: name))
        }
    }

    /// Removes the name `name` here (a symlink itself, never its target).
    public func unlink(_ name: String) throws(Errno) {
        guard let anchor = openAnchor else { throw Errno.noSuchFile.with(operation: "unlink", path: path(of: name)) }
        do { try FileSystem.unlink(name, relativeTo: anchor) } catch { throw error.with(operation: error.operation, path: path(of: name)) }
    }

    /// The directory's own type and identity.
    func status() throws(StoreError) -> FileStatus {
        switch state {
        case .open(let fd):
            do { return try fd.status() } catch { throw .system(error.with(operation: "fstat", path: path)) }
        case .symlink: throw .symlinkInContainer(path: path)
        case .missing: throw .system(Errno.noSuchFile.with(operation: "fstat", path: path))
        }
    }

    /// Runs `body` with the directory's descriptor.
    ///
    /// - Throws: `.symlinkInContainer` for a symlinked directory,
    ///   `.system(ENOENT)` for a missing one, and what `body` throws, as `.system`.
    public func withDescriptor<R>(_ body: (borrowing FileDescriptor) throws(Errno) -> R) throws(StoreError) -> R {
        switch state {
        case .open(let fd):
            do { return try body(fd) } catch { throw .system(error) }
        case .symlink: throw .symlinkInContainer(path: path)
        case .missing: throw .system(Errno.noSuchFile.with(operation: "open", path: path))
        }
    }

    /// The directory's owner (user and group).
    ///
    /// - Throws: `.symlinkInContainer` for a symlinked directory, `.system`.
    public func owner() throws(StoreError) -> (uid: UInt32, gid: UInt32) {
        switch state {
        case .open(let fd):
            do { return try fd.owner() } catch { throw .system(error.with(operation: "fstat", path: path)) }
        case .symlink: throw .symlinkInContainer(path: path)
        case .missing: throw .system(Errno.noSuchFile.with(operation: "fstat", path: path))
        }
    }

    /// The directory `name` in this one, opened as the layout's own are
    /// (`O_DIRECTORY | O_NOFOLLOW` relative to this descriptor) and, with
    /// `creating`, made when missing — with group write, as the layout's
    /// data directories, when this one has the set-group-ID bit (a group's
    /// container): `catalog/<hash>/`.
    ///
    /// - Throws: `.symlinkInContainer` naming it when it is a symlink (or
    ///   this directory is), `.system` naming it for every other failure;
    ///   without `creating`, a missing one is returned as missing.
    public func subdirectory(_ name: String, creating: Bool) throws(StoreError) -> LayoutDirectory {
        let shared = creating && ((try? status())?.mode ?? 0) & UInt32(S_ISGID) != 0
        let directory = try ContainerLayout.open(name, in: self, creating: creating, access: shared ? .add(0o2070) : nil)
        if directory.isSymlink { throw .symlinkInContainer(path: directory.path) }
        if creating, directory.isMissing { _ = try anchor() }
        return directory
    }

    /// Flushes the directory's entries to storage.
    public func sync() throws(StoreError) {
        switch state {
        case .open(let fd):
            do { try fd.sync() } catch { throw .system(error.with(operation: "fsync", path: path)) }
        case .symlink: throw .symlinkInContainer(path: path)
        case .missing: throw .system(Errno.noSuchFile.with(operation: "fsync", path: path))
        }
    }

    /// The error of opening `name` here (``openFile(_:_:permissions:)``):
    /// `ELOOP` is a symlink — this directory when it is one, else the file —
    /// and anything else is `.system` naming the file.
    public func storeError(opening name: String, _ error: Errno) -> StoreError {
        if error == .tooManySymbolicLinkLevels { return .symlinkInContainer(path: isSymlink ? path : path(of: name)) }
        return .system(error.with(operation: error.operation, path: path(of: name)))
    }

    /// `ELOOP` from an `O_NOFOLLOW` open is a symlink at `path`.
    public static func storeError(_ error: Errno, path: String) -> StoreError {
        if error == .tooManySymbolicLinkLevels { return .symlinkInContainer(path: path) }
        return .system(error.with(operation: error.operation, path: path))
    }
}
