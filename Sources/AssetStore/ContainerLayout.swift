import AssetSystem
#if canImport(Glibc)
import Glibc
#endif

/// The container's directories, each opened once and held open, so that
/// every file of the container is opened by one name relative to its
/// directory's descriptor, with `O_NOFOLLOW`: no symlink inside the
/// container is ever followed.
///
/// The container directory itself is opened by its path, following
/// symlinks: the path is the caller's choice (`--container`, `$HOME` that is
/// itself a link), trusted as far as the caller trusts it. Below it,
/// `index/`, `packs/`, `staging/`, `cache/`, `locks/` and `locks/packs/` are
/// opened with `O_DIRECTORY | O_NOFOLLOW` relative to their parent's
/// descriptor. Each name opened is a single component relative to a
/// descriptor, so `O_NOFOLLOW` on it leaves no component to resolve and
/// nothing for `openat2`'s `RESOLVE_BENEATH` to add.
///
/// A writer's store (one that creates the layout) refuses a symlink where a
/// directory belongs with ``StoreError/symlinkInContainer(path:)``; a
/// read-only store (verify, `ls`) opens anyway and refuses only the
/// operations that need that directory, so that verify can report it. A
/// symlinked `index/` is refused by both: LMDB opens it by path.
final class ContainerLayout: Sendable {
    let container: GroupContainer
    /// The container directory (reached through the caller's path).
    let root: LayoutDirectory
    let index: LayoutDirectory
    let packs: LayoutDirectory
    let staging: LayoutDirectory
    let cache: LayoutDirectory
    let locks: LayoutDirectory
    let packLocks: LayoutDirectory
    /// Whether the container is shared with a group: its directory has the
    /// set-group-ID bit (`chmod g+s`), so that what is made in it takes the
    /// directory's group.
    let isGroupShared: Bool
    /// The mode of the container's lock files (and of the index's
    /// `lock.mdb` and `map.lock`): 0660 in a container shared with a group,
    /// else 0600 — only the writers of the container can open them, so no
    /// reader can hold a lock a writer waits for.
    var lockFileMode: UInt32 { isGroupShared ? 0o660 : 0o600 }

    /// Opens the layout of `container`. With `creating`, makes what is
    /// missing (`mkdirat` relative to the parent), durably: each directory
    /// made is flushed into its parent before it is used (the container's
    /// own missing ancestors too, by `FileSystem.createDirectories`); and
    /// refuses a symlinked directory.
    ///
    /// - Throws: `.noContainer` when the container directory is missing and
    ///   `creating` is false, `.symlinkInContainer`, `.system`.
    init(_ container: GroupContainer, creating: Bool) throws(StoreError) {
        self.container = container
        let rootDescriptor: FileDescriptor
        do {
            if creating { try FileSystem.createDirectories(container.path) }
            rootDescriptor = try FileDescriptor.open(container.path, [.readOnly, .directory])
        } catch where error == .noSuchFile && !creating {
            throw .noContainer(path: container.path, missing: container.indexPath)
        } catch {
            throw .system(error)
        }
        do { isGroupShared = try rootDescriptor.status().mode & UInt32(S_ISGID) != 0 } catch {
            throw .system(error.with(operation: "fstat", path: container.path))
        }
        root = LayoutDirectory(name: "", path: container.path, parent: nil, state: .open(rootDescriptor))
        // In a group's container the group writes too: a writer gives the
        // directories it makes (or finds, of its own) group write, besides
        // the set-group-ID bit they inherit.
        let data: Access? = isGroupShared ? .add(0o2070) : nil
        index = try Self.open("index", in: root, creating: creating, access: data)
        packs = try Self.open("packs", in: root, creating: creating, access: data)
        staging = try Self.open("staging", in: root, creating: creating, access: data)
        cache = try Self.open("cache", in: root, creating: creating, access: data)
        // Only the container's writers may open its lock files: a writer
        // sets the lock directories' mode (narrowing those of containers
        // made before), so that no one else can open even a lock file that
        // a former version made 0644. Mode 2770 in a group's container.
        let locked = Access.exactly(isGroupShared ? 0o2770 : 0o700)
        locks = try Self.open("locks", in: root, creating: creating, access: locked)
        packLocks = try Self.open("packs", in: locks, creating: creating, access: locked)
    }

    /// What a writer makes of a directory's permissions.
    private enum Access {
        /// Exactly this mode.
        case exactly(UInt32)
        /// These bits besides the ones it has.
        case add(UInt32)
    }

    /// The directories below the container, as verify lists them.
    var directories: [LayoutDirectory] { [index, packs, staging, cache, locks, packLocks] }

    /// Flushes the layout into place as a whole: the directory that holds
    /// the container, every directory of the layout that holds another, and
    /// `index/` (LMDB's files). Called once per container, before a new
    /// index's first record (the schema version) is committed: a container
    /// whose index has that record then survives a power loss whole, also
    /// when the process that made some of its directories was killed before
    /// flushing them (a later `open` finds them there and flushes nothing).
    ///
    /// - Throws: `.system` naming the directory that could not be flushed,
    ///   `.symlinkInContainer`.
    func syncWhole() throws(StoreError) {
        do { try FileSystem.syncDirectory(containing: container.path) } catch { throw .system(error) }
        var holders: [LayoutDirectory] = [root]
        for directory in directories {
            if let parent = directory.parent, !holders.contains(where: { $0 === parent }) { holders.append(parent) }
        }
        // A directory that is not open (a symlink verify reports, in a
        // store that did not create the layout) has nothing of ours to flush.
        for directory in holders + [index] where directory.openAnchor != nil { try directory.sync() }
    }

    /// Opens `name` in `parent` as a directory, without following a symlink.
    /// With `creating`, makes it when it is missing and then flushes
    /// `parent`, so that the new directory survives a power loss before
    /// anything is put in it, and gives it the `access` asked for when this
    /// process owns it (best effort: the lock files' own mode still holds).
    private static func open(_ name: String, in parent: LayoutDirectory, creating: Bool, access: Access?) throws(StoreError) -> LayoutDirectory {
        let relative = parent.name.isEmpty ? name : parent.name + "/" + name
        let path = parent.path + "/" + name
        guard let anchor = parent.openAnchor else {
            // Below a symlinked or missing directory: the same.
            return LayoutDirectory(name: relative, path: path, parent: parent, state: parent.isSymlink ? .symlink : .missing)
        }
        var made = false
        let directory: LayoutDirectory
        do {
            var mode: UInt32 = 0o755
            if case .exactly(let exact) = access { mode = exact & 0o777 }
            if creating { made = try FileSystem.createDirectory(name, relativeTo: anchor, permissions: mode) }
            let fd = try FileDescriptor.open(name, [.readOnly, .directory, .noFollow], relativeTo: anchor)
            switch access {
            case .exactly(let exact) where creating: _ = try? fd.setPermissionsIfOwned(exact)
            case .add(let bits) where creating: _ = try? fd.addPermissionsIfOwned(bits)
            default: break
            }
            directory = LayoutDirectory(name: relative, path: path, parent: parent, state: .open(fd))
        } catch where error == .noSuchFile && !creating {
            return LayoutDirectory(name: relative, path: path, parent: parent, state: .missing)
        } catch {
            guard parent.status(of: name)?.isSymbolicLink == true else {
                throw .system(error.with(operation: error.operation, path: path))
            }
            if creating { throw .symlinkInContainer(path: path) }
            return LayoutDirectory(name: relative, path: path, parent: parent, state: .symlink)
        }
        if made { try parent.sync() }
        return directory
    }
}

/// One directory of the container's layout and what opening it found.
final class LayoutDirectory: Sendable {
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
    let name: String
    /// The absolute path, for messages.
    let path: String
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
    var openAnchor: DirectoryAnchor? {
        switch state {
        case .open(let fd): return .descriptor(fd.rawValue)
        case .symlink: return nil
        case .missing: return nil
        }
    }

    var isSymlink: Bool {
        switch state {
        case .symlink: return true
        case .open: return false
        case .missing: return false
        }
    }

    /// The descriptor to open names relative to.
    ///
    /// - Throws: `.symlinkInContainer` for a symlinked directory,
    ///   `.system(ENOENT)` for a missing one.
    func anchor() throws(StoreError) -> DirectoryAnchor {
        switch state {
        case .open(let fd): return .descriptor(fd.rawValue)
        case .symlink: throw .symlinkInContainer(path: path)
        case .missing: throw .system(Errno.noSuchFile.with(operation: "open", path: path))
        }
    }

    /// The absolute path of `name` in this directory, for messages.
    func path(of name: String) -> String { path + "/" + name }

    /// Opens the file `name` in this directory with `O_NOFOLLOW`. Returns
    /// `nil` when nothing has that name.
    ///
    /// - Throws: `.symlinkInContainer` naming the file when it is a symlink
    ///   (or the directory is), `.system` naming it for other failures.
    func open(_ name: String, _ options: OpenOptions = .readOnly, permissions: UInt32 = 0o644) throws(StoreError) -> FileDescriptor? {
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
    func openFile(_ name: String, _ options: OpenOptions = .readOnly) throws(Errno) -> FileDescriptor {
        switch state {
        case .open(let fd):
            do {
                return try FileDescriptor.open(name, options.union(.noFollow), relativeTo: .descriptor(fd.rawValue))
            } catch {
                throw error.with(operation: error.operation, path: path(of: name))
            }
        case .symlink: throw Errno.tooManySymbolicLinkLevels.with(operation: "open", path: path)
        case .missing: throw Errno.noSuchFile.with(operation: "open", path: path)
        }
    }

    /// The type, size and identity of `name` here, not following a symlink;
    /// `nil` when nothing has that name or the directory is not open.
    func status(of name: String) -> FileStatus? {
        guard let anchor = openAnchor else { return nil }
        return (try? FileDescriptor.status(of: name, relativeTo: anchor, followingLinks: false)) ?? nil
    }

    /// The names in this directory, unsorted; empty when it is not open.
    var names: [String] {
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
    func listing() throws(StoreError) -> [String] {
        guard let anchor = openAnchor else { return [] }
        do { return try FileSystem.contents(of: anchor, path: path) } catch { throw .system(error) }
    }

    /// The type, size and identity of `name` here, not following a symlink;
    /// `nil` only when nothing has that name (`ENOENT`), which is also the
    /// answer when this directory is missing or a refused symlink.
    ///
    /// - Throws: `.system` naming the file for every other failure.
    func linkStatus(of name: String) throws(StoreError) -> FileStatus? {
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
    func unlink(_ name: String) throws(Errno) {
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

    /// Flushes the directory's entries to storage.
    func sync() throws(StoreError) {
        switch state {
        case .open(let fd):
            do { try fd.sync() } catch { throw .system(error.with(operation: "fsync", path: path)) }
        case .symlink: throw .symlinkInContainer(path: path)
        case .missing: throw .system(Errno.noSuchFile.with(operation: "fsync", path: path))
        }
    }

    /// `ELOOP` from an `O_NOFOLLOW` open is a symlink at `path`.
    static func storeError(_ error: Errno, path: String) -> StoreError {
        if error == .tooManySymbolicLinkLevels { return .symlinkInContainer(path: path) }
        return .system(error.with(operation: error.operation, path: path))
    }
}
