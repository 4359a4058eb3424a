import AssetSystem
#if canImport(Glibc)
import Glibc
#endif

/// The clock's part of the loop: request, idle and linger timeouts, and
/// throttled connections waking up.
extension HTTPServer {
    /// Closes connections past their deadlines, wakes throttled ones, and
    /// sets when to look again.
    func sweep(_ now: ContinuousClock.Instant) {
        var next = now + .milliseconds(250)
        if let paused = acceptPausedUntil {
            if paused <= now {
                try? Syscall.epollControl(epoll.rawValue, .modify, listener.rawValue, .readable)
                acceptPausedUntil = nil
            } else {
                next = min(next, paused)
            }
        }
        for c in Array(connections.values) {
            guard let deadline = deadline(c) else { continue }
            if deadline > now {
                next = min(next, deadline)
                continue
            }
            expire(c, now)
            if !c.closed, let again = self.deadline(c) { next = min(next, again) }
        }
        nextSweep = next
    }

    private func deadline(_ c: Connection) -> ContinuousClock.Instant? {
        switch c.phase {
        case .reading:
            if let start = c.requestStart { return start + Self.duration(configuration.requestTimeout) }
            let timeout = c.servedRequests == 0 ? configuration.requestTimeout : configuration.idleTimeout
            return c.readingSince + Self.duration(timeout)
        case .writing: return c.lastProgress + Self.duration(configuration.idleTimeout)
        case .waiting: return c.wakeAt
        case .lingering: return c.lingerUntil
        case .stalled: return nil
        }
    }

    private func expire(_ c: Connection, _ now: ContinuousClock.Instant) {
        switch c.phase {
        case .reading:
            if c.requestStart != nil {
                // A head begun and not finished in time: say so, and close.
                let response = Response.error(408, closes: true)
                let wall = Int64(time(nil))
                c.begin(response, requestLine: c.firstInputLine, sendsBody: true, keepAlive: false, now: now, wall: wall)
                _ = try? Syscall.send(c.fd, response.wholeBytes(date: wall, keepAlive: false)[...])
                log(c, note: "request timeout")
            }
            // Logged already: closed as a connection that sends nothing more.
            c.phase = .lingering
            close(c, note: nil)
        case .writing:
            close(c, note: "send timeout")
        case .waiting:
            c.phase = .writing
            drive(c, now)
        case .lingering:
            close(c, note: nil)
        case .stalled:
            break
        }
    }
}
