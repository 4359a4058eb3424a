import AssetSystem

extension AssetStore {
    /// Takes the exclusive lock of pack `id`.
    ///
    /// Lock files may be removed (with their pack) while another process
    /// waits on them, so after the lock is granted the file must still be the
    /// one at the lock path; if not, the lock is taken again on the new file.
    func lockPack(_ id: String) throws(StoreError) -> FileLock {
        try Self.lock(path: container.lockPath(forPack: id), kind: .exclusive, wait: lockWait)
    }

    /// Takes the container lock: shared by installs and removals, exclusive
    /// for container-wide work (garbage collection, repair).
    func lockContainer(_ kind: FileLock.Kind, wait: FileLock.Wait? = nil) throws(StoreError) -> FileLock {
        try Self.lock(path: container.containerLockPath, kind: kind, wait: wait ?? lockWait)
    }

    /// Takes the lock file at `path`, waiting as `wait` says, and checks that
    /// the path still names the file locked.
    ///
    /// - Throws: `.lockTimeout` when `wait` runs out (or is `.none` and the
    ///   lock is held), `.system` for other failures.
    static func lock(path: String, kind: FileLock.Kind, wait: FileLock.Wait) throws(StoreError) -> FileLock {
        while true {
            let lock: FileLock
            do {
                lock = try FileLock(path: path, kind: kind, wait: wait)
            } catch where error == .timedOut || error == .wouldBlock {
                var seconds = 0.0
                if case .seconds(let s) = wait { seconds = s }
                throw .lockTimeout(path: path, seconds: seconds)
            } catch {
                throw .system(error)
            }
            do {
                let held = try lock.status()
                if let now = try FileDescriptor.status(of: path), now.inode == held.inode, now.device == held.device {
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
        try? FileSystem.unlink(container.lockPath(forPack: id))
    }
}
