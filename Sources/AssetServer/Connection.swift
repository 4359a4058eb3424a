import AssetSystem

/// One client connection and where it is in its exchange. Owned and driven
/// by the event loop (``HTTPServer``) alone, on its thread.
final class Connection {
    enum Phase {
        /// Reading a request head (or waiting, kept alive, for the next).
        case reading
        /// Sending a response; blocked on the socket buffer when not done.
        case writing
        /// Throttled: the next body bytes may go at ``Connection/wakeAt``.
        case waiting
        /// `--stall-after` reached: nothing more is sent; input is discarded
        /// until the client closes or the server stops.
        case stalled
        /// The last response is sent and the sending side shut: input is
        /// discarded until the client closes, or for a short while.
        case lingering
    }

    /// What the access log says about the exchange in progress.
    struct Exchange {
        var requestLine = "-"
        var status = 0
        var note: String?
        var startedWall: Int64 = 0
        var started: ContinuousClock.Instant
    }

    let socket: FileDescriptor
    let remote: String
    var input: [UInt8] = []
    var phase = Phase.reading
    /// The events the loop watches for it, as last registered.
    var interest: Syscall.Events = .readable
    var closed = false

    /// When the current wait for a request began (accept, or the last response's end).
    var readingSince: ContinuousClock.Instant
    /// When the first byte of the pending request arrived.
    var requestStart: ContinuousClock.Instant?
    var servedRequests = 0

    // The response being sent.
    var head: [UInt8] = []
    var headSent = 0
    var body = Response.Body.none
    var sendsBody = true
    var bodyOffset: Int64 = 0
    var bodySent: Int64 = 0
    var bodyRemaining: Int64 = 0
    var closesAfter = false
    var faultable = false
    var bodyStarted: ContinuousClock.Instant?
    var lastProgress: ContinuousClock.Instant
    var wakeAt: ContinuousClock.Instant?
    var lingerUntil: ContinuousClock.Instant?
    var exchange: Exchange

    init(socket: consuming FileDescriptor, remote: String, now: ContinuousClock.Instant) {
        self.socket = socket
        self.remote = remote
        readingSince = now
        lastProgress = now
        exchange = Exchange(started: now)
    }

    var fd: Int32 { socket.rawValue }

    /// Takes `response` as the one to send now, for a request (or refusal)
    /// whose log line is `requestLine`.
    func begin(_ response: Response, requestLine: String, sendsBody: Bool, keepAlive: Bool,
               now: ContinuousClock.Instant, wall: Int64) {
        head = response.head(date: wall, keepAlive: keepAlive)
        headSent = 0
        body = response.body
        self.sendsBody = sendsBody
        bodySent = 0
        switch response.body {
        case .file(_, let offset, let length): (bodyOffset, bodyRemaining) = (offset, length)
        case .bytes(let b): (bodyOffset, bodyRemaining) = (0, Int64(b.count))
        case .none: (bodyOffset, bodyRemaining) = (0, 0)
        }
        if !sendsBody { bodyRemaining = 0 }
        closesAfter = !keepAlive
        faultable = response.faultable
        bodyStarted = nil
        wakeAt = nil
        lastProgress = now
        phase = .writing
        exchange = Exchange(requestLine: requestLine, status: response.status, note: response.note,
                            startedWall: wall, started: requestStart ?? now)
    }

    /// Back to reading after a response, for the next request on the connection.
    func resetForNextRequest(now: ContinuousClock.Instant) {
        servedRequests += 1
        head = []
        body = .none
        phase = .reading
        readingSince = now
        requestStart = input.isEmpty ? nil : now
    }

    /// The first line of the input, made printable, for logging a refused request.
    var firstInputLine: String {
        let line = input.prefix(200).prefix { $0 != 0x0A && $0 != 0x0D }
        let printable = line.map { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 ? $0 : UInt8(ascii: "?") }
        return printable.isEmpty ? "-" : String(decoding: printable, as: UTF8.self)
    }
}
