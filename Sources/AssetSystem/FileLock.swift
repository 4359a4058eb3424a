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
public struct FileLock: ~Copyable, Sendable {
    /// Shared (readers) or exclusive (writers).
    public enum Kind: Sendable { case shared, exclusive }

    /// How long to wait for a conflicting lock to go away.
    public enum Wait: Sendable, Equatable {
        /// Fail at once with `EAGAIN` (`wouldBlock`).
        case none
        /// Block until granted (`F_OFD_SETLKW`).
        case forever
        /// Try until the deadline, then fail with `ETIMEDOUT` (`timedOut`).
        case seconds(Double)
    }

    private let descriptor: FileDescriptor
    /// The lock file's path, for messages.
    public let path: String

    /// Opens (creating if needed) the lock file at `path` and takes the lock.
    /// A symlink at `path` is refused, never followed (`O_NOFOLLOW`): a lock
    /// file is never created where a link points.
    ///
    /// - Throws: `Errno` naming `path`: `.wouldBlock` with `.none`, `.timedOut`
    ///   when a `.seconds` deadline passes, `.tooManySymbolicLinkLevels` for a
    ///   symlink, or the error of `open`/`fcntl`.
    ///   The corresponding C function is `fcntl` with `F_OFD_SETLKW`.
    public init(path: String, kind: Kind = .exclusive, wait: Wait = .forever) throws(Errno) {
        try self.init(name: path, relativeTo: .workingDirectory, path: path, kind: kind, wait: wait)
    }

    /// Opens (creating if needed) the lock file `name` in the open directory
    /// `anchor`, with `O_NOFOLLOW`, and takes the lock. `path` names the file
    /// in errors and in ``path``.
    ///
    /// - Throws: as ``init(path:kind:wait:)``.
    public init(name: String, relativeTo anchor: DirectoryAnchor, path: String, kind: Kind = .exclusive, wait: Wait = .forever) throws(Errno) {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(name, [.readWrite, .create, .noFollow], permissions: 0o644, relativeTo: anchor)
        } catch {
            throw error.with(operation: error.operation, path: path)
        }
        try FileLock.acquire(fd.rawValue, kind: kind, wait: wait, path: path)
        self.descriptor = fd
        self.path = path
    }

    /// Takes a lock on the open file `descriptor`, waiting as `wait` says.
    /// The lock lasts until every descriptor of that open file description
    /// is closed.
    ///
    /// - Throws: as ``init(path:kind:wait:)``.
    public static func lock(_ descriptor: borrowing FileDescriptor, kind: Kind = .exclusive, wait: Wait, path: String) throws(Errno) {
        try acquire(descriptor.rawValue, kind: kind, wait: wait, path: path)
    }

    private static func acquire(_ fd: Int32, kind: Kind, wait: Wait, path: String) throws(Errno) {
        let type: Int32 = kind == .shared ? CAS_LOCK_SHARED : CAS_LOCK_EXCLUSIVE
        switch wait {
        case .forever:
            _ = try valueOrErrno("lock", path: path) { cas_ofd_lock(fd, type, 1) }
        case .none:
            _ = try valueOrErrno("lock", path: path) { cas_ofd_lock(fd, type, 0) }
        case .seconds(let limit):
            let deadline = Monotonic.now + limit
            var pause = 0.000_1
            while true {
                let r = cas_ofd_lock(fd, type, 0)
                if r >= 0 { return }
                guard -r == Errno.wouldBlock.rawValue || -r == Errno.interrupted.rawValue else {
                    throw Errno(-r, operation: "lock", path: path)
                }
                let left = deadline - Monotonic.now
                if left <= 0 { throw Errno(Errno.timedOut.rawValue, operation: "lock", path: path) }
                Monotonic.sleep(min(pause, left))
                pause = min(pause * 2, 0.01)
            }
        }
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
