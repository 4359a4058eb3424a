import Synchronization
import AssetSystem
import AssetStore

/// Asks the container's descriptor daemon (``DescriptorDaemon``, `assetpack
/// daemon`) for asset descriptors, for a process that does not open the
/// container itself — it may not even be allowed to read it.
///
/// The API mirrors ``AssetPackManager/descriptor(for:searchingInAssetPackWithID:options:)``
/// and reports the same ``AssetPackError`` codes (`.assetPackNotFound`,
/// `.fileNotFound`, `.ambiguousPath`, …), plus `.daemonUnavailable` when no
/// daemon answers and a refusal code (`.peerNotAllowed`, `.daemonBusy`, …) when it refuses.
///
/// A client keeps one connection and reuses it for every request; threads
/// sharing a client take turns. ``descriptors(for:searchingInAssetPackWithID:options:)``
/// asks for many members in one round trip. When the daemon has closed the
/// connection (it restarted, or the connection sat idle), the next request
/// reconnects once by itself.
public final class AssetPackClient: Sendable {
    /// The daemon's socket.
    public let socketPath: String
    /// Seconds to wait for the daemon to take a request or to answer.
    public let timeout: Double

    /// One connection to the daemon, and the shared descriptions it has
    /// been passed to keep (``DaemonProtocol/keepFlag``), by slot: they
    /// belong to the connection, and go with it.
    private final class Connection: @unchecked Sendable {
        let socket: UnixSocket
        /// Slot `n` at `n - 1`. Touched only under the client's lock.
        private var kept: [KeptDescription?] = Array(repeating: nil, count: DaemonProtocol.keptSlots)

        init(_ socket: consuming UnixSocket) { self.socket = socket }

        /// Keeps `descriptor` in `slot` (closing what was there) and returns
        /// a new descriptor of it for the caller.
        func keep(_ descriptor: consuming FileDescriptor, in slot: Int) throws(Errno) -> FileDescriptor {
            let description = KeptDescription(descriptor)
            kept[slot - 1] = description
            return try description.descriptor.duplicate()
        }

        /// A new descriptor of the description kept in `slot`, its position
        /// set to `offset`; `nil` when the slot holds none.
        func reuse(_ slot: Int, at offset: Int64) throws(Errno) -> FileDescriptor? {
            guard let description = kept[slot - 1] else { return nil }
            let fd = try description.descriptor.duplicate()
            try fd.seek(to: offset)
            return fd
        }
    }

    private final class KeptDescription {
        let descriptor: FileDescriptor
        init(_ descriptor: consuming FileDescriptor) { self.descriptor = descriptor }
    }

    private struct State {
        var connection: Connection?
        var buffer = [UInt8](repeating: 0, count: DaemonProtocol.headerSize + DaemonProtocol.maximumReplyBody)
        /// The daemon answered a batch as an unknown kind: ask member by member.
        var batchesUnsupported = false
        /// The daemon refused the shared-position flag (it predates it):
        /// every descriptor is then a new open description.
        var sharedUnsupported = false
        /// The daemon refused the keep flag (it predates it): shared
        /// descriptions are passed with every reply.
        var keepUnsupported = false

        /// The flags of a shared request that this daemon is sent, of the
        /// shared-position and keep flags.
        func sent(shared: Bool) -> (shared: Bool, keeps: Bool) {
            (shared && !sharedUnsupported, shared && !sharedUnsupported && !keepUnsupported)
        }

        /// `request` as it goes to this daemon: without the flags it refused.
        func sending(_ request: [UInt8], shared: Bool) -> [UInt8] {
            let sent = sent(shared: shared)
            let refused = (shared && !sent.shared ? DaemonProtocol.sharedFlag : 0) | (shared && !sent.keeps ? DaemonProtocol.keepFlag : 0)
            return refused == 0 ? request : DaemonProtocol.without(refused, in: request)
        }

        /// Whether `error`, the answer to a request sent with `asked`
        /// flags, is a daemon's that predates the newest of them ("unknown
        /// flags 6" or "unknown flags 2", then it closes the connection):
        /// only such a daemon refuses a request this client makes as
        /// malformed. Then that flag is not sent to it again, and the
        /// connection is dropped, to ask once more.
        mutating func refusedFlags(_ error: AssetPackError, asked: (shared: Bool, keeps: Bool)) -> Bool {
            guard error.code == .malformedRequest, asked.shared else { return false }
            if asked.keeps { keepUnsupported = true } else { sharedUnsupported = true }
            connection = nil
            return true
        }
    }

    private let state = Mutex(State())

    /// A client of the daemon at `socketPath`; it connects on first use.
    public init(socketPath: String, timeout: Double = 10) {
        self.socketPath = socketPath
        self.timeout = timeout
    }

    /// Connects to the daemon serving `container`.
    ///
    /// - Throws: `.daemonUnavailable` when no daemon listens there
    ///   (`ENOENT`, `ECONNREFUSED`) or the socket cannot be reached (`EACCES`).
    public static func connect(container: AssetPackManager.Container = .default(), timeout: Double = 10) throws(AssetPackError) -> AssetPackClient {
        let client = AssetPackClient(socketPath: container.daemonSocketPath, timeout: timeout)
        let connection = try client.open()
        client.state.withLock { $0.connection = connection }
        return client
    }

    /// A read-only descriptor of the member at `path`, in pack `id` or in
    /// whichever installed pack holds it, from the daemon. As
    /// ``AssetPackManager/descriptor(for:searchingInAssetPackWithID:options:)``:
    /// a stored member comes as the archive with offset and length, a
    /// deflated one (or any with `.standalone`) as a sealed memory file.
    /// As in this process, a stored member's descriptor shares its open
    /// description — and so its file position — with this client's other
    /// descriptors of the same archive, unless `options` has `.ownOffset`
    /// (the daemon keeps one description per archive for the connection, so
    /// that a handout opens nothing, and passes it once: this client keeps
    /// a copy, at most 4 per connection, and makes later handouts of that
    /// archive from it; its position is set to the member's start when it
    /// is handed out: read with `pread` at the offset). No
    /// other process shares it. With `.ownOffset`, from a daemon that
    /// predates shared positions, and for memory files, the descriptor is a
    /// new open description with a file position of its own.
    ///
    /// - Throws: the store's errors as the daemon met them
    ///   (`.assetPackNotFound`, `.fileNotFound`, `.ambiguousPath`,
    ///   `.invalidPackID`, …; `.system` and `.index` name the daemon's
    ///   operation); a refusal code when the daemon refuses the request or
    ///   this process (`.daemonBusy` when it has no room, or when this
    ///   user's connections hold its memory-file budget); `.daemonUnavailable` when it cannot be reached, the
    ///   connection breaks, it does not answer within ``timeout``, or its
    ///   reply breaks the protocol (`EPROTO`).
    public func descriptor(
        for path: String, searchingInAssetPackWithID id: String? = nil, options: AssetDescriptor.Options = []
    ) throws(AssetPackError) -> AssetDescriptor {
        let wantsShared = !options.contains(.ownOffset)
        let request = DaemonRequest(pack: id, path: path, standalone: options.contains(.standalone), shared: wantsShared, keeps: wantsShared).encoded
        guard request.count - DaemonProtocol.headerSize <= DaemonProtocol.maximumRequestBody else {
            throw AssetPackError(.requestTooLarge, member: path, path: socketPath, message: "a request for '\(path)' is longer than the \(DaemonProtocol.maximumRequestBody) bytes the daemon reads")
        }
        return try exchanging { (state, connection) throws(AssetPackError) -> Exchanged<AssetDescriptor> in
            let asked = state.sent(shared: wantsShared)
            let reply = send(state.sending(request, shared: wantsShared), on: connection.socket, buffer: &state.buffer)
            switch outcome(of: reply, buffer: state.buffer, on: connection, keeps: asked.keeps) {
            case .descriptor(let d): return .done(AssetDescriptor(d))
            case .failure(let error):
                if state.refusedFlags(error, asked: asked) { return .again }
                throw error
            case .closedBeforeReply(let e): return .closedBeforeReply(e)
            case .broken(let e): return .broken(e)
            }
        }
    }

    /// How one exchange on a connection ended.
    private enum Exchanged<T> {
        case done(T)
        /// Ask again on a new connection (the request changed with the state).
        case again
        /// The connection ended before any byte of the reply.
        case closedBeforeReply(Errno)
        /// A timeout, a broken reply, or an end in the middle of one.
        case broken(Errno)
    }

    /// Runs `body` on the client's connection (made when there is none),
    /// holding the lock; when the daemon had closed a connection this client
    /// used before (it restarted, or closed it as idle) before any byte of
    /// the reply, once more on a new one, since requests are idempotent.
    /// An error `body` throws is the daemon's answer, and keeps the connection.
    private func exchanging<T>(
        _ body: (inout State, Connection) throws(AssetPackError) -> Exchanged<T>
    ) throws(AssetPackError) -> T {
        try state.withLock { (state) throws(AssetPackError) -> T in
            var reconnected = false
            while true {
                let fresh = state.connection == nil
                let connection: Connection
                if let open = state.connection { connection = open } else { connection = try open() }
                state.connection = connection
                switch try body(&state, connection) {
                case .done(let value):
                    return value
                case .again:
                    continue
                case .closedBeforeReply(let e):
                    state.connection = nil
                    if !fresh && !reconnected {
                        reconnected = true
                        continue
                    }
                    throw .unavailable(socketPath, e)
                case .broken(let e):
                    state.connection = nil
                    throw .unavailable(socketPath, e)
                }
            }
        }
    }

    /// Read-only descriptors of several members, in pack `id` or each in
    /// whichever installed pack holds it, from the daemon in as few round
    /// trips as it takes: batches of up to 64 members (``DaemonBatchRequest``),
    /// or one request per member from a daemon that predates batches.
    ///
    /// - Returns: one result per path, in order: the descriptor, or the
    ///   error ``descriptor(for:searchingInAssetPackWithID:options:)`` would
    ///   have thrown for that member alone (`.fileNotFound` for one does
    ///   not keep the others from coming).
    /// - Throws: `.daemonUnavailable` when the daemon cannot be reached, the
    ///   connection breaks or a reply breaks the protocol; a refusal of
    ///   the daemon's (`.peerNotAllowed`, `.daemonBusy` for the connection)
    ///   when it refuses this process before answering.
    public func descriptors(
        for paths: [String], searchingInAssetPackWithID id: String? = nil, options: AssetDescriptor.Options = []
    ) throws(AssetPackError) -> [Result<AssetDescriptor, AssetPackError>] {
        let standalone = options.contains(.standalone)
        let shared = !options.contains(.ownOffset)
        var results: [Result<AssetDescriptor, AssetPackError>] = []
        results.reserveCapacity(paths.count)
        var chunk: [String] = []
        var chunkBody = (id?.utf8.count ?? 0) + 2
        func flush() throws(AssetPackError) {
            guard !chunk.isEmpty else { return }
            results += try batch(DaemonBatchRequest(pack: id, paths: chunk, standalone: standalone, shared: shared, keeps: shared))
            chunk = []
            chunkBody = (id?.utf8.count ?? 0) + 2
        }
        for path in paths {
            let size = 2 + path.utf8.count
            if (id?.utf8.count ?? 0) + 2 + size > DaemonProtocol.maximumRequestBody || path.utf8.count > Int(UInt16.max) {
                try flush()
                // Too long for any batch: as a request of its own, refused here.
                results.append(Result { () throws(AssetPackError) in try descriptor(for: path, searchingInAssetPackWithID: id, options: options) })
                continue
            }
            if chunk.count == DaemonProtocol.maximumBatch || chunkBody + size > DaemonProtocol.maximumRequestBody { try flush() }
            chunk.append(path)
            chunkBody += size
        }
        try flush()
        return results
    }

    /// The replies to one batch, whose members fit one request.
    private func batch(_ request: DaemonBatchRequest) throws(AssetPackError) -> [Result<AssetDescriptor, AssetPackError>] {
        if state.withLock({ $0.batchesUnsupported }) { return try singly(request) }
        let bytes = request.encoded
        let answered = try exchanging { (state, connection) throws(AssetPackError) -> Exchanged<[Result<AssetDescriptor, AssetPackError>]?> in
            var results: [Result<AssetDescriptor, AssetPackError>] = []
            let asked = state.sent(shared: request.shared)
            var reply = send(state.sending(bytes, shared: request.shared), on: connection.socket, buffer: &state.buffer, exactly: true)
            while true {
                switch outcome(of: reply, buffer: state.buffer, on: connection, keeps: asked.keeps) {
                case .descriptor(let d):
                    results.append(.success(AssetDescriptor(d)))
                case .failure(let error):
                    // A daemon that predates a flag may know batches: the
                    // batch once more without it, before member by member.
                    if results.isEmpty && state.refusedFlags(error, asked: asked) { return .again }
                    if results.isEmpty && (error.code == .malformedRequest || error.code == .requestTooLarge) {
                        // The batch refused whole: by a daemon that predates
                        // batches ("unknown request kind 3"), which then
                        // closes the connection, or as malformed. Member by member.
                        state.connection = nil
                        state.batchesUnsupported = error.code == .malformedRequest
                        return .done(nil)
                    }
                    results.append(.failure(error))
                case .closedBeforeReply(let e):
                    return results.isEmpty ? .closedBeforeReply(e) : .broken(e)
                case .broken(let e):
                    return .broken(e)
                }
                if results.count == request.paths.count { return .done(results) }
                reply = receive(on: connection.socket, buffer: &state.buffer, exactly: true)
            }
        }
        if let answered { return answered }
        return try singly(request)
    }

    /// A batch's members asked for one by one.
    private func singly(_ request: DaemonBatchRequest) throws(AssetPackError) -> [Result<AssetDescriptor, AssetPackError>] {
        var options: AssetDescriptor.Options = request.standalone ? .standalone : []
        if !request.shared { options.insert(.ownOffset) }
        var results: [Result<AssetDescriptor, AssetPackError>] = []
        for path in request.paths {
            do {
                results.append(.success(try descriptor(for: path, searchingInAssetPackWithID: request.pack, options: options)))
            } catch where error.code == .daemonUnavailable {
                throw error
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    private func open() throws(AssetPackError) -> Connection {
        do {
            let socket = try UnixSocket.connect(to: socketPath)
            try socket.setTimeouts(milliseconds: max(1, Int(timeout * 1000)))
            return Connection(socket)
        } catch {
            throw .unavailable(socketPath, error.with(operation: "connect"))
        }
    }

    private enum Outcome: ~Copyable {
        case descriptor(MemberDescriptor)
        /// The daemon answered with an error.
        case failure(AssetPackError)
        /// The connection ended before any byte of the reply.
        case closedBeforeReply(Errno)
        /// A timeout, a broken reply, or an end in the middle of one.
        case broken(Errno)
    }

    /// What a descriptor request's reply on `connection` says; `keeps`:
    /// whether the request asked the daemon to name kept descriptions.
    private func outcome(of reply: consuming Reply, buffer: [UInt8], on connection: Connection, keeps: Bool) -> Outcome {
        switch consume reply {
        case .closedBeforeReply(let e): return .closedBeforeReply(e)
        case .broken(let e): return .broken(e)
        case .reply(let status, let needed, var descriptor):
            let body = { (b: UnsafeRawBufferPointer) in UnsafeRawBufferPointer(rebasing: b[DaemonProtocol.headerSize..<needed]) }
            if status == DaemonProtocol.success {
                let p: DaemonReply.Placement
                switch buffer.withUnsafeBytes({ DaemonReply.placement(body($0), keeps: keeps) }) {
                case .failure(let v): return .broken(Self.violation(v.what))
                case .success(let placement): p = placement
                }
                let fd: FileDescriptor
                do throws(Errno) {
                    if p.reuse {
                        guard descriptor == nil else { return .broken(Self.violation("a descriptor with a reply that reuses kept slot \(p.slot)")) }
                        guard let kept = try connection.reuse(p.slot, at: p.offset) else {
                            return .broken(Self.violation("a reuse of kept slot \(p.slot), which holds nothing"))
                        }
                        fd = kept
                    } else {
                        guard let passed = descriptor.take() else { return .broken(Self.violation("a success without a descriptor")) }
                        fd = p.slot == 0 ? passed : try connection.keep(passed, in: p.slot)
                    }
                } catch {
                    return .failure(AssetPackError(.system, path: socketPath, systemError: error.rawValue,
                                                   message: "descriptor daemon at \(socketPath): cannot duplicate a kept descriptor: \(error.message)"))
                }
                return .descriptor(MemberDescriptor(descriptor: fd, offset: p.offset, length: p.length, source: p.source, crc32: p.crc32))
            }
            guard descriptor == nil else { return .broken(Self.violation("a failure with a descriptor")) }
            switch buffer.withUnsafeBytes({ DaemonReply.error(status: status, body: body($0), socket: socketPath) }) {
            case .failure(let v): return .broken(Self.violation(v.what))
            case .success(let error): return .failure(error)
            }
        }
    }

    /// A reply as it arrived: its status, where its body ends in the
    /// buffer, and the descriptor that came with it.
    enum Reply: ~Copyable {
        case reply(status: UInt16, end: Int, descriptor: FileDescriptor?)
        /// The connection ended before any byte of the reply.
        case closedBeforeReply(Errno)
        /// A timeout, a broken header, or an end in the middle of a reply.
        case broken(Errno)
    }

    /// Sends `request` and reads one reply's header and body into `buffer`.
    func send(_ request: [UInt8], on socket: borrowing UnixSocket, buffer: inout [UInt8], exactly: Bool = false) -> Reply {
        do throws(Errno) {
            try socket.sendAll(request)
        } catch {
            // A daemon that closed the connection may have said why first
            // (a refusal); read on, and an empty stream means it did not.
            guard error == .brokenPipe || error == .connectionReset else {
                return .broken(error.with(operation: "send request"))
            }
        }
        return receive(on: socket, buffer: &buffer, exactly: exactly)
    }

    /// Reads one reply's header and body into `buffer`. With `exactly`, never
    /// past its end (more replies follow: pipelined requests, a batch);
    /// without, in as few reads as it takes (nothing else is on the way).
    func receive(on socket: borrowing UnixSocket, buffer: inout [UInt8], exactly: Bool = false) -> Reply {
        var filled = 0
        var descriptor: FileDescriptor?
        var needed = DaemonProtocol.headerSize
        var status: UInt16 = 0
        var parsedHeader = false
        while true {
            while filled < needed {
                let start = filled
                do throws(Errno) {
                    let (count, raw) = try buffer.withUnsafeMutableBytes { b in
                        Result { () throws(Errno) -> (Int, Int32) in
                            var r = try socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: exactly ? b[start..<needed] : b[start...]))
                            return (r.count, r.descriptor.take()?.take() ?? -1)
                        }
                    }.get()
                    if raw >= 0 {
                        let fd = FileDescriptor(adopting: raw)
                        guard descriptor == nil else { return .broken(Self.violation("two descriptors in one reply")) }
                        descriptor = consume fd
                    }
                    if count == 0 {
                        return filled == 0 ? .closedBeforeReply(Errno(Errno.connectionReset.rawValue, operation: "read reply: the daemon closed the connection"))
                                           : .broken(Self.violation("the reply ended after \(filled) bytes"))
                    }
                    filled += count
                } catch {
                    if filled == 0 && error == .connectionReset { return .closedBeforeReply(error.with(operation: "read reply")) }
                    return .broken(error.with(operation: error == .wouldBlock ? "read reply: no answer within \(timeout) s" : "read reply"))
                }
            }
            if parsedHeader { break }
            let header = buffer.withUnsafeBytes { DaemonReply.parseHeader(UnsafeRawBufferPointer(rebasing: $0[..<DaemonProtocol.headerSize])) }
            switch header {
            case .failure(let v): return .broken(Self.violation(v.what))
            case .success(let h):
                status = h.status
                needed = DaemonProtocol.headerSize + h.length
                parsedHeader = true
            }
            guard filled <= needed else { return .broken(Self.violation("more bytes than one reply")) }
        }
        guard filled == needed else { return .broken(Self.violation("more bytes than one reply")) }
        return .reply(status: status, end: needed, descriptor: descriptor.take())
    }

    static func violation(_ what: String) -> Errno {
        Errno(Errno.protocolError.rawValue, operation: "read reply: the daemon sent \(what)")
    }
}

extension AssetPackError {
    /// The daemon at `socket` cannot be reached, or the connection broke.
    static func unavailable(_ socket: String, _ e: Errno) -> AssetPackError {
        let what = e.operation.isEmpty ? e.message : "\(e.operation): \(e.message)"
        return AssetPackError(.daemonUnavailable, path: socket, systemError: e.rawValue,
                              message: "descriptor daemon at \(socket) is unavailable: \(what)")
    }
}
