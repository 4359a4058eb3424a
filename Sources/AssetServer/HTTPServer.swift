import AssetSystem
#if canImport(Glibc)
import Glibc
#endif

/// The development HTTP/1.1 server of `assetpack serve`: one directory,
/// GET and HEAD, ranges and conditional requests, bounded in every
/// dimension, with fault injection.
///
/// One thread runs ``run()``: a single epoll loop over every connection,
/// files sent with `sendfile`. ``stopHandle`` ends it from any thread.
package final class HTTPServer {
    /// `http://127.0.0.1:PORT/`, `http://[::1]:PORT/`.
    package let url: String
    /// The port listened on (the one the kernel picked for port 0).
    package let port: Int
    let configuration: ServerConfiguration
    let listener: FileDescriptor
    let epoll: FileDescriptor
    let wake: FileDescriptor
    let responder: Responder
    var connections: [Int32: Connection] = [:]
    var acceptPausedUntil: ContinuousClock.Instant?
    var nextSweep: ContinuousClock.Instant
    let clock = ContinuousClock()
    /// Descriptors kept for the loop itself, beyond the connections.
    static let reservedDescriptors = 64

    /// Opens `directory` and listens as `configuration` says.
    ///
    /// - Throws: ``ServerError``: the directory cannot be opened, the address
    ///   is not numeric, the port is taken, the descriptor limit is too low
    ///   for `maximumConnections`.
    package init(directory: String, configuration: ServerConfiguration, allowOpenat2: Bool = true) throws(ServerError) {
        self.configuration = configuration
        let root = try DocumentRoot(path: directory, allowOpenat2: allowOpenat2)
        responder = Responder(root: root, faults: configuration.faults)
        let wanted = configuration.maximumConnections + Self.reservedDescriptors
        let available = Syscall.raiseDescriptorLimit(wanted)
        guard available >= wanted else {
            throw .tooManyConnections(asked: configuration.maximumConnections, available: available - Self.reservedDescriptors)
        }
        do {
            var bound = 0
            listener = try Syscall.listen(address: configuration.address, port: configuration.port, backlog: 4096, boundPort: &bound)
            port = bound
        } catch {
            if error == .invalidArgument { throw .invalidAddress(configuration.address) }
            throw .listen(address: configuration.address, port: configuration.port, error)
        }
        do {
            epoll = try Syscall.epollCreate()
            wake = try Syscall.eventfd()
            try Syscall.epollControl(epoll.rawValue, .add, listener.rawValue, .readable)
            try Syscall.epollControl(epoll.rawValue, .add, wake.rawValue, .readable)
        } catch {
            throw .system(error)
        }
        url = "http://\(Self.hostPort(configuration.address, port))/"
        nextSweep = clock.now
    }

    /// `host:port`, with the host in brackets when it is IPv6.
    package static func hostPort(_ address: String, _ port: Int) -> String {
        address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
    }

    /// Ends ``run()`` from any thread (a signal handler's queue, a test).
    package struct StopHandle: Sendable {
        let descriptor: Int32
        /// Asks the loop to stop; it closes every connection and returns.
        package func stop() { Syscall.signal(eventfd: descriptor) }
    }

    /// The handle that stops this server; valid while the server lives.
    package var stopHandle: StopHandle { StopHandle(descriptor: wake.rawValue) }

    /// Serves until ``StopHandle/stop()``, then closes every connection.
    ///
    /// - Throws: ``ServerError/system(_:)`` if `epoll_wait` fails.
    /// `sendfile` has no MSG_NOSIGNAL, so SIGPIPE is ignored while it runs:
    /// a client that goes away is an EPIPE, not the end of the process.
    package func run() throws(ServerError) {
        signal(SIGPIPE, SIG_IGN)
        defer { connections.removeAll() }
        while true {
            let now = clock.now
            let wait = max(0, min(250, milliseconds(nextSweep - now)))
            let ready: [(Int32, Syscall.Events)]
            do { ready = try Syscall.epollWait(epoll.rawValue, milliseconds: Int32(wait)) } catch { throw .system(error) }
            let after = clock.now
            for (fd, events) in ready {
                if fd == wake.rawValue { return }
                if fd == listener.rawValue {
                    acceptConnections(after)
                } else if let connection = connections[fd] {
                    handle(connection, events, after)
                }
            }
            if after >= nextSweep { sweep(after) }
        }
    }

    private func milliseconds(_ d: Duration) -> Int {
        let (s, atto) = d.components
        return Int(clamping: s) &* 1000 &+ Int(atto / 1_000_000_000_000_000) + (atto > 0 ? 1 : 0)
    }

    /// `seconds` as a duration, at most a year (a longer timeout is none).
    static func duration(_ seconds: Double) -> Duration {
        .milliseconds(Int64(min(max(seconds, 0), 365 * 86400) * 1000))
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }

    private func acceptConnections(_ now: ContinuousClock.Instant) {
        for _ in 0..<128 {
            let accepted: (fd: Int32, remote: String)?
            do { accepted = try Syscall.accept(listener.rawValue) } catch {
                // Out of descriptors: stop accepting for a moment rather than spin.
                configuration.log("accept: \(error.message); pausing for 100 ms")
                try? Syscall.epollControl(epoll.rawValue, .modify, listener.rawValue, [])
                acceptPausedUntil = now + .milliseconds(100)
                nextSweep = min(nextSweep, now + .milliseconds(100))
                return
            }
            guard let (fd, remote) = accepted else { return }
            let socket = FileDescriptor(adopting: fd)
            if connections.count >= configuration.maximumConnections, let oldest = oldestWaiting() {
                // Idle and half-sent heads give way to a new connection, so
                // that a flood of them cannot lock others out.
                close(oldest, note: nil)
            }
            if connections.count >= configuration.maximumConnections {
                let response = Response.error(503, closes: true, fields: [("Retry-After", "1")])
                _ = try? Syscall.send(socket.rawValue, response.wholeBytes(date: Int64(time(nil)), keepAlive: false)[...])
                Syscall.shutdownWrite(socket.rawValue)
                configuration.log("\(remote) - - [\(HTTPDate.logFormat(Int64(time(nil))))] \"-\" 503 0 0.000 connection-limit")
                continue
            }
            let connection = Connection(socket: socket, remote: remote, now: now)
            do { try Syscall.epollControl(epoll.rawValue, .add, connection.fd, .readable) } catch { continue }
            connections[connection.fd] = connection
            let deadline = now + Self.duration(configuration.requestTimeout)
            nextSweep = min(nextSweep, deadline)
        }
    }

    /// The connection that has waited longest for a request (idle, or with
    /// a head not yet whole), if any.
    private func oldestWaiting() -> Connection? {
        connections.values.filter { $0.phase == .reading }.min { $0.readingSince < $1.readingSince }
    }

    private func handle(_ c: Connection, _ events: Syscall.Events, _ now: ContinuousClock.Instant) {
        if !events.isDisjoint(with: [.error, .hangUp]) && !events.contains(.readable) {
            close(c, note: c.phase == .reading ? nil : "client closed")
            return
        }
        switch c.phase {
        case .reading:
            guard events.contains(.readable) else { return }
            let before = c.input.count
            if !readInput(c, now) { return }
            // A head ends with a line feed: without a new one there is
            // nothing to parse yet (a slow sender costs no re-parsing).
            if c.input[before...].contains(0x0A) || c.input.count >= configuration.headLimit { drive(c, now) }
        case .writing:
            drive(c, now)
        case .stalled, .lingering:
            discardInput(c)
        case .waiting:
            break
        }
    }

    /// Reads what is waiting, up to a little past the head limit. Returns
    /// false when the connection ended (and was closed).
    private func readInput(_ c: Connection, _ now: ContinuousClock.Instant) -> Bool {
        let cap = configuration.headLimit + 4096
        var buffer = [UInt8](repeating: 0, count: 16384)
        while c.input.count < cap {
            let n: Int?
            do { n = try Syscall.receive(c.fd, into: &buffer) } catch {
                close(c, note: nil)
                return false
            }
            guard let n else { break }
            if n == 0 {
                close(c, note: nil)
                return false
            }
            if c.input.isEmpty && c.requestStart == nil { c.requestStart = now }
            c.input += buffer[0..<n]
        }
        return true
    }

    private func discardInput(_ c: Connection) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n: Int?
            do { n = try Syscall.receive(c.fd, into: &buffer) } catch {
                close(c, note: nil)
                return
            }
            guard let n else { return }
            if n == 0 {
                close(c, note: nil)
                return
            }
        }
    }

    /// Moves the connection on as far as it can go now: requests parsed and
    /// answered, pipelined ones in order, until it waits for the socket, the
    /// client, or the clock.
    func drive(_ c: Connection, _ now: ContinuousClock.Instant) {
        while !c.closed {
            switch c.phase {
            case .reading:
                guard startNextResponse(c, now) else {
                    setInterest(c, .readable)
                    return
                }
            case .writing:
                pump(c, now)
                if c.phase != .reading { return }
            case .waiting, .stalled, .lingering:
                return
            }
        }
    }

    /// Parses the next request in the input and begins its response;
    /// false when no whole head is there yet.
    private func startNextResponse(_ c: Connection, _ now: ContinuousClock.Instant) -> Bool {
        let parsed = c.input.withUnsafeBytes { HTTPRequest.parse($0, limit: configuration.headLimit) }
        let wall = Int64(time(nil))
        switch parsed {
        case .incomplete:
            return false
        case .refused(let refusal):
            let line = c.firstInputLine
            c.input.removeAll()
            c.begin(responder.respond(to: refusal), requestLine: line, sendsBody: true, keepAlive: false, now: now, wall: wall)
        case .request(let request, let consumed):
            c.input.removeFirst(consumed)
            let response = responder.respond(to: request)
            let line = "\(request.method) \(request.target) \(request.version.rawValue)"
            c.begin(response, requestLine: line, sendsBody: request.method != "HEAD",
                    keepAlive: request.keepsAlive && !response.closes, now: now, wall: wall)
        }
        return true
    }

    /// Sends as much of the response as the socket, the throttle and the
    /// faults allow.
    private func pump(_ c: Connection, _ now: ContinuousClock.Instant) {
        let faults = configuration.faults
        // The body follows at once, unless a fault may hold it back: one
        // segment for a small response's head and body (MSG_MORE).
        let bodyFollows = c.bodyRemaining > 0
            && !(c.faultable && (faults.dropAfter != nil || faults.stallAfter != nil || faults.throttle != nil))
        while c.headSent < c.head.count {
            let sent: Int?
            do { sent = try Syscall.send(c.fd, c.head[c.headSent...], more: bodyFollows) } catch {
                close(c, note: "client closed")
                return
            }
            guard let sent else { return block(c) }
            c.headSent += sent
            c.lastProgress = now
        }
        while c.bodyRemaining > 0 {
            var budget = min(c.bodyRemaining, 1 << 20)
            if c.faultable {
                if let drop = faults.dropAfter {
                    if c.bodySent >= drop { return finish(c, now, note: "fault=drop", forceClose: true) }
                    budget = min(budget, drop - c.bodySent)
                }
                if let stall = faults.stallAfter {
                    if c.bodySent >= stall { return stallConnection(c) }
                    budget = min(budget, stall - c.bodySent)
                }
                if let rate = faults.throttle {
                    let started = c.bodyStarted ?? now
                    c.bodyStarted = started
                    let allowed = Int64(min(Double(rate) * Self.seconds(now - started), 9e18)) - c.bodySent
                    let step = min(max(1, rate / 50), budget)
                    if allowed < step {
                        let wake = started + .seconds(Double(c.bodySent + step) / Double(rate))
                        c.wakeAt = wake
                        c.phase = .waiting
                        setInterest(c, [])
                        nextSweep = min(nextSweep, wake)
                        return
                    }
                    budget = min(budget, allowed)
                }
            }
            let sent: Int?
            do { sent = try send(c, count: Int(budget)) } catch {
                close(c, note: "client closed")
                return
            }
            guard let sent else { return block(c) }
            if sent == 0 {
                close(c, note: "file shrank")
                return
            }
            c.bodySent += Int64(sent)
            c.bodyRemaining -= Int64(sent)
            c.lastProgress = now
        }
        finish(c, now, note: nil, forceClose: false)
    }

    private func send(_ c: Connection, count: Int) throws(Errno) -> Int? {
        switch c.body {
        case .file(let file, _, _):
            return try Syscall.sendfile(c.fd, file.descriptor.rawValue, offset: &c.bodyOffset, count: count)
        case .bytes(let bytes):
            let start = Int(c.bodyOffset)
            let sent = try Syscall.send(c.fd, bytes[start..<(start + count)])
            if let sent { c.bodyOffset += Int64(sent) }
            return sent
        case .none:
            return 0
        }
    }

    private func block(_ c: Connection) {
        c.phase = .writing
        setInterest(c, .writable)
    }

    private func stallConnection(_ c: Connection) {
        c.phase = .stalled
        log(c, note: "fault=stall")
        setInterest(c, .readable)
    }

    /// The response is done (or cut short by a fault): logs it, then keeps
    /// the connection for the next request or shuts it.
    private func finish(_ c: Connection, _ now: ContinuousClock.Instant, note: String?, forceClose: Bool) {
        log(c, note: note)
        if c.closesAfter || forceClose {
            Syscall.shutdownWrite(c.fd)
            c.phase = .lingering
            c.lingerUntil = now + .seconds(2)
            nextSweep = min(nextSweep, now + .seconds(2))
            setInterest(c, .readable)
        } else {
            c.resetForNextRequest(now: now)
            let timeout = c.input.isEmpty ? configuration.idleTimeout : configuration.requestTimeout
            nextSweep = min(nextSweep, now + Self.duration(timeout))
        }
    }

    func setInterest(_ c: Connection, _ events: Syscall.Events) {
        guard c.interest != events else { return }
        c.interest = events
        try? Syscall.epollControl(epoll.rawValue, .modify, c.fd, events)
    }

    /// One access-log line: remote, time, request line, status, body bytes
    /// sent, duration in seconds, and a note (a fault, why it ended).
    func log(_ c: Connection, note: String?) {
        let e = c.exchange
        let duration = Self.seconds(clock.now - e.started)
        let notes = [e.note, note].compactMap { $0 }.joined(separator: " ")
        let ms = Int((duration * 1000).rounded())
        let durationText = "\(ms / 1000).\(String(repeating: "0", count: 3 - String(ms % 1000).count))\(ms % 1000)"
        configuration.log("\(c.remote) - - [\(HTTPDate.logFormat(e.startedWall))] \"\(e.requestLine)\" \(e.status) \(c.bodySent) \(durationText)"
                          + (notes.isEmpty ? "" : " " + notes))
    }

    func close(_ c: Connection, note: String?) {
        if c.phase == .writing || c.phase == .waiting { log(c, note: note) }
        c.closed = true
        connections[c.fd] = nil
    }
}
