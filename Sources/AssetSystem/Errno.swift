#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A POSIX error number, as a system call reported it, with the operation and
/// the path it concerned.
///
/// `Errno` values compare by number only, so `catch let e where e == .noSuchFile`
/// works whatever the operation was.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error number (`ENOENT`, `EACCES`, …).
    public let rawValue: Int32
    /// The system call or operation that failed, such as `open` or `mmap`.
    public let operation: String
    /// The file or socket path the operation concerned, if any.
    public let path: String?

    /// Creates an error for `rawValue`, as reported by `operation` on `path`.
    public init(_ rawValue: Int32, operation: String = "", path: String? = nil) {
        self.rawValue = rawValue
        self.operation = operation
        self.path = path
    }

    /// The same error number with the operation and path filled in.
    public func with(operation: String, path: String? = nil) -> Errno {
        Errno(rawValue, operation: operation, path: path ?? self.path)
    }

    /// The system's text for the error number (`strerror`).
    public var message: String { String(cString: strerror(rawValue)) }

    public var description: String {
        var parts: [String] = []
        if !operation.isEmpty { parts.append(operation) }
        if let path { parts.append("'\(path)'") }
        let what = parts.joined(separator: " ")
        return what.isEmpty ? message : "\(what): \(message)"
    }

    public static func == (a: Errno, b: Errno) -> Bool { a.rawValue == b.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    public static let noSuchFile = Errno(ENOENT)
    public static let fileExists = Errno(EEXIST)
    public static let permissionDenied = Errno(EACCES)
    public static let notPermitted = Errno(EPERM)
    public static let interrupted = Errno(EINTR)
    /// `EIO`: an input/output error, also for a file that ends before it should.
    public static let ioError = Errno(EIO)
    public static let wouldBlock = Errno(EAGAIN)
    public static let badFileDescriptor = Errno(EBADF)
    public static let invalidArgument = Errno(EINVAL)
    public static let isDirectory = Errno(EISDIR)
    public static let notDirectory = Errno(ENOTDIR)
    public static let noSpace = Errno(ENOSPC)
    /// `ENOMEM`: out of memory (also a library's allocation failure).
    public static let noMemory = Errno(ENOMEM)
    public static let busy = Errno(EBUSY)
    public static let nameTooLong = Errno(ENAMETOOLONG)
    /// `ELOOP`: too many symbolic links, or a final one under `O_NOFOLLOW`.
    public static let tooManySymbolicLinkLevels = Errno(ELOOP)
    public static let crossDevice = Errno(EXDEV)
    public static let notSupported = Errno(EOPNOTSUPP)
    public static let noSys = Errno(ENOSYS)
    public static let badMessage = Errno(EBADMSG)
    public static let connectionRefused = Errno(ECONNREFUSED)
    public static let brokenPipe = Errno(EPIPE)
    public static let timedOut = Errno(ETIMEDOUT)
    public static let deadlock = Errno(EDEADLK)
    public static let connectionReset = Errno(ECONNRESET)
    public static let addressInUse = Errno(EADDRINUSE)
    public static let protocolError = Errno(EPROTO)
    public static let tooManyOpenFiles = Errno(EMFILE)
    public static let tooManyOpenFilesInSystem = Errno(ENFILE)
}
