internal import CAssetShim

/// A connected Unix stream socket that can carry file descriptors
/// (`SCM_RIGHTS`) and tell who is at the other end (`SO_PEERCRED`).
public struct UnixSocket: ~Copyable, Sendable {
    /// The socket's descriptor.
    public let descriptor: FileDescriptor

    /// Wraps a connected socket.
    public init(_ descriptor: consuming FileDescriptor) { self.descriptor = descriptor }

    /// Connects to the listening socket at `path`.
    /// The corresponding C functions are `socket` and `connect`.
    public static func connect(to path: String) throws(Errno) -> UnixSocket {
        UnixSocket(FileDescriptor(adopting: try valueOrErrnoOnce("connect", path: path) { cas_unix_connect(path) }))
    }

    /// Two connected sockets, from ``pair()``.
    public struct Pair: ~Copyable, Sendable {
        public var first: UnixSocket
        public var second: UnixSocket
    }

    /// A connected pair of sockets. The corresponding C function is `socketpair`.
    public static func pair() throws(Errno) -> Pair {
        var fds: [Int32] = [-1, -1]
        _ = try fds.withUnsafeMutableBufferPointer { b in
            Result { () throws(Errno) in try valueOrErrno("socketpair") { cas_socketpair(b.baseAddress!) } }
        }.get()
        return Pair(first: UnixSocket(FileDescriptor(adopting: fds[0])), second: UnixSocket(FileDescriptor(adopting: fds[1])))
    }

    /// Sends `bytes`, with a duplicate of `passing` attached when given; the
    /// caller keeps its own descriptor. Returns the number of bytes sent.
    /// The corresponding C function is `sendmsg`.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, passing: Int32? = nil) throws(Errno) -> Int {
        let sock = descriptor.rawValue
        return try valueOrErrno("sendmsg") { cas_send_with_fd(sock, bytes.baseAddress, bytes.count, passing ?? -1) }
    }

    /// Sends all of `bytes` (looping over short sends); the first piece
    /// carries `passing`.
    public func sendAll(_ bytes: [UInt8], passing: Int32? = nil) throws(Errno) {
        try bytes.withUnsafeBytes { b in
            Result { () throws(Errno) in
                var sent = 0
                var fd = passing
                repeat {
                    sent += try send(UnsafeRawBufferPointer(rebasing: b[sent...]), passing: fd)
                    fd = nil
                } while sent < b.count
            }
        }.get()
    }

    /// What ``receive(into:)`` got: a byte count and perhaps a descriptor.
    public struct Received: ~Copyable, Sendable {
        /// Bytes received; 0 at end of stream.
        public var count: Int
        /// The descriptor that came with them, if any; now owned by the receiver.
        public var descriptor: FileDescriptor?
    }

    /// Receives up to `buffer.count` bytes and any descriptor sent with them.
    /// The corresponding C function is `recvmsg`.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Received {
        let sock = descriptor.rawValue
        var fd: Int32 = -1
        let n = try valueOrErrno("recvmsg") { cas_recv_with_fd(sock, buffer.baseAddress, buffer.count, &fd) }
        return Received(count: n, descriptor: fd >= 0 ? FileDescriptor(adopting: fd) : nil)
    }

    /// A message from ``receive(upTo:)``: its bytes and perhaps a descriptor.
    public struct Message: ~Copyable, Sendable {
        /// The bytes received; empty at end of stream.
        public var bytes: [UInt8]
        /// The descriptor that came with them, if any; now owned by the receiver.
        public var descriptor: FileDescriptor?
    }

    /// Receives up to `capacity` bytes and any descriptor sent with them.
    public func receive(upTo capacity: Int) throws(Errno) -> Message {
        var bytes = [UInt8](repeating: 0, count: capacity)
        let sock = descriptor.rawValue
        var fd: Int32 = -1
        let n = try bytes.withUnsafeMutableBytes { b in
            Result { () throws(Errno) in try valueOrErrno("recvmsg") { cas_recv_with_fd(sock, b.baseAddress, b.count, &fd) } }
        }.get()
        bytes.removeSubrange(n...)
        return Message(bytes: bytes, descriptor: fd >= 0 ? FileDescriptor(adopting: fd) : nil)
    }

    /// The process at the other end, as it was when it connected.
    public struct Credentials: Sendable, Equatable {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
    }

    /// The peer's credentials. The corresponding option is `SO_PEERCRED`.
    public func peerCredentials() throws(Errno) -> Credentials {
        var c = Credentials(pid: 0, uid: 0, gid: 0)
        let sock = descriptor.rawValue
        _ = try valueOrErrno("getsockopt SO_PEERCRED") { cas_peer_credentials(sock, &c.pid, &c.uid, &c.gid) }
        return c
    }

    /// Sets send and receive timeouts; 0 means none. A receive or send that
    /// waits longer fails with `EAGAIN` (`wouldBlock`).
    /// The corresponding options are `SO_RCVTIMEO` and `SO_SNDTIMEO`.
    public func setTimeouts(milliseconds: Int) throws(Errno) {
        let sock = descriptor.rawValue
        _ = try valueOrErrno("setsockopt SO_RCVTIMEO") { cas_socket_timeouts(sock, Int32(clamping: milliseconds)) }
    }

    /// Ends the connection in both directions without closing the
    /// descriptor: a thread blocked receiving on it sees end of stream.
    /// The corresponding C function is `shutdown`.
    public func shutdown() throws(Errno) {
        try Self.shutdown(descriptorNumber: descriptor.rawValue)
    }

    /// As ``shutdown()``, for a socket that another value owns (for example
    /// one that a thread is blocked on). The caller must know that the
    /// descriptor is still open.
    public static func shutdown(descriptorNumber sock: Int32) throws(Errno) {
        _ = try valueOrErrno("shutdown") { cas_shutdown(sock) }
    }
}

/// A listening Unix stream socket bound to a path.
public struct UnixListener: ~Copyable, Sendable {
    public let descriptor: FileDescriptor
    public let path: String

    /// Binds a new socket to `path` with permissions `mode` and listens.
    /// The corresponding C functions are `socket`, `bind` and `listen`.
    public init(path: String, mode: UInt32 = 0o600, backlog: Int32 = 128) throws(Errno) {
        let fd = try valueOrErrno("bind", path: path) { cas_unix_listen(path, mode_t(mode), backlog) }
        self.descriptor = FileDescriptor(adopting: fd)
        self.path = path
    }

    /// Takes over a listening socket that this process was handed (systemd
    /// socket activation passes it as descriptor 3), after checking that it
    /// is a listening Unix stream socket; makes it close-on-exec. ``path``
    /// is the path it is bound to ("" when unnamed). The corresponding C
    /// functions are `getsockopt` and `getsockname`.
    ///
    /// - Throws: `ENOTSOCK`, `EAFNOSUPPORT` (not `AF_UNIX`),
    ///   `ESOCKTNOSUPPORT` (not a stream socket), `EINVAL` (not listening),
    ///   `EBADF` (not open); the descriptor is then left as it was.
    public init(inheriting descriptor: Int32) throws(Errno) {
        var buffer = [CChar](repeating: 0, count: 4096)
        _ = try buffer.withUnsafeMutableBufferPointer { b in
            Result { () throws(Errno) in
                try valueOrErrno("check the socket passed as descriptor \(descriptor)") {
                    cas_unix_listener_check(descriptor, b.baseAddress, b.count)
                }
            }
        }.get()
        self.descriptor = FileDescriptor(adopting: descriptor)
        self.path = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Waits for and accepts the next connection. `accept4`.
    public func accept() throws(Errno) -> UnixSocket {
        let fd = descriptor.rawValue
        return UnixSocket(FileDescriptor(adopting: try valueOrErrno("accept") { cas_accept(fd) }))
    }
}
