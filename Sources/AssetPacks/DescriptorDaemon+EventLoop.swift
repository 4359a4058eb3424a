import Foundation
import AssetSystem
import AssetStore

extension DescriptorDaemon {
    /// The daemon's one serving thread: an epoll loop (level-triggered) over
    /// the listener, the wake-up socket and every connection, all of them
    /// non-blocking.
    ///
    /// Each readable connection is read into one buffer of the loop's, and
    /// every whole request in it is answered in order. A stored member's
    /// descriptor, and every error of a lookup, is answered on the loop
    /// itself (an index lookup and the connection's shared description of
    /// the archive or a spare descriptor, no waiting); a request that
    /// needs a memory file goes to a worker (``Workers``), a download request
    /// to a thread of its own, and the connection reads nothing more until
    /// their replies are back (``Completion``) — so replies keep the order of
    /// the requests, however many a client pipelines. A reply the socket has
    /// no room for waits in the connection, which is then watched for
    /// writing instead of reading. Timeouts are deadlines the loop's wait
    /// is bounded by; an idle connection costs a descriptor and a few
    /// hundred bytes, no thread and no buffer.
    ///
    /// The loop and its state belong to its one thread: its properties
    /// skip the run-time exclusivity check, as ``Connection``'s do.
    final class EventLoop {
        private let daemon: DescriptorDaemon
        private let epoll: Epoll
        @exclusivity(unchecked) private var open: [Int32: Connection] = [:]
        /// Open connections by id, for the completions.
        @exclusivity(unchecked) private var byID: [Int: Connection] = [:]
        @exclusivity(unchecked) private var perUser: [UInt32: Int] = [:]
        @exclusivity(unchecked) private var nextID = 0
        /// Where received bytes land before they are answered or kept.
        @exclusivity(unchecked) private var scratch: [UInt8]
        /// Where a run of replies that pass no descriptor is gathered, to
        /// go out in one `sendmsg`.
        @exclusivity(unchecked) private var gathered: [UInt8] = []
        /// The events of one wait.
        @exclusivity(unchecked) private var ready = Epoll.Ready()
        /// The earliest ``Connection/deadline``, or later: when to look.
        @exclusivity(unchecked) private var nextSweep = Double.infinity
        /// Archives whose spares ran low while answering: refilled once the replies are sent.
        @exclusivity(unchecked) private var refills: [ArchiveID] = []
        /// When to look next whether another process's commit unlinked an
        /// archive the daemon holds (``releaseUnlinked(_:)``): from the first
        /// request on, every ``releaseInterval``.
        @exclusivity(unchecked) private var nextRelease = Double.infinity
        /// The commit of the index that look last saw.
        @exclusivity(unchecked) private var releasedAt = -1
        /// How many more shared descriptions (``SharedDescriptions``) the
        /// connections may keep, within the daemon's descriptor room.
        @exclusivity(unchecked) private var sharedRoom: Int
        private let configuration: Configuration

        init(daemon: DescriptorDaemon) throws(Errno) {
            self.daemon = daemon
            self.configuration = daemon.configuration
            sharedRoom = daemon.sharedCapacity
            epoll = try Epoll()
            scratch = [UInt8](repeating: 0, count: 64 * 1024)
            try daemon.makeNonBlocking()
            try epoll.add(daemon.listenerNumber, .readable)
            try epoll.add(daemon.wakeNumber, .readable)
        }

        /// Serves until the daemon stops.
        func run() {
            let listener = daemon.listenerNumber, wake = daemon.wakeNumber
            while !daemon.isStopping {
                let now = Monotonic.now
                if nextSweep <= now { sweep(now) }
                if nextRelease <= now { releaseUnlinked(now) }
                let next = min(nextSweep, nextRelease)
                let count: Int
                do { count = try epoll.wait(timeout: next == .infinity ? nil : max(0, next - Monotonic.now), into: &ready) } catch {
                    configuration.log?("epoll_wait: \(error)")
                    return
                }
                for i in 0..<count {
                    let event = ready.event(i)
                    if event.descriptor == wake {
                        daemon.drainWake()
                        for completion in daemon.takeCompletions() { finish(completion) }
                    } else if event.descriptor == listener {
                        acceptWaiting()
                    } else if let c = open[event.descriptor] {
                        serve(c, event.events)
                    }
                }
                if count > 0 && nextRelease == .infinity { nextRelease = Monotonic.now + Self.releaseInterval }
            }
        }

        /// How often the loop looks for archives that another process's
        /// commit unlinked, once it has served a request.
        static let releaseInterval = 2.0

        /// When the index has a commit the daemon has not looked at, lets go
        /// of what it holds of archives that no installed pack names any
        /// more — another process updated or removed the pack, and unlinks
        /// the file: its mappings, its spare descriptors, and the
        /// connections' shared descriptions (whose slots are then free; a
        /// client that keeps descriptions holds its copy until its slot is
        /// used again). Otherwise an idle daemon would keep such a file
        /// open, and its disk space taken, until it stopped.
        private func releaseUnlinked(_ now: Double) {
            nextRelease = now + Self.releaseInterval
            let store = daemon.manager.store
            let commit = store.lastCommit
            guard commit != releasedAt else { return }
            var held = Set(daemon.spares.held)
            for c in open.values { held.formUnion(c.shared.archives) }
            guard let gone = store.releaseReplacedArchives(checking: held) else { return }
            releasedAt = commit
            guard !gone.isEmpty else { return }
            daemon.spares.close(where: gone.contains)
            for c in open.values where !c.shared.isEmpty {
                sharedRoom += c.shared.removeAll(where: gone.contains)
            }
        }

        /// Closes every connection (on stop).
        func closeAll() {
            for c in Array(open.values) { close(c) }
        }

        // MARK: Connections coming and going

        private func acceptWaiting() {
            // A bounded number per wake-up, so that a flood of connections
            // does not keep the loop from the others.
            for _ in 0..<64 {
                guard let socket = daemon.acceptOne() else { return }
                admit(socket)
            }
        }

        /// Checks a new connection's peer (`SO_PEERCRED`, the only time) and
        /// room for it, and starts watching it.
        private func admit(_ socket: consuming UnixSocket) {
            guard let peer = try? socket.peerCredentials(), daemon.allows(socket, peer) else { return }
            if let busy = makeRoom(for: peer.uid) {
                daemon.logs.log(.busy, "busy: uid \(peer.uid) pid \(peer.pid) refused: \(busy)")
                daemon.refuse(socket, .daemonBusy, busy + "; try again")
                return
            }
            guard (try? socket.descriptor.setNonBlocking()) != nil else { return }
            nextID += 1
            let c = Connection(socket: socket, id: nextID, uid: peer.uid, firstDeadline: Monotonic.now + configuration.firstRequestTimeout)
            guard (try? epoll.add(c.number, .readable)) != nil else { return }
            open[c.number] = c
            byID[c.id] = c
            perUser[c.uid, default: 0] += 1
            refresh(c)
        }

        /// Makes room for a connection of `uid`: past the user's limit its
        /// oldest idle connection closes, past the daemon's the oldest idle
        /// one of anyone's. Returns why there is none when none is idle.
        private func makeRoom(for uid: UInt32) -> String? {
            let mine = perUser[uid, default: 0]
            if mine >= configuration.maximumConnectionsPerUser {
                guard evictOldestIdle(where: { $0.uid == uid }) else { return "uid \(uid) already has \(mine) connections under way" }
            } else if open.count >= daemon.maximumConnections {
                guard evictOldestIdle(where: { _ in true }) else { return "the daemon is serving \(open.count) connections" }
            }
            return nil
        }

        /// Closes the connection idle longest among `candidates` with nothing
        /// waiting in its socket (not a request that has arrived but that
        /// the loop has not read yet).
        private func evictOldestIdle(where candidate: (Connection) -> Bool) -> Bool {
            let idle = open.values.filter { $0.isIdle && candidate($0) }.sorted { $0.idleSince! < $1.idleSince! }
            guard let victim = idle.first(where: { (try? Poll.readable([$0.number], timeout: 0).isEmpty) == true }) else { return false }
            close(victim)
            return true
        }

        private func close(_ c: Connection) {
            guard open.removeValue(forKey: c.number) != nil else { return }
            byID.removeValue(forKey: c.id)
            perUser[c.uid, default: 1] -= 1
            if perUser[c.uid] == 0 { perUser.removeValue(forKey: c.uid) }
            if !c.hungUp { try? epoll.remove(c.number) }
            daemon.memoryFiles.release(c.given, of: c.uid)
            c.given = []
            sharedRoom += c.shared.removeAll()
            // The descriptor closes when the last reference, this one, goes.
        }

        // MARK: Serving

        private func serve(_ c: Connection, _ events: Epoll.Events) {
            if c.atWork {
                // Hung up while a request is at work: stop watching (a hung-up
                // socket stays ready), close when its replies are back.
                if !events.isDisjoint(with: [.hangUp, .error]) {
                    try? epoll.remove(c.number)
                    c.hungUp = true
                }
                return
            }
            if events.contains(.writable) || !c.output.isEmpty {
                guard flush(c) else { return close(c) }
            }
            if c.output.isEmpty && !c.closing && !c.ended && !events.isDisjoint(with: [.readable, .hangUp, .error]) {
                guard receive(c) else { return close(c) }
            }
            advance(c)
        }

        /// Reads what the socket holds (once: the loop is level-triggered).
        /// Returns `false` when the connection must close at once.
        private func receive(_ c: Connection) -> Bool {
            let received = scratch.withUnsafeMutableBytes { b in
                Result { () throws(Errno) -> (Int, Bool) in
                    // A descriptor a client sent is closed at once (it leaves scope here).
                    let r = try c.socket.receive(into: b)
                    return (r.count, r.descriptor != nil)
                }
            }
            switch received {
            case .failure(let error):
                return error == .wouldBlock
            case .success(let (count, carriedDescriptor)):
                if carriedDescriptor {
                    send(c, DaemonReply.failure(.malformedRequest, message: "requests carry no descriptors"))
                    c.input = []
                    c.closing = true
                    return true
                }
                if count == 0 {
                    // End of stream: answer what came whole, then close.
                    c.ended = true
                    return true
                }
                if c.input.isEmpty && c.idleSince != nil {
                    c.idleSince = nil
                }
                c.input.append(contentsOf: scratch[..<count])
                return true
            }
        }

        /// Answers the whole requests of `c`'s input, in order, until one
        /// goes off the loop or a reply has to wait for room; then sets its
        /// watch and deadline.
        private func advance(_ c: Connection) {
            var used = 0
            while !c.atWork && c.output.isEmpty && !c.closing {
                var length = 0
                let next = c.input.withUnsafeBytes { b in DescriptorDaemon.parse(UnsafeRawBufferPointer(rebasing: b[used...]), consumed: &length) }
                guard let parsed = next else { break }
                used += length
                c.firstDeadline = nil
                c.requestDeadline = nil
                switch parsed {
                case .refused(let status, let message):
                    send(c, DaemonReply.failure(status, message: message))
                    used = c.input.count
                    c.closing = true
                case .answer(let bytes):
                    send(c, bytes)
                case .request(let request):
                    if let reply = daemon.answerAtOnce(request, of: c, room: &sharedRoom, refills: &refills) { send(c, reply) } else { hand([request], of: c) }
                case .batch(let batch):
                    // The members' lookups first, then their replies in one
                    // burst: the client is not woken for each in between.
                    var members = batch.members[...]
                    var replies: [Outgoing] = []
                    while let first = members.first, let reply = daemon.answerAtOnce(first, of: c, room: &sharedRoom, refills: &refills) {
                        replies.append(reply)
                        members = members.dropFirst()
                    }
                    send(c, replies)
                    if !members.isEmpty { hand(Array(members), of: c) }
                case .download(let request):
                    download(request, of: c)
                }
            }
            if !refills.isEmpty {
                daemon.refill(refills)
                refills.removeAll(keepingCapacity: true)
            }
            if used > 0 {
                if used >= c.input.count {
                    c.input.removeAll(keepingCapacity: c.input.capacity <= 1024)
                } else {
                    c.input.removeSubrange(..<used)
                }
            }
            // After a refusal, or at the peer's end of stream once the
            // requests that came whole are answered (one cut short is not).
            if (c.closing || c.ended) && !c.atWork && c.output.isEmpty { return close(c) }
            refresh(c)
        }

        /// Sends `bytes` (or queues them behind replies still waiting).
        private func send(_ c: Connection, _ bytes: [UInt8]) { send(c, Outgoing(bytes)) }

        private func send(_ c: Connection, _ reply: Outgoing) {
            let waiting = !c.output.isEmpty
            c.output.append(reply)
            if !waiting { flushOrClose(c) }
        }

        /// Sends `replies` in order (or queues them behind replies still waiting).
        private func send(_ c: Connection, _ replies: [Outgoing]) {
            guard !replies.isEmpty else { return }
            let waiting = !c.output.isEmpty
            c.output += replies
            if !waiting { flushOrClose(c) }
        }

        /// Flushes replies just queued; a connection that broke is closed
        /// once the loop is done with it.
        private func flushOrClose(_ c: Connection) {
            guard !flush(c) else { return }
            c.output = []
            c.closing = true
            c.input = []
        }

        /// Replies gathered into one `sendmsg` at most: what a client's
        /// socket takes at once anyway.
        static let gatherLimit = 16 * 1024

        /// Sends the replies waiting, as far as the socket takes them.
        /// Returns `false` when the connection broke.
        ///
        /// A run of whole replies that pass no descriptor (a batch's, to a
        /// client that keeps its shared descriptions) goes out in one
        /// `sendmsg`, not one each. A reply that passes one goes alone, so
        /// that its descriptor comes with its own first byte; a client
        /// reads replies one by one, and reads the next after it.
        private func flush(_ c: Connection) -> Bool {
            while let head = c.output.first {
                let result: Result<Int, Errno>
                if c.sent == 0, head.passing == nil, c.output.count > 1, c.output[1].passing == nil {
                    gatherRun(of: c)
                    result = gathered.withUnsafeBytes { b in Result { () throws(Errno) -> Int in try c.socket.send(b) } }
                } else {
                    let passing = c.sent == 0 ? head.passing : nil
                    result = head.withUnsafeBytes { b in
                        Result { () throws(Errno) -> Int in try c.socket.send(UnsafeRawBufferPointer(rebasing: b[c.sent...]), passing: passing) }
                    }
                }
                switch result {
                case .success(let n):
                    drop(n, sentOf: c)
                case .failure(let error):
                    if error == .wouldBlock {
                        if c.outputDeadline == nil { c.outputDeadline = Monotonic.now + configuration.requestTimeout }
                        return true
                    }
                    configuration.log?("connection \(c.id): \(error)")
                    return false
                }
            }
            c.outputDeadline = nil
            return true
        }

        /// Copies the run of whole replies without a descriptor at the head
        /// of `c`'s output into ``gathered`` (at least one, at most
        /// ``gatherLimit`` bytes beyond it).
        private func gatherRun(of c: Connection) {
            gathered.removeAll(keepingCapacity: true)
            for reply in c.output {
                guard reply.passing == nil, gathered.count + reply.count <= Self.gatherLimit || gathered.isEmpty else { break }
                reply.withUnsafeBytes { gathered.append(contentsOf: $0) }
            }
        }

        /// Drops the replies `count` bytes sent from the head of `c`'s output
        /// finished; a reply sent in part stays at the head, ``Connection/sent``
        /// bytes of it gone.
        private func drop(_ count: Int, sentOf c: Connection) {
            var n = count
            while n > 0, let head = c.output.first {
                let rest = head.count - c.sent
                guard n >= rest else {
                    c.sent += n
                    return
                }
                n -= rest
                c.output.removeFirst()
                c.sent = 0
            }
        }

        /// Gives `requests` to a worker; their replies come back in order.
        private func hand(_ requests: [DaemonRequest], of c: Connection) {
            c.atWork = true
            let daemon = self.daemon
            let (id, uid, given) = (c.id, c.uid, c.given)
            daemon.workers.submit {
                var given = given
                let replies = requests.map { daemon.answer($0, uid: uid, given: &given) }
                daemon.complete(Completion(connection: id, replies: replies, given: given))
            }
        }

        /// Answers a download request on a thread of its own: with wait it
        /// may take minutes, and must hold no worker meanwhile.
        private func download(_ request: DaemonDownloadRequest, of c: Connection) {
            c.atWork = true
            let daemon = self.daemon
            let (id, uid, given) = (c.id, c.uid, c.given)
            let thread = Thread {
                let reply = daemon.downloads.answer(request, uid: uid)
                daemon.complete(Completion(connection: id, replies: [Outgoing(reply)], given: given))
            }
            thread.name = "assetpack-daemon-download-request"
            thread.start()
        }

        /// Sends the replies of work done off the loop, and goes on with
        /// the connection's input.
        private func finish(_ completion: Completion) {
            guard let c = byID[completion.connection] else {
                // Closed on stop meanwhile; what it was handed is released.
                return
            }
            c.atWork = false
            c.given = completion.given
            if c.hungUp { return close(c) }
            send(c, completion.replies)
            advance(c)
        }

        // MARK: Watching and deadlines

        /// Sets what epoll watches `c` for, and its deadline.
        private func refresh(_ c: Connection) {
            let now = Monotonic.now
            let wanted: Epoll.Events
            if c.atWork {
                wanted = []
                c.deadline = .infinity
            } else if !c.output.isEmpty {
                wanted = .writable
                c.deadline = c.outputDeadline ?? (now + configuration.requestTimeout)
            } else if !c.input.isEmpty {
                // A request has begun and must arrive whole.
                wanted = .readable
                c.idleSince = nil
                if c.requestDeadline == nil { c.requestDeadline = now + configuration.requestTimeout }
                c.deadline = min(c.requestDeadline!, c.firstDeadline ?? .infinity)
            } else {
                wanted = .readable
                if c.idleSince == nil { c.idleSince = now }
                c.deadline = min(c.idleSince! + configuration.idleTimeout, c.firstDeadline ?? .infinity)
            }
            if wanted != c.watching, !c.hungUp {
                try? epoll.modify(c.number, wanted)
                c.watching = wanted
            }
            if c.deadline < nextSweep { nextSweep = c.deadline }
        }

        /// Closes the connections whose deadline has passed: a request cut
        /// short is told so first; a silent or idle one closes without a word.
        private func sweep(_ now: Double) {
            var next = Double.infinity
            for c in Array(open.values) {
                if c.deadline <= now {
                    if !c.output.isEmpty {
                        daemon.logs.log(.unread, "closed a connection of uid \(c.uid) that left its replies unread for \(configuration.requestTimeout) s")
                    } else if !c.input.isEmpty {
                        c.output = []
                        send(c, DaemonReply.failure(.malformedRequest, message: "the request did not arrive whole in time"))
                    }
                    close(c)
                } else {
                    next = min(next, c.deadline)
                }
            }
            nextSweep = next
        }
    }
}
