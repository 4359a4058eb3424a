internal import CAssetShim
#if canImport(Glibc)
import Glibc
#endif

/// An open-file-description lock (`F_OFD_SETLK`) on a whole lock file, held
/// until this value goes out of scope.
///
/// OFD locks belong to the open file description, not the process: two
/// threads of one process that open the lock file separately exclude each
/// other, and the lock is released when the last descriptor of the
/// description closes — also when the process dies.
///
/// Anyone who can open a file can lock it: a reader, with a shared lock
/// (a read-only descriptor can take no other). So an exclusive lock is only
/// ever taken on a file that only trusted writers can open — lock files are
/// created mode 0600 (``defaultMode``), or 0660 in a container shared with
/// a group — and a file that other users may read is only ever locked
/// shared, which no reader's lock can hold up.
public struct FileLock: ~Copyable, Sendable {
    /// Shared (readers) or exclusive (writers).
    public enum Kind: Sendable { case shared, exclusive }

    /// How long to wait for a conflicting lock to go away. Every wait ends.
    public enum Wait: Sendable, Equatable {
        /// Fail at once when the lock is held.
        case none
        /// Try until `seconds` have passed, whoever holds the lock.
        case seconds(Double)
        /// Wait for as long as a holder of the lock is a process of this
        /// user that is not stopped — one at work, which lets go when it is
        /// done, or the kernel does when it dies — and at most `patience`
        /// seconds while none is: a holder of another user, a stopped one,
        /// one this process cannot see (``LockHolder``). Holders are looked
        /// at every second at first, then less often (every 5 s at most,
        /// and at least twice a patience).
        case whileHolderWorks(patience: Double)

        /// The default: ``whileHolderWorks(patience:)`` with 10 s.
        public static let standard = Wait.whileHolderWorks(patience: 10)
    }

    /// The mode lock files are created with, and set to when this process
    /// owns one that has another: only the owner can open them.
    public static let defaultMode: UInt32 = 0o600

    private let descriptor: FileDescriptor
    /// The lock file's path, for messages.
    public let path: String

    /// Opens (creating if needed) the lock file at `path` and takes the lock.
    /// A symlink at `path` is refused, never followed (`O_NOFOLLOW`): a lock
    /// file is never created where a link points. The file is created with
    /// `mode`, and an existing one this process owns is set to it
    /// (``FileDescriptor/setPermissionsIfOwned(_:)``).
    ///
    /// - Throws: ``LockError/timedOut(_:)`` when the wait ends first (at
    ///   once with `.none`), naming the holder; ``LockError/system(_:)``
    ///   naming `path` for `.tooManySymbolicLinkLevels` (a symlink) and every
    ///   other error of `open`/`fcntl`.
    ///   The corresponding C function is `fcntl` with `F_OFD_SETLK`.
    public init(path: String, kind: Kind = .exclusive, wait: Wait = .standard, mode: UInt32 = FileLock.defaultMode) throws(LockError) {
        try self.init(name: path, relativeTo: .workingDirectory, path: path, kind: kind, wait: wait, mode: mode)
    }

    /// Opens (creating if needed) the lock file `name` in the open directory
    /// `anchor`, with `O_NOFOLLOW`, and takes the lock. `path` names the file
    /// in errors and in ``path``.
    ///
    /// - Throws: as ``init(path:kind:wait:mode:)``.
    public init(name: String, relativeTo anchor: DirectoryAnchor, path: String, kind: Kind = .exclusive, wait: Wait = .standard,
                mode: UInt32 = FileLock.defaultMode) throws(LockError) {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(name, [.readWrite, .create, .noFollow], permissions: mode, relativeTo: anchor)
        } catch {
            throw .system(error.with(operation: error.operation, path: path))
        }
        // Best effort: a file that cannot be changed (a read-only file
        // system) still locks.
        _ = try? fd.setPermissionsIfOwned(mode)
        try FileLock.acquire(fd.rawValue, kind: kind, wait: wait, path: path)
        self.descriptor = fd
        self.path = path
    }

    /// Takes a lock on the open file `descriptor`, waiting as `wait` says.
    /// The lock lasts until every descriptor of that open file description
    /// is closed.
    ///
    /// - Throws: as ``init(path:kind:wait:mode:)``.
    public static func lock(_ descriptor: borrowing FileDescriptor, kind: Kind = .exclusive, wait: Wait, path: String) throws(LockError) {
        try acquire(descriptor.rawValue, kind: kind, wait: wait, path: path)
    }

    private static func acquire(_ fd: Int32, kind: Kind, wait: Wait, path: String) throws(LockError) {
        let type: Int32 = kind == .shared ? CAS_LOCK_SHARED : CAS_LOCK_EXCLUSIVE
        func taken() throws(LockError) -> Bool {
            let r = cas_ofd_lock(fd, type, 0)
            if r >= 0 { return true }
            guard -r == Errno.wouldBlock.rawValue || -r == Errno.interrupted.rawValue else {
                throw .system(Errno(-r, operation: "lock", path: path))
            }
            return false
        }
        if try taken() { return }
        let start = Monotonic.now
        var deadline = start
        var patience: Double?
        switch wait {
        case .none: throw .timedOut(LockTimeout(path: path, seconds: 0, holder: .unknown))
        case .seconds(let limit): deadline = start + max(0, limit)
        case .whileHolderWorks(let p):
            patience = max(0, p)
            deadline = start + max(0, p)
        }
        var look = start + min(1, (patience ?? 0) / 2)
        var pause = 0.000_1
        while true {
            let now = Monotonic.now
            if let patience, now >= look {
                if LockHolder.find(fd, conflictingWith: kind).isWorking { deadline = max(deadline, now + patience) }
                look = now + min(5, 1 + (now - start) / 10, patience / 2)
            }
            if now >= deadline {
                let holder = LockHolder.find(fd, conflictingWith: kind)
                // Let go of just now: one more try before giving up.
                if holder == .unknown, try taken() { return }
                let waited: Double
                if case .seconds(let limit) = wait { waited = max(0, limit) } else { waited = ((now - start) * 10).rounded() / 10 }
                throw .timedOut(LockTimeout(path: path, seconds: waited, holder: holder))
            }
            Monotonic.sleep(min(pause, deadline - now, patience == nil ? .infinity : max(0, look - now)))
            pause = min(pause * 2, 0.01)
            if try taken() { return }
        }
    }

    /// Who holds a lock on the open file `descriptor` that conflicts with a
    /// lock of `kind` (``LockHolder/unknown`` when nobody does).
    /// The corresponding C function is `fcntl` with `F_OFD_GETLK`.
    public static func holder(of descriptor: borrowing FileDescriptor, conflictingWith kind: Kind = .exclusive) -> LockHolder {
        LockHolder.find(descriptor.rawValue, conflictingWith: kind)
    }

    /// Releases the lock this open file description holds on the file, if
    /// any. The corresponding C function is `fcntl` with `F_OFD_SETLK` and
    /// `F_UNLCK`.
    public static func unlock(_ descriptor: borrowing FileDescriptor) {
        _ = cas_ofd_lock(descriptor.rawValue, CAS_LOCK_UNLOCK, 0)
    }

    /// Takes an exclusive lock on the open file `descriptor` without waiting.
    /// The lock lasts until every descriptor of that open file description
    /// is closed. Returns `false` when another description holds a
    /// conflicting lock. The corresponding C function is `fcntl` with `F_OFD_SETLK`.
    public static func tryLock(_ descriptor: borrowing FileDescriptor) throws(Errno) -> Bool {
        let fd = descriptor.rawValue
        let r = cas_ofd_lock(fd, CAS_LOCK_EXCLUSIVE, 0)
        if r >= 0 { return true }
        if -r == Errno.wouldBlock.rawValue || -r == Errno.permissionDenied.rawValue { return false }
        throw Errno(-r, operation: "lock")
    }

    /// The lock file's identity, to check that the path still names it.
    public func status() throws(Errno) -> FileStatus { try descriptor.status() }

    /// Whether another open file description holds a lock on `path` that
    /// conflicts with an exclusive lock. `false` when the file does not exist.
    /// The corresponding C function is `fcntl` with `F_OFD_GETLK`.
    /// A symlink at `path` is not followed: it fails with
    /// `.tooManySymbolicLinkLevels`.
    public static func isHeld(path: String, relativeTo anchor: DirectoryAnchor = .workingDirectory) throws(Errno) -> Bool {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(path, [.readWrite, .noFollow], relativeTo: anchor) } catch where error == .noSuchFile { return false }
        let raw = fd.rawValue
        return try valueOrErrno("lock probe", path: path) { cas_ofd_probe(raw) } == 1
    }
}

/// Monotonic time in seconds, for deadlines and measurements.
public enum Monotonic {
    /// Seconds since an arbitrary fixed point (`CLOCK_MONOTONIC`).
    public static var now: Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Nanoseconds since an arbitrary fixed point (`CLOCK_MONOTONIC`).
    public static var nanoseconds: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Sleeps the calling thread for `seconds`.
    public static func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
