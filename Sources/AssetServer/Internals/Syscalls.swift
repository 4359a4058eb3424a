internal import CAssetShim
import AssetSystem
#if canImport(Glibc)
import Glibc
#endif

/// The event loop's system calls: thin wrappers over CAssetShim's server
/// block, throwing `Errno`.
enum Syscall {
    /// epoll interest bits.
    struct Events: OptionSet {
        let rawValue: UInt32
        static let readable = Events(rawValue: CAS_EVENT_IN)
        static let writable = Events(rawValue: CAS_EVENT_OUT)
        static let error = Events(rawValue: CAS_EVENT_ERR)
        static let hangUp = Events(rawValue: CAS_EVENT_HUP)
        static let peerClosed = Events(rawValue: CAS_EVENT_RDHUP)
    }

    /// A listening socket and the port it is bound to.
    static func listen(address: String, port: Int, backlog: Int, boundPort: inout Int) throws(Errno) -> FileDescriptor {
        var bound: Int32 = 0
        let fd = try valueOrErrno("listen") { cas_tcp_listen(address, Int32(port), Int32(backlog), &bound) }
        boundPort = Int(bound)
        return FileDescriptor(adopting: fd)
    }

    /// A connection (a descriptor the caller owns) and its peer's address,
    /// or `nil` when none is waiting.
    static func accept(_ listener: Int32) throws(Errno) -> (fd: Int32, remote: String)? {
        var remote = [CChar](repeating: 0, count: 80)
        let result = remote.withUnsafeMutableBufferPointer { cas_tcp_accept(listener, $0.baseAddress, $0.count) }
        if result == -EAGAIN || result == -EINTR || result == -ECONNABORTED { return nil }
        let fd = try valueOrErrnoOnce("accept") { result }
        let name = String(decoding: remote.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (fd, name)
    }

    /// Bytes sent, or `nil` when the socket buffer is full; `more`: more
    /// follows at once (MSG_MORE), so the kernel holds a partial segment.
    static func send(_ socket: Int32, _ bytes: ArraySlice<UInt8>, more: Bool = false) throws(Errno) -> Int? {
        let result = bytes.withUnsafeBytes { cas_send(socket, $0.baseAddress, $0.count, more ? 1 : 0) }
        if result == -Int(EAGAIN) { return nil }
        return try valueOrErrno("send") { result }
    }

    /// Bytes of the file sent from `offset` (advanced), or `nil` when the socket buffer is full.
    static func sendfile(_ socket: Int32, _ file: Int32, offset: inout Int64, count: Int) throws(Errno) -> Int? {
        let result = cas_sendfile(socket, file, &offset, count)
        if result == -Int(EAGAIN) { return nil }
        return try valueOrErrno("sendfile") { result }
    }

    /// Bytes read (0 at end of stream), or `nil` when none are waiting.
    static func receive(_ socket: Int32, into buffer: inout [UInt8]) throws(Errno) -> Int? {
        let result = buffer.withUnsafeMutableBytes { cas_read(socket, $0.baseAddress, $0.count) }
        if result == -Int(EAGAIN) { return nil }
        return try valueOrErrno("recv") { result }
    }

    static func shutdownWrite(_ socket: Int32) { _ = cas_shutdown_write(socket) }

    static func epollCreate() throws(Errno) -> FileDescriptor {
        FileDescriptor(adopting: try valueOrErrno("epoll_create") { cas_epoll_create() })
    }

    enum Control: Int32 { case add = 0, modify = 1, remove = 2 }

    static func epollControl(_ epoll: Int32, _ op: Control, _ fd: Int32, _ events: Events) throws(Errno) {
        _ = try valueOrErrno("epoll_ctl") { cas_epoll_ctl(epoll, op.rawValue, fd, events.rawValue) }
    }

    /// Waits up to `milliseconds` (-1: no limit); the ready descriptors and their events.
    static func epollWait(_ epoll: Int32, milliseconds: Int32) throws(Errno) -> [(Int32, Events)] {
        var fds = [Int32](repeating: 0, count: 256), events = [UInt32](repeating: 0, count: 256)
        let n = cas_epoll_wait(epoll, &fds, &events, 256, milliseconds)
        if n == -EINTR { return [] }
        let count = try valueOrErrno("epoll_wait") { n }
        return (0..<Int(count)).map { (fds[$0], Events(rawValue: events[$0])) }
    }

    static func eventfd() throws(Errno) -> FileDescriptor {
        FileDescriptor(adopting: try valueOrErrno("eventfd") { cas_eventfd() })
    }

    static func signal(eventfd fd: Int32) { _ = cas_eventfd_signal(fd) }

    /// Opens `path` beneath the directory `root`, never leaving it
    /// (`openat2` RESOLVE_BENEATH, or component by component with O_NOFOLLOW).
    static func openBeneath(_ root: Int32, _ path: [UInt8], directory: Bool, allowOpenat2: Bool) throws(Errno) -> FileDescriptor {
        let flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | (directory ? O_DIRECTORY : 0)
        var used: Int32 = 0
        let fd = try valueOrErrno("open") {
            (path + [0]).withUnsafeBufferPointer { p in
                p.withMemoryRebound(to: CChar.self) { cas_open_beneath(root, $0.baseAddress, flags, allowOpenat2 ? 1 : 0, &used) }
            }
        }
        return FileDescriptor(adopting: fd)
    }

    /// A file's type, size, inode and modification time.
    struct Status {
        var mode: UInt32 = 0, size: Int64 = 0, inode: UInt64 = 0, mtimeSeconds: Int64 = 0, mtimeNanoseconds: Int64 = 0
        var isRegular: Bool { mode & 0o170000 == 0o100000 }
        var isDirectory: Bool { mode & 0o170000 == 0o040000 }
    }

    static func status(_ fd: Int32) throws(Errno) -> Status {
        var s = Status()
        _ = try valueOrErrno("fstat") { cas_fstat_mtime(fd, &s.mode, &s.size, &s.inode, &s.mtimeSeconds, &s.mtimeNanoseconds) }
        return s
    }

    /// The type of `name` in the directory `directory`, not following a symlink.
    static func mode(of name: String, in directory: Int32) -> UInt32? {
        var mode: UInt32 = 0
        return cas_fstatat(directory, name, 1, &mode, nil, nil, nil) == 0 ? mode : nil
    }

    /// Raises the soft descriptor limit to `wanted` if the hard limit allows; the limit in force.
    static func raiseDescriptorLimit(_ wanted: Int) -> Int {
        let limit = cas_raise_descriptor_limit(Int64(wanted))
        return limit < 0 ? 1024 : Int(clamping: limit)
    }
}
