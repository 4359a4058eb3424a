internal import CAssetShim
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An owned file descriptor, closed when it goes out of scope.
///
/// A `FileDescriptor` cannot be copied: exactly one owner closes it. Hand it
/// away with ``take()`` (for example to send it over a socket) or duplicate the
/// underlying file with ``reopenReadOnly()``.
public struct FileDescriptor: ~Copyable, Sendable {
    /// The descriptor number. Valid while this value lives.
    public let rawValue: Int32

    /// Takes ownership of `rawValue`, which must be an open descriptor.
    public init(adopting rawValue: Int32) {
        precondition(rawValue >= 0, "FileDescriptor(adopting:) needs an open descriptor")
        self.rawValue = rawValue
    }

    deinit { _ = cas_close(rawValue) }

    /// Gives up ownership and returns the descriptor number; the caller must close it.
    public consuming func take() -> Int32 {
        let fd = rawValue
        discard self
        return fd
    }

    /// Closes the descriptor, reporting an error. EINTR is not retried: Linux
    /// releases the descriptor regardless. The corresponding C function is `close`.
    public consuming func close() throws(Errno) {
        let fd = rawValue
        discard self
        _ = try valueOrErrnoOnce("close", { cas_close(fd) })
    }
}

/// How to open a file.
public struct OpenOptions: OptionSet, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let readOnly = OpenOptions(rawValue: O_RDONLY)
    public static let writeOnly = OpenOptions(rawValue: O_WRONLY)
    public static let readWrite = OpenOptions(rawValue: O_RDWR)
    public static let create = OpenOptions(rawValue: O_CREAT)
    public static let exclusive = OpenOptions(rawValue: O_EXCL)
    public static let truncate = OpenOptions(rawValue: O_TRUNC)
    public static let append = OpenOptions(rawValue: O_APPEND)
    public static let directory = OpenOptions(rawValue: O_DIRECTORY)
    public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
    public static let path = OpenOptions(rawValue: cas_o_path)
    /// `O_NONBLOCK`: an open of a FIFO returns at once instead of waiting
    /// for the other end (and reads and writes of it do not wait).
    public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
}

/// A directory to resolve relative paths against: an open directory
/// descriptor, or the working directory.
public enum DirectoryAnchor: Sendable {
    case workingDirectory
    case descriptor(Int32)

    var raw: Int32 {
        switch self {
        case .workingDirectory: return AT_FDCWD
        case .descriptor(let fd): return fd
        }
    }
}

extension FileDescriptor {
    /// Opens `path`, relative to `anchor`, with close-on-exec.
    ///
    /// - Throws: `Errno` naming the path. The corresponding C function is `openat`.
    public static func open(
        _ path: String, _ options: OpenOptions = .readOnly, permissions: UInt32 = 0o644,
        relativeTo anchor: DirectoryAnchor = .workingDirectory
    ) throws(Errno) -> FileDescriptor {
        let fd = try valueOrErrno("open", path: path) {
            cas_openat(anchor.raw, path, options.rawValue, mode_t(permissions))
        }
        return FileDescriptor(adopting: fd)
    }

    /// Opens a new, independent read-only description of the same file, with
    /// its own file offset. Through `/proc/self/fd`.
    public func reopenReadOnly() throws(Errno) -> FileDescriptor {
        let fd = rawValue
        return FileDescriptor(adopting: try valueOrErrno("reopen") { cas_reopen_readonly(fd) })
    }

    /// A second descriptor of the same open file description, with
    /// close-on-exec: it shares the file offset (and status flags) with this
    /// one and with every other duplicate, so read it with `pread`, not
    /// `read`, when others may use it at once. Cheaper than
    /// ``reopenReadOnly()`` by a path lookup.
    /// The corresponding C function is `fcntl` with `F_DUPFD_CLOEXEC`.
    public func duplicate() throws(Errno) -> FileDescriptor {
        let fd = rawValue
        return FileDescriptor(adopting: try valueOrErrno("dup") { cas_dup_cloexec(fd) })
    }

    /// Opens an unnamed file in the directory `directory` (`O_TMPFILE`), to be
    /// named later with ``link(as:in:)``.
    public static func temporary(in directory: borrowing FileDescriptor, permissions: UInt32 = 0o644) throws(Errno) -> FileDescriptor {
        let dir = directory.rawValue
        return FileDescriptor(adopting: try valueOrErrno("open O_TMPFILE") { cas_open_tmpfile(dir, mode_t(permissions)) })
    }

    /// Opens an unnamed file in the open directory `anchor` (`O_TMPFILE`), as
    /// the overload taking a directory descriptor does.
    public static func temporary(in anchor: DirectoryAnchor, permissions: UInt32 = 0o644) throws(Errno) -> FileDescriptor {
        let dir = anchor.raw
        return FileDescriptor(adopting: try valueOrErrno("open O_TMPFILE") { cas_open_tmpfile(dir, mode_t(permissions)) })
    }

    /// Names an unnamed file made by ``temporary(in:permissions:)``. Fails with
    /// `EEXIST` when the name is taken. The corresponding C function is `linkat`.
    public func link(as name: String, in directory: borrowing FileDescriptor) throws(Errno) {
        try link(as: name, in: .descriptor(directory.rawValue))
    }

    /// Names an unnamed file made by ``temporary(in:permissions:)`` in the
    /// open directory `anchor`. Fails with `EEXIST` when the name is taken.
    /// The corresponding C function is `linkat`.
    public func link(as name: String, in anchor: DirectoryAnchor) throws(Errno) {
        let (fd, dir) = (rawValue, anchor.raw)
        _ = try valueOrErrno("link", path: name) { cas_link_tmpfile(fd, dir, name) }
    }
}
