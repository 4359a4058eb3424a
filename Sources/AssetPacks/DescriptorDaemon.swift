import Foundation
import AssetSystem
import AssetStore
import Dispatch
import Synchronization

/// Serves asset descriptors to other processes over the container's Unix
/// socket (`<container>/daemon.sock`), for processes that should not open
/// the container themselves: each request names a member, each reply
/// carries a read-only descriptor (`SCM_RIGHTS`) with offset, length and
/// size, or a typed error. ``AssetPackClient`` speaks the other end;
/// ``DaemonProtocol`` is the wire format.
///
/// One thread accepts; each connection gets its own thread, so a slow or
/// silent client holds up nobody else. Every peer is checked with
/// `SO_PEERCRED` when it connects: the daemon's own user, or a user or
/// primary group from the allow lists. A request must arrive whole within
/// ``Configuration/requestTimeout``; an idle connection closes after
/// ``Configuration/idleTimeout``.
///
/// Only one daemon serves a container: ``init(manager:configuration:)``
/// takes `locks/daemon.lock`, replaces a socket file left by a daemon that
/// died, and fails when a live daemon holds the lock. ``stop()`` (from any
/// thread, such as a `SIGTERM` handler) ends ``run()``, which then removes
/// the socket.
public final class DescriptorDaemon: Sendable {
    /// How the daemon listens and whom it serves.
    public struct Configuration: Sendable {
        /// The group given the socket, which is then made mode 0660 so that
        /// the group's members can connect; `nil` keeps it 0600 (owner only).
        public var socketGroup: UInt32?
        /// Users served besides the daemon's own (`SO_PEERCRED` uid).
        public var allowedUIDs: Set<UInt32> = []
        /// Primary groups whose users are served (`SO_PEERCRED` gid;
        /// supplementary groups are not seen).
        public var allowedGIDs: Set<UInt32> = []
        /// Seconds within which a request that has begun must arrive whole.
        public var requestTimeout: Double = 2
        /// Seconds a connection may wait between requests before it closes.
        public var idleTimeout: Double = 300
        /// Connections served at once; more are answered ``AssetPackError/Code/daemonBusy``.
        public var maximumConnections = 256
        /// Called with one line for each refused peer and each failed
        /// connection, for the operator's log; from any thread.
        public var log: (@Sendable (String) -> Void)?

        public init() {}
    }

    /// The container served.
    public var container: AssetPackManager.Container { manager.container }
    /// The socket's path.
    public let socketPath: String
    let configuration: Configuration
    let manager: AssetPackManager
    private let listener: UnixListener
    /// Written to by ``stop()`` to wake the accepting thread.
    private let wake: UnixSocket.Pair
    private let lock: FileLock
    let uid: UInt32
    /// Bounds concurrent lookups, so a crowd of connections holds a bounded
    /// number of the index's reader slots.
    let lookups = DispatchSemaphore(value: 8)
    /// Open connections (id → descriptor), to shut them down on stop.
    let connections = Mutex<Connections>(Connections())
    /// Connection threads still running.
    let running = DispatchGroup()

    struct Connections: ~Copyable {
        var open: [Int: Int32] = [:]
        var nextID = 0
        var stopping = false
    }

    /// Takes the container's daemon lock and binds `daemon.sock`.
    ///
    /// - Throws: `.system` with `EADDRINUSE` naming the socket when another
    ///   daemon serves the container (with its pid when it answers),
    ///   `EEXIST` when something that is not a socket has the socket's name,
    ///   and the errors of `bind`, `chgrp` and the lock.
    public init(manager: AssetPackManager, configuration: Configuration = Configuration()) throws(AssetPackError) {
        let container = manager.container.engine
        let path = container.daemonSocketPath
        let lockPath = container.daemonLockPath
        do {
            lock = try FileLock(path: lockPath, kind: .exclusive, wait: .none)
        } catch where error == .wouldBlock {
            throw AssetPackError(Errno(Errno.addressInUse.rawValue, operation: "another descriptor daemon\(Self.livePeer(path)) serves", path: path))
        } catch {
            throw AssetPackError(error)
        }
        // The lock was free, so any socket file is a dead daemon's.
        do throws(Errno) {
            if let status = try FileDescriptor.status(of: path, followingLinks: false) {
                guard status.isSocket else {
                    throw Errno(Errno.fileExists.rawValue, operation: "not a socket, not replacing it", path: path)
                }
                try FileSystem.unlink(path)
            }
            listener = try UnixListener(path: path, mode: configuration.socketGroup == nil ? 0o600 : 0o660, backlog: 512)
            do throws(Errno) {
                if let gid = configuration.socketGroup { try FileSystem.changeGroup(of: path, to: gid) }
                wake = try UnixSocket.pair()
            } catch {
                try? FileSystem.unlink(path)
                throw error
            }
        } catch {
            throw AssetPackError(error)
        }
        self.socketPath = path
        self.configuration = configuration
        self.manager = manager
        self.uid = getuid()
    }

    /// " (pid N)" for the daemon answering at `path`, or "".
    private static func livePeer(_ path: String) -> String {
        guard let socket = try? UnixSocket.connect(to: path), let peer = try? socket.peerCredentials() else { return "" }
        return " (pid \(peer.pid))"
    }

    /// Accepts and serves connections until ``stop()``; then removes the
    /// socket, shuts every connection down and waits up to 2 s for their
    /// threads. The daemon lock is held until this object goes away.
    public func run() {
        let fds = [listener.descriptor.rawValue, wake.second.descriptor.rawValue]
        while !isStopping {
            let ready: [Int]
            do { ready = try Poll.readable(fds, timeout: nil) } catch {
                configuration.log?("poll: \(error)")
                break
            }
            if ready.contains(1) || isStopping { break }
            if ready.contains(0) { acceptOne() }
        }
        shutDown()
    }

    /// Ends ``run()``. Safe from any thread, any number of times.
    public func stop() {
        let first = connections.withLock { c in
            defer { c.stopping = true }
            return !c.stopping
        }
        if first { try? wake.first.sendAll([1]) }
    }

    var isStopping: Bool { connections.withLock { $0.stopping } }

    private func acceptOne() {
        do throws(Errno) {
            admit(try listener.accept())
        } catch {
            // Out of descriptors: let a connection end before trying again.
            if error == .tooManyOpenFiles || error == .tooManyOpenFilesInSystem { Monotonic.sleep(0.01) }
        }
    }

    /// Checks a new connection's peer and room for it, and starts its thread.
    private func admit(_ socket: consuming UnixSocket) {
        guard let peer = try? socket.peerCredentials() else { return }
        guard peer.uid == uid || configuration.allowedUIDs.contains(peer.uid) || configuration.allowedGIDs.contains(peer.gid) else {
            configuration.log?("refused pid \(peer.pid): uid \(peer.uid) gid \(peer.gid) is not allowed")
            refuse(socket, .peerNotAllowed, "uid \(peer.uid) (gid \(peer.gid)) is not allowed to use this daemon")
            return
        }
        let raw = socket.descriptor.rawValue
        let limit = configuration.maximumConnections
        let id: Int? = connections.withLock { c in
            guard !c.stopping, c.open.count < limit else { return nil }
            c.nextID += 1
            c.open[c.nextID] = raw
            return c.nextID
        }
        guard let id else {
            refuse(socket, .daemonBusy, "the daemon is serving \(configuration.maximumConnections) connections; try again")
            return
        }
        let connection = Connection(socket: socket, id: id, daemon: self)
        running.enter()
        let thread = Thread { connection.serve() }
        thread.name = "assetpack-daemon-\(id)"
        thread.start()
    }

    /// Answers a connection that will not be served, and closes it.
    private func refuse(_ socket: borrowing UnixSocket, _ code: AssetPackError.Code, _ message: String) {
        try? socket.setTimeouts(milliseconds: 100)
        try? socket.sendAll(DaemonReply.failure(code, message: message))
    }

    /// Forgets connection `id`; called by its thread before it closes it, so
    /// that ``shutDown()`` never touches a closed descriptor.
    func finished(_ id: Int) {
        connections.withLock { _ = $0.open.removeValue(forKey: id) }
        running.leave()
    }

    private func shutDown() {
        try? FileSystem.unlink(socketPath)
        connections.withLock { c in
            c.stopping = true
            for fd in c.open.values { try? UnixSocket.shutdown(descriptorNumber: fd) }
        }
        _ = running.wait(timeout: .now() + 2)
    }
}
