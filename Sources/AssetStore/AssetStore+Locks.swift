import AssetSystem

extension AssetStore {
    /// Takes the exclusive lock of pack `id`, `locks/packs/<id>.lock`.
    ///
    /// Lock files may be removed (with their pack) while another process
    /// waits on them, so after the lock is granted the file must still be the
    /// one at the lock path; if not, the lock is taken again on the new file.
    func lockPack(_ id: String) throws(StoreError) -> FileLock {
        try Self.lock(id + ".lock", in: layout.packLocks, kind: .exclusive, wait: lockWait, mode: layout.lockFileMode,
                      what: "the pack lock of '\(id)'")
    }

    /// Takes the container lock: shared by installs and removals, exclusive
    /// for container-wide work (garbage collection, repair).
    func lockContainer(_ kind: FileLock.Kind, wait: FileLock.Wait? = nil) throws(StoreError) -> FileLock {
        try Self.lock("container.lock", in: layout.locks, kind: kind, wait: wait ?? lockWait, mode: layout.lockFileMode,
                      what: "the container lock")
    }

    /// The container lock, exclusive, for `verify --repair`; `nil` when
    /// `locks/` is a symlink. Then no writer can take the container lock
    /// either (it is refused as ``StoreError/symlinkInContainer(path:)``), so
    /// none runs, and repair can move the link aside.
    func lockContainerForRepair() throws(StoreError) -> FileLock? {
        if layout.locks.isSymlink { return nil }
        return try lockContainer(.exclusive)
    }

    /// Takes the lock file `name` in `directory` (created if missing with
    /// `mode`, with `O_NOFOLLOW`, relative to the directory's descriptor),
    /// waiting as `wait` says, and checks that the name still leads to the
    /// file locked. `what` names the lock in a timeout.
    ///
    /// - Throws: `.symlinkInContainer` when the lock file or its directory is
    ///   a symlink (nothing is created where it points), `.lockTimeout` when
    ///   `wait` runs out (or is `.none` and the lock is held), naming the
    ///   lock and its holder, `.system` for other failures.
    static func lock(_ name: String, in directory: LayoutDirectory, kind: FileLock.Kind, wait: FileLock.Wait, mode: UInt32,
                     what: String) throws(StoreError) -> FileLock {
        let anchor = try directory.anchor()
        let path = directory.path(of: name)
        while true {
            let lock: FileLock
            do {
                lock = try FileLock(name: name, relativeTo: anchor, path: path, kind: kind, wait: wait, mode: mode)
            } catch {
                throw .fromLock(error, what: what, path: path)
            }
            do {
                let held = try lock.status()
                if let now = try FileDescriptor.status(of: name, relativeTo: anchor, followingLinks: false),
                   now.inode == held.inode, now.device == held.device {
                    return lock
                }
            } catch {
                throw .system(error)
            }
        }
    }

    /// Removes pack `id`'s lock file while holding its lock (waiters notice
    /// and retry on a new file).
    func removeLockFile(of id: String) {
        try? layout.packLocks.unlink(id + ".lock")
    }
}
