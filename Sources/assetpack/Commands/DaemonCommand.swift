import Dispatch
import AssetPacks
#if canImport(Glibc)
import Glibc
#endif

/// `assetpack daemon`: serves descriptors of installed members over the
/// container's Unix socket until SIGTERM or SIGINT.
enum DaemonCommand: Command {
    static let name = "daemon"
    static let summary = "Serve member descriptors and run background downloads over <container>/daemon.sock."
    static let discussion = """
        Runs in the foreground; SIGTERM or SIGINT stops it and removes the socket. A socket left by a \
        daemon that was killed is replaced; a second daemon on a container that one already serves exits \
        with an error. Clients: 'assetpack cat --daemon', or AssetPackClient from Swift. \
        It is also the container's background download agent: while it runs, 'fetch', 'sync' and \
        ensureLocalAvailability hand their downloads to it and wait for the result; the download goes on \
        if the caller exits, and callers asking for one pack share one download. 'sync --background' \
        leaves the prefetch packs to it. Without a daemon the callers download themselves; if it dies \
        mid-download, the caller resumes the download from the journal. \
        Every user it admits (its own, --allow-uid, --allow-gid) gets descriptors; it downloads for a user \
        other than its own only from a catalog source its own user configured ('assetpack sources add URL \
        --key PUB'), and refuses anything else (requestNotPermitted, 70). \
        Under systemd socket activation (LISTEN_PID is the daemon, LISTEN_FDS at least 1) it serves the \
        listening socket passed as descriptor 3 and leaves its file to the socket unit; contrib/systemd \
        has user units.
        """

    static let socketGroup = Option.value(
        "socket-group", placeholder: "group",
        help: "Give the socket this group (name or number) and mode 0660, so the group's members can reach it (default: mode 0600, or 0666 with --allow-uid or --allow-gid, the daemon then checking each peer).",
        completion: .group)
    static let allowUID = Option.value(
        "allow-uid", placeholder: "user",
        help: "Also serve this user (name or number). The daemon's own user is always served.",
        repeatable: true, completion: .user)
    static let allowGID = Option.value(
        "allow-gid", placeholder: "group",
        help: "Also serve users whose primary group is this (name or number).",
        repeatable: true, completion: .group)
    static let firstRequestTimeout = Option.value(
        "first-request-timeout", placeholder: "seconds",
        help: "Close a new connection that has not sent a whole request within this many seconds (default: 5).")
    static let requestTimeout = Option.value(
        "request-timeout", placeholder: "seconds",
        help: "Close a connection whose request does not arrive whole within this many seconds (default: 2).")
    static let idleTimeout = Option.value(
        "idle-timeout", placeholder: "seconds",
        help: "Close a connection idle this long between requests (default: 300).")
    static let maxConnections = Option.value(
        "max-connections", placeholder: "n",
        help: "Connections served at once (an idle one costs a descriptor, no thread), at most what ulimit -n leaves room for once the daemon has raised its soft limit as far as the hard one allows; past it the oldest idle connection is closed, or, with none idle, the new one is told to retry (default: 256).")
    static let maxConnectionsPerUser = Option.value(
        "max-connections-per-user", placeholder: "n",
        help: "Connections one user may hold at once; past it that user's oldest idle connection is closed, or the new one is told to retry (default: 128).")
    static let memoryCache = Option.value(
        "memory-cache", placeholder: "bytes",
        help: "Keep up to this many bytes of inflated members to hand out again, one shared memory file per member (suffix K, M, G or T; default: 1G).")
    static let memoryBudget = Option.value(
        "memory-budget", placeholder: "bytes",
        help: "Memory files one user may hold through its open connections, in distinct bytes; past it requests are refused as busy (suffix K, M, G or T; default: 1G).")

    static let maxDownloads = Option.value(
        "max-downloads", placeholder: "n",
        help: "Downloads run at once for clients; the others wait, discretionary ones last (default: 2).")

    static let options = [socketGroup, allowUID, allowGID, firstRequestTimeout, requestTimeout, idleTimeout, maxConnections,
                          maxConnectionsPerUser, memoryCache, memoryBudget, maxDownloads]
        + CatalogOptions.deadlineOptions + CatalogCacheOptions.options + CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        var configuration = DescriptorDaemon.Configuration()
        if let group = arguments.value(socketGroup) { configuration.socketGroup = try groupID(group) }
        for user in arguments.values(allowUID) { configuration.allowedUIDs.insert(try userID(user)) }
        for group in arguments.values(allowGID) { configuration.allowedGIDs.insert(try groupID(group)) }
        if let t = try arguments.number(firstRequestTimeout) {
            guard t > 0 else { throw .usage("'--first-request-timeout' must be more than 0") }
            configuration.firstRequestTimeout = t
        }
        if let t = try arguments.number(requestTimeout) {
            guard t > 0 else { throw .usage("'--request-timeout' must be more than 0") }
            configuration.requestTimeout = t
        }
        if let t = try arguments.number(idleTimeout) {
            guard t > 0 else { throw .usage("'--idle-timeout' must be more than 0") }
            configuration.idleTimeout = t
        }
        if let n = try arguments.number(maxConnections) {
            guard n >= 1, n == n.rounded() else { throw .usage("'--max-connections' needs a whole number of at least 1") }
            configuration.maximumConnections = Int(n)
        }
        if let n = try arguments.number(maxConnectionsPerUser) {
            guard n >= 1, n == n.rounded() else { throw .usage("'--max-connections-per-user' needs a whole number of at least 1") }
            configuration.maximumConnectionsPerUser = Int(n)
        }
        if let n = try arguments.number(maxDownloads) {
            guard n >= 1, n == n.rounded(), n <= 1024 else { throw .usage("'--max-downloads' needs a whole number from 1 to 1024") }
            configuration.maximumDownloads = Int(n)
        }
        configuration.downloadDeadlines = try CatalogOptions.deadlines(arguments)
        // The daemon counts memory in Int64.
        let most = UInt64(Int64.max)
        if let n = try arguments.byteCount(memoryCache, maximum: most) { configuration.memoryCacheBytes = Int64(n) }
        if let n = try arguments.byteCount(memoryBudget, maximum: most) { configuration.memoryBudgetPerUser = Int64(n) }
        configuration.log = { line in Output.error("assetpack daemon: \(line)") }
        configuration.acceptsSocketActivation = true

        var options = AssetPackManager.Options(lockTimeout: try StoreOptions.lockTimeout(arguments))
        try CatalogCacheOptions.apply(arguments, to: &options)
        let manager: AssetPackManager
        do { manager = try AssetPackManager(container: StoreOptions.container(arguments), options: options) } catch { throw .from(error) }
        let daemon: DescriptorDaemon
        do { daemon = try DescriptorDaemon(manager: manager, configuration: configuration) } catch { throw .from(error) }

        let signals = TerminationSignals { daemon.stop() }
        Output.error("assetpack daemon: serving \(daemon.socketPath) (pid \(getpid())\(daemon.isSocketActivated ? ", socket from systemd" : ""))")
        daemon.run()
        withExtendedLifetime(signals) {}
        Output.error("assetpack daemon: stopped")
        return ExitCode.success
    }

    /// A user name or number.
    static func userID(_ text: String) throws(CLIError) -> UInt32 {
        if let n = UInt32(text) { return n }
        guard let entry = getpwnam(text) else { throw .usage("no user '\(text)'") }
        return entry.pointee.pw_uid
    }

    /// A group name or number.
    static func groupID(_ text: String) throws(CLIError) -> UInt32 {
        if let n = UInt32(text) { return n }
        guard let entry = getgrnam(text) else { throw .usage("no group '\(text)'") }
        return entry.pointee.gr_gid
    }
}
