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
/// It is also the container's background download agent: a download
/// request (``AssetPackManager/ensureLocalAvailability(of:progress:)``
/// hands its download to a daemon that answers) runs on a thread of the
/// daemon's, goes on when the client exits, and is shared by every client
/// asking for the same pack (``Configuration/maximumDownloads`` at once).
///
/// One thread — the caller of ``run()`` — serves every connection from an
/// `epoll` loop, non-blocking, so a slow or silent client holds up nobody
/// else and an idle connection costs a descriptor, not a thread; lookups
/// that may block (memory files) run on a few worker threads, download
/// requests on threads of their own. Requests pipelined on a connection are
/// answered in order, and a batch request asks for up to 64 members at
/// once (``AssetPackClient/descriptors(for:searchingInAssetPackWithID:options:)``).
/// Every peer is checked with `SO_PEERCRED` once, when it connects: the daemon's own user, or a user or
/// primary group from the allow lists. A request must arrive whole within
/// ``Configuration/requestTimeout``; an idle connection closes after
/// ``Configuration/idleTimeout``, or sooner when a new connection needs its
/// slot (``Configuration/maximumConnections``,
/// ``Configuration/maximumConnectionsPerUser``). A member inflated for one
/// request is kept as a sealed memory file and shared with the next
/// (``Configuration/memoryCacheBytes``, ``Configuration/memoryBudgetPerUser``).
///
/// Only one daemon serves a container: ``init(manager:configuration:)``
/// takes `locks/daemon.lock`, replaces a socket file left by a daemon that
/// died, and fails when a live daemon holds the lock. ``stop()`` (from any
/// thread, such as a `SIGTERM` handler) ends ``run()``, which then removes
/// the socket — unless systemd passed it (``Configuration/acceptsSocketActivation``).
public final class DescriptorDaemon: Sendable {
    /// How the daemon listens and whom it serves.
    public struct Configuration: Sendable {
        /// The group given the socket, which is then made mode 0660 so that
        /// the group's members can connect. Without it the socket is 0600
        /// (owner only) — or 0666 when ``allowedUIDs`` or ``allowedGIDs``
        /// name anyone, since they could not reach a 0600 socket: then
        /// `SO_PEERCRED` alone decides who is served.
        public var socketGroup: UInt32?
        /// Users served besides the daemon's own (`SO_PEERCRED` uid).
        public var allowedUIDs: Set<UInt32> = []
        /// Primary groups whose users are served (`SO_PEERCRED` gid;
        /// supplementary groups are not seen).
        public var allowedGIDs: Set<UInt32> = []
        /// Seconds within which a new connection must have sent its first
        /// whole request; one that has not is closed (it holds a slot meanwhile).
        public var firstRequestTimeout: Double = 5
        /// Seconds within which a request that has begun must arrive whole.
        public var requestTimeout: Double = 2
        /// Seconds a connection may wait between requests before it closes.
        public var idleTimeout: Double = 300
        /// Connections served at once (lowered to what `ulimit -n` leaves
        /// room for, once the soft limit is raised as far as the hard one
        /// allows; an idle connection holds a descriptor and no thread). A new connection past it, or past
        /// ``maximumConnectionsPerUser``, closes the oldest idle connection
        /// (of the same user, for the latter); when none is idle it is
        /// answered ``AssetPackError/Code/daemonBusy``.
        public var maximumConnections = 256
        /// Connections one user (`SO_PEERCRED` uid) may hold at once.
        public var maximumConnectionsPerUser = 128
        /// Bytes of sealed memory files (inflated members, standalone
        /// members) the daemon keeps to hand out again; the least recently
        /// used go first.
        public var memoryCacheBytes: Int64 = 1 << 30
        /// Distinct bytes of memory files one user may hold through its open
        /// connections; a request past it is answered ``AssetPackError/Code/daemonBusy``.
        public var memoryBudgetPerUser: Int64 = 1 << 30
        /// Called with one line for each refused peer and each failed
        /// connection, for the operator's log; from any thread. Lines of one
        /// kind (refused peer, busy, out of descriptors) come at most once
        /// per ``logInterval``, with a count of those left out.
        public var log: (@Sendable (String) -> Void)?
        /// Seconds between two log lines of one kind.
        public var logInterval: Double = 10
        /// Downloads run at once for download requests (``AssetPackManager/ensureLocalAvailability(of:progress:)``
        /// handing off, ``AssetPackManager/beginBackgroundDownload(of:discretionary:)``);
        /// the others wait, those not discretionary first.
        public var maximumDownloads = 2
        /// The minimum speed and total deadline of the daemon's downloads
        /// (a caller's own ``AssetPackManager/CatalogSource/deadlines``
        /// apply only when it downloads itself).
        public var downloadDeadlines = AssetPackManager.Deadlines()
        /// Whether a listening socket handed over by systemd socket
        /// activation is used: when `LISTEN_PID` is this process and
        /// `LISTEN_FDS` is 1 or more, descriptor 3 is the listening socket
        /// (it must be a listening `AF_UNIX` stream socket), the `LISTEN_*`
        /// variables are unset, and the daemon neither binds nor, when it
        /// stops, removes a socket file — the socket unit owns it, with its
        /// mode and group (``socketGroup`` does not apply). The daemon lock
        /// is taken as always.
        public var acceptsSocketActivation = false

        public init() {}
    }

    /// The container served.
    public var container: AssetPackManager.Container { manager.container }
    /// The socket's path.
    public let socketPath: String
    /// Whether the socket came from systemd socket activation
    /// (``Configuration/acceptsSocketActivation``), which leaves its file alone.
    public let isSocketActivated: Bool
    let configuration: Configuration
    let manager: AssetPackManager
    private let listener: UnixListener
    /// Written to by ``stop()`` and by ``complete(_:)`` to wake the loop.
    private let wake: UnixSocket.Pair
    private let lock: FileLock
    /// Given up to accept a connection when out of descriptors, to answer
    /// it instead of leaving it hanging in the backlog. Opened first, for
    /// the lowest number: `RLIMIT_NOFILE` bounds descriptor numbers, so
    /// the reserve helps only below a lowered limit. (Opened in `run()`, it
    /// raced with the descriptors Dispatch opens for the caller's signal
    /// sources, and could end up above them.)
    private let reserve: Mutex<FileDescriptor?>
    let uid: UInt32
    /// Whether ``stop()`` was called, and the work done off the loop that
    /// waits for it.
    let control = Mutex<Control>(Control())
    /// The threads that run lookups that may block (memory files), so that
    /// the loop never waits for one; so few that a crowd of connections
    /// holds a bounded number of the index's reader slots.
    let workers: Workers
    /// Connections served at once: the configured number, or fewer when
    /// `ulimit -n` leaves no room for it.
    let maximumConnections: Int
    let memoryFiles: MemoryFiles
    /// Spare open descriptions of the archives handed out last.
    let spares: Spares
    /// How many shared descriptions (``SharedDescriptions``) all
    /// connections may keep at once: what `ulimit -n` leaves after
    /// connections, memory files and spares; 0 answers every request with
    /// a new open description.
    let sharedCapacity: Int
    let logs: LogLimiter
    /// The downloads asked for by download requests.
    let downloads: Downloads

    /// Descriptors kept for the daemon's own work (the index, archives
    /// being opened, memory files being made, standard streams, the reserve,
    /// the store's empty memory files made ahead and dropped ones not yet closed).
    static let descriptorsForWork = 32 + MemoryFileCache.descriptorsAhead

    struct Control: ~Copyable {
        var stopping = false
        var completions: [Completion] = []
    }

    /// Takes the container's daemon lock and binds `daemon.sock`.
    ///
    /// - Throws: `.system` with `EADDRINUSE` naming the socket when another
    ///   daemon serves the container (with its pid when it answers),
    ///   `EEXIST` when something that is not a socket has the socket's name,
    ///   and the errors of `bind`, `chgrp` and the lock.
    public init(manager: AssetPackManager, configuration: Configuration = Configuration()) throws(AssetPackError) {
        try configuration.downloadDeadlines.validate(("DescriptorDaemon.Configuration", "downloadDeadlines."))
        let container = manager.container.engine
        let path = container.daemonSocketPath
        let lockPath = container.daemonLockPath
        reserve = Mutex(try? FileDescriptor.open("/dev/null"))
        do {
            lock = try FileLock(path: lockPath, kind: .exclusive, wait: .none, mode: manager.store.lockFileMode)
        } catch {
            guard case .system(let e) = error else {
                throw AssetPackError(Errno(Errno.addressInUse.rawValue, operation: "another descriptor daemon\(Self.livePeer(path)) serves", path: path))
            }
            throw AssetPackError(e)
        }
        let activated: UnixListener?
        do { activated = configuration.acceptsSocketActivation ? try Self.activatedListener() : nil } catch { throw AssetPackError(error) }
        if let activated {
            let bound = activated.path
            if bound != path { configuration.log?("the activated socket is bound to '\(bound)', not '\(path)', where clients look") }
            listener = activated
            isSocketActivated = true
            do { wake = try UnixSocket.pair() } catch { throw AssetPackError(error) }
        } else {
            let mode: UInt32 = configuration.socketGroup != nil ? 0o660
                : configuration.allowedUIDs.isEmpty && configuration.allowedGIDs.isEmpty ? 0o600 : 0o666
            // The lock was free, so any socket file is a dead daemon's.
            do throws(Errno) {
                if let status = try FileDescriptor.status(of: path, followingLinks: false) {
                    guard status.isSocket else {
                        throw Errno(Errno.fileExists.rawValue, operation: "not a socket, not replacing it", path: path)
                    }
                    try FileSystem.unlink(path)
                }
                listener = try UnixListener(path: path, mode: mode, backlog: 512)
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
            isSocketActivated = false
        }
        // Each connection and each cached memory file holds a descriptor:
        // keep both within `ulimit -n`, with room left for the work itself.
        // No connection holds a thread, so the soft limit (1024 for the sake
        // of select(2), which the daemon does not use) is raised as far as
        // the hard limit allows for what the configuration asks.
        DescriptorLimit.raise(to: configuration.maximumConnections + 64 + Self.descriptorsForWork + Spares.maximum + SharedDescriptions.maximum)
        let room = max(2, Self.descriptorLimit() - Self.descriptorsForWork)
        let files = min(64, max(1, room / 4))
        self.maximumConnections = max(1, min(configuration.maximumConnections, room - files))
        // Spares only in the room connections and memory files leave.
        let spareCapacity = Spares.capacity(room: room - files - maximumConnections)
        self.spares = Spares(capacity: spareCapacity)
        // Shared descriptions in what is left.
        self.sharedCapacity = min(SharedDescriptions.maximum, max(0, room - files - maximumConnections - spareCapacity))
        self.memoryFiles = MemoryFiles(cache: manager.store.memoryFiles, capacity: configuration.memoryCacheBytes, maximumFiles: files,
                                       budget: configuration.memoryBudgetPerUser)
        self.logs = LogLimiter(interval: configuration.logInterval, log: configuration.log)
        self.workers = Workers(count: min(8, max(2, ProcessInfo.processInfo.activeProcessorCount)))
        var jobOptions = AssetPackManager.Options()
        jobOptions.catalogCache = manager.catalogCache
        self.downloads = Downloads(manager: manager, owner: getuid(), maximumDownloads: configuration.maximumDownloads,
                                   options: jobOptions, deadlines: configuration.downloadDeadlines, log: configuration.log)
        self.socketPath = path
        self.configuration = configuration
        self.manager = manager
        self.uid = getuid()
        if maximumConnections < configuration.maximumConnections {
            configuration.log?("ulimit -n \(Self.descriptorLimit()) leaves room for \(maximumConnections) connections, not \(configuration.maximumConnections)")
        }
    }

    /// The soft limit on open descriptors (`RLIMIT_NOFILE`).
    static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return limit.rlim_cur >= rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }

    /// " (pid N)" for the daemon answering at `path`, or "".
    private static func livePeer(_ path: String) -> String {
        guard let socket = try? UnixSocket.connect(to: path), let peer = try? socket.peerCredentials() else { return "" }
        return " (pid \(peer.pid))"
    }

    /// Accepts and serves connections until ``stop()``, on the calling
    /// thread (the event loop; lookups that may block go to the workers);
    /// then removes the socket, closes every connection and the spare
    /// archive descriptors (``Spares``), and waits up to 2 s for the workers. The daemon lock is held until this object goes away.
    public func run() {
        let loop: EventLoop
        do { loop = try EventLoop(daemon: self) } catch {
            configuration.log?("epoll: \(error)")
            return
        }
        workers.start()
        loop.run()
        if !isSocketActivated { try? FileSystem.unlink(socketPath) }
        loop.closeAll()
        spares.closeAll()
        workers.stop(waiting: 2)
    }

    /// Ends ``run()``. Safe from any thread, any number of times.
    public func stop() {
        let first = control.withLock { c in
            defer { c.stopping = true }
            return !c.stopping
        }
        if first { try? wake.first.sendAll([1]) }
    }

    var isStopping: Bool { control.withLock { $0.stopping } }

    /// Hands the replies of work done off the loop (a worker's lookups, a
    /// download) to the loop, waking it when it had nothing waiting.
    func complete(_ completion: Completion) {
        let wasEmpty = control.withLock { c in
            defer { c.completions.append(completion) }
            return c.completions.isEmpty
        }
        if wasEmpty { try? wake.first.sendAll([0]) }
    }

    /// The completions waiting, taken out.
    func takeCompletions() -> [Completion] {
        control.withLock { c in
            defer { c.completions.removeAll(keepingCapacity: true) }
            return c.completions
        }
    }

    /// Makes the listener and the wake-up socket non-blocking, for the loop.
    func makeNonBlocking() throws(Errno) {
        try listener.descriptor.setNonBlocking()
        try wake.second.descriptor.setNonBlocking()
    }

    /// The listening socket's and the wake-up socket's descriptor numbers.
    var listenerNumber: Int32 { listener.descriptor.rawValue }
    var wakeNumber: Int32 { wake.second.descriptor.rawValue }

    /// Drains the wake-up socket (non-blocking).
    func drainWake() {
        var scratch = [UInt8](repeating: 0, count: 64)
        while true {
            let n = scratch.withUnsafeMutableBytes { b in (try? wake.second.receive(into: b).count) ?? 0 }
            if n < scratch.count { return }
        }
    }

    /// Accepts one connection, when one waits. `nil` when none does (or
    /// the accept failed); out of descriptors, answers it on the reserve.
    func acceptOne() -> UnixSocket? {
        do throws(Errno) {
            return try listener.accept()
        } catch where error == .tooManyOpenFiles || error == .tooManyOpenFilesInSystem {
            // Out of descriptors: close the reserve to accept the connection,
            // tell it so, and take the reserve back. Without a reserve (not
            // yet back), or when even its number is past the limit, pause
            // instead of spinning on a listener that stays readable.
            let answered = reserve.withLock { (reserve: inout FileDescriptor?) -> Bool in
                guard reserve != nil else {
                    reserve = try? FileDescriptor.open("/dev/null")
                    return false
                }
                reserve = nil
                defer { reserve = try? FileDescriptor.open("/dev/null") }
                do throws(Errno) {
                    let socket = try listener.accept()
                    refuse(socket, .daemonBusy, "the daemon is out of file descriptors; try again")
                    return true
                } catch {
                    return false
                }
            }
            let limit = "out of file descriptors (\(error.message), ulimit -n \(Self.descriptorLimit()))"
            if answered {
                logs.log(.descriptors, "\(limit): a connection was told to try again")
            } else {
                logs.log(.descriptors, "\(limit): connections wait to be accepted")
                Monotonic.sleep(0.01)
            }
            return nil
        } catch {
            return nil
        }
    }

    /// Whether the peer may use the daemon; refuses (and logs) it when not.
    func allows(_ socket: borrowing UnixSocket, _ peer: UnixSocket.Credentials) -> Bool {
        guard peer.uid == uid || configuration.allowedUIDs.contains(peer.uid) || configuration.allowedGIDs.contains(peer.gid) else {
            logs.log(.refused, "refused pid \(peer.pid): uid \(peer.uid) gid \(peer.gid) is not allowed")
            refuse(socket, .peerNotAllowed, "uid \(peer.uid) (gid \(peer.gid)) is not allowed to use this daemon")
            return false
        }
        return true
    }

    /// Answers a connection that will not be served (before it is made
    /// non-blocking); the caller then closes it.
    func refuse(_ socket: borrowing UnixSocket, _ code: AssetPackError.Code, _ message: String) {
        try? socket.setTimeouts(milliseconds: 100)
        try? socket.sendAll(DaemonReply.failure(code, message: message))
    }
}
