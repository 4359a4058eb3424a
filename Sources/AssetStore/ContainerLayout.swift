import AssetSystem
import Synchronization
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
/// descriptor, and so are `downloads/`, `downloads/slots/` and `catalog/`
/// (AssetDelivery's status records, download slots and catalog cache, which
/// it reaches through ``AssetStore/downloadsDirectory`` and its siblings).
/// Each name opened is a single component relative to a descriptor, so
/// `O_NOFOLLOW` on it leaves no component to resolve and nothing for
/// `openat2`'s `RESOLVE_BENEATH` to add.
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
    /// `downloads/`: download locks, status and control records.
    let downloads: LayoutDirectory
    /// `downloads/slots/`: the discretionary downloads' slot locks.
    let downloadSlots: LayoutDirectory
    /// `catalog/`: one directory per catalog URL fetched.
    let catalog: LayoutDirectory
    /// Directories that were missing when the layout was opened and that
    /// another process made since, by name (``current(_:)``).
    private let found = Mutex<[String: LayoutDirectory]>([:])

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
        // Records anyone may read; slots only the writers take, like locks/.
        downloads = try Self.open("downloads", in: root, creating: creating, access: data)
        downloadSlots = try Self.open("slots", in: downloads, creating: creating, access: locked)
        catalog = try Self.open("catalog", in: root, creating: creating, access: data)
    }

    /// What a writer makes of a directory's permissions.
    enum Access {
        /// Exactly this mode.
        case exactly(UInt32)
        /// These bits besides the ones it has.
        case add(UInt32)
    }

    /// The directories below the container, as verify lists them.
    var directories: [LayoutDirectory] { [index, packs, staging, cache, locks, packLocks, downloads, downloadSlots, catalog] }

    /// `directory`, or, when it was missing as the layout was opened (a
    /// store that does not create the layout) and is there now, the
    /// directory opened now — without following a symlink, as at first.
    func current(_ directory: LayoutDirectory) -> LayoutDirectory {
        guard directory.isMissing, let parent = directory.parent else { return directory }
        if let known = found.withLock({ $0[directory.name] }) { return known }
        let now = current(parent)
        guard now.openAnchor != nil, let opened = try? Self.open(directory.leaf, in: now, creating: false, access: nil),
              !opened.isMissing else {
            return directory
        }
        return found.withLock { found in
            if let other = found[directory.name] { return other }
            found[directory.name] = opened
            return opened
        }
    }

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
    static func open(_ name: String, in parent: LayoutDirectory, creating: Bool, access: Access?) throws(StoreError) -> LayoutDirectory {
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
