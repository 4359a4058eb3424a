import Foundation
import Testing
@testable import AssetPacks
import AssetSystem
import TestSupport

/// The daemon's event loop: requests pipelined on one connection, batch
/// requests, crowds of idle connections that hold no thread, and clients
/// that stall in the middle of a request or never read their replies.
///
/// Every wait is for a condition with a generous deadline; nothing here
/// measures speed.
@Suite(.serialized)
struct DaemonEventLoopTests {
    typealias Daemon = DaemonTests.Daemon
    typealias RawClient = DaemonTests.RawClient

    func setUp(_ s: TemporaryDirectory) throws -> AssetPackManager { try DaemonTests().setUp(s) }

    /// One reply as it came: status, body, and the descriptor with it.
    final class Reply {
        let status: UInt16
        let body: [UInt8]
        let descriptor: FileDescriptor?
        var hasDescriptor: Bool { descriptor != nil }

        init(status: UInt16, body: [UInt8], descriptor: consuming FileDescriptor?) {
            self.status = status
            self.body = body
            self.descriptor = descriptor
        }

        /// A success's member length (bytes 8–15 of its body).
        var length: Int64 {
            body[8..<16].reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        }
    }

    /// Reads exactly one reply from `socket`; `nil` at end of stream.
    static func readReply(_ socket: borrowing UnixSocket) throws -> Reply? {
        var header: [UInt8] = []
        var descriptor: FileDescriptor?
        while header.count < 16 {
            var m = try socket.receive(upTo: 16 - header.count)
            if m.bytes.isEmpty { return nil }
            if let fd = m.descriptor.take() { descriptor = consume fd }
            header += m.bytes
        }
        #expect(Array(header[0..<4]) == Array("APDR".utf8))
        let length = Int(header[8]) | Int(header[9]) << 8 | Int(header[10]) << 16 | Int(header[11]) << 24
        var body: [UInt8] = []
        while body.count < length {
            let m = try socket.receive(upTo: length - body.count)
            if m.bytes.isEmpty { return nil }
            body += m.bytes
        }
        return Reply(status: UInt16(header[6]) | UInt16(header[7]) << 8, body: body, descriptor: descriptor.take())
    }

    /// The size `make-packs` gives `tiny/tNNN`.
    static func tinySize(_ i: Int) -> Int64 { Int64(16 + i % 48) }

    @Test(.timeLimit(.minutes(3))) func pipelinedRequestsAreAnsweredInOrder() throws {
        let s = TemporaryDirectory("assetpack-daemon-pipeline")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container)
        let raw = try RawClient(manager.container.daemonSocketPath)
        // A hundred requests sent before any reply is read: stored members,
        // a deflated one (answered by a worker) every tenth, and a path no
        // pack has every seventh.
        var expected: [(status: UInt16, length: Int64)] = []
        var requests: [UInt8] = []
        for i in 0..<100 {
            if i % 7 == 3 {
                requests += DaemonRequest(pack: "stress", path: "no/such-\(i)").encoded
                expected.append((2, 0))
            } else if i % 10 == 5 {
                requests += DaemonRequest(pack: "stress", path: "text/a.txt").encoded
                expected.append((0, 50_000))
            } else {
                requests += DaemonRequest(pack: "stress", path: String(format: "tiny/t%03d", i)).encoded
                expected.append((0, Self.tinySize(i)))
            }
        }
        try raw.socket.sendAll(requests)
        for (i, want) in expected.enumerated() {
            guard let reply = try Self.readReply(raw.socket) else {
                Issue.record("the connection ended before reply \(i)")
                break
            }
            #expect(reply.status == want.status, "reply \(i)")
            #expect(reply.hasDescriptor == (want.status == 0), "reply \(i)")
            if want.status == 0 { #expect(reply.length == want.length, "reply \(i)") }
        }
        // The end of the stream after pipelined requests: they are answered, then the connection closes.
        let closing = try RawClient(manager.container.daemonSocketPath)
        try closing.socket.sendAll(DaemonRequest(pack: "stress", path: "tiny/t001").encoded + DaemonRequest(pack: "stress", path: "tiny/t002").encoded)
        try closing.socket.shutdownWriting()
        #expect(try Self.readReply(closing.socket)?.length == Self.tinySize(1))
        #expect(try Self.readReply(closing.socket)?.length == Self.tinySize(2))
        #expect(try closing.isClosed())
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(3))) func aBatchAnswersEachMemberInOrder() throws {
        let s = TemporaryDirectory("assetpack-daemon-batch")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container)
        let client = try AssetPackClient.connect(container: manager.container)
        // A missing member in the middle is that member's error; the others come.
        var paths = (0..<20).map { String(format: "tiny/t%03d", $0) }
        paths[7] = "no/such"
        paths[12] = "text/a.txt"
        let results = try client.descriptors(for: paths, searchingInAssetPackWithID: "stress")
        #expect(results.count == 20)
        for (path, result) in zip(paths, results) {
            switch result {
            case .success(let d):
                #expect(try d.data() == manager.contents(at: path, searchingInAssetPackWithID: "stress"), "\(path)")
            case .failure(let error):
                #expect(path == "no/such" && error.code == .fileNotFound && error.member == "no/such" && error.pack == "stress", "\(error)")
            }
        }
        // More than one batch holds, and standalone.
        let many = (0..<150).map { String(format: "tiny/t%03d", $0 % 100) }
        let all = try client.descriptors(for: many, searchingInAssetPackWithID: "stress", options: .standalone)
        #expect(all.count == 150)
        for (i, result) in all.enumerated() {
            let d = try result.get()
            #expect(d.source == .memory && d.offset == 0 && d.length == Self.tinySize(i % 100), "\(i)")
        }
        // A path-only search: each member in whichever pack has it.
        let searched = try client.descriptors(for: ["only/v1.txt", "tiny/t001", "no/such"])
        #expect(try searched[0].get().data() == manager.contents(at: "only/v1.txt", searchingInAssetPackWithID: "stress"))
        #expect(throws: AssetPackError.self) { try searched[1].get() }
        if case .failure(let e) = searched[1] { #expect(e.code == .ambiguousPath && e.packs.sorted() == ["other", "stress"], "\(e)") }
        if case .failure(let e) = searched[2] { #expect(e.code == .fileNotFound && e.pack == nil, "\(e)") } else { Issue.record("no/such was found") }
        // The same client's single requests go on on the same connection.
        #expect(try client.descriptor(for: "tiny/t001", searchingInAssetPackWithID: "stress").length == 17)
        daemon.stop()
    }

    /// Batches to a client that keeps its shared descriptions: every reply
    /// after the first names the kept slot and passes nothing, so the
    /// daemon gathers a batch's replies into one `sendmsg`. Pipelined far
    /// past what the socket holds while the client does not read, they
    /// still arrive whole and in order (a gathered send the socket has no
    /// room for waits until it has).
    @Test(.timeLimit(.minutes(3))) func gatheredRepliesPastAFullSocketArriveWholeAndInOrder() throws {
        let s = TemporaryDirectory("assetpack-daemon-gathered")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container)
        defer { daemon.stop() }
        let raw = try RawClient(manager.container.daemonSocketPath)
        try raw.socket.sendAll(DaemonRequest(pack: "stress", path: "tiny/t000", shared: true, keeps: true).encoded)
        let first = try #require(try Self.readReply(raw.socket))
        #expect(first.status == 0 && first.hasDescriptor && first.body[25] == 1 && first.body[26] == 0)
        let batches = 200, size = DaemonProtocol.maximumBatch
        var requests: [UInt8] = []
        for b in 0 ..< batches {
            let paths = (0 ..< size).map { String(format: "tiny/t%03d", (b + $0) % 100) }
            requests += DaemonBatchRequest(pack: "stress", paths: paths, standalone: false, shared: true, keeps: true).encoded
        }
        // Sent from another thread: the daemon stops reading while its replies wait.
        let sending = DispatchSemaphore(value: 0)
        let sender = Thread { [requests, raw] in
            defer { sending.signal() }
            do { try raw.socket.sendAll(requests) } catch { Issue.record("sending the batches: \(error)") }
        }
        sender.start()
        Thread.sleep(forTimeInterval: 0.5)   // the socket fills meanwhile
        for b in 0 ..< batches {
            for i in 0 ..< size {
                guard let reply = try Self.readReply(raw.socket) else {
                    Issue.record("the connection ended at batch \(b), member \(i)")
                    return
                }
                #expect(reply.status == 0 && !reply.hasDescriptor && reply.body[25] == 1 && reply.body[26] == 1, "batch \(b), member \(i)")
                #expect(reply.length == Self.tinySize((b + i) % 100), "batch \(b), member \(i)")
            }
        }
        #expect(sending.wait(timeout: .now() + 30) == .success)
        #expect(try Poll.readable([raw.socket.descriptor.rawValue], timeout: 0).isEmpty)
    }

    @Test(.timeLimit(.minutes(3))) func batchesRefusedWholeLeaveTheConnectionServing() throws {
        let s = TemporaryDirectory("assetpack-daemon-batch-refused")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container)
        let raw = try RawClient(manager.container.daemonSocketPath)
        let single = DaemonRequest(pack: "stress", path: "tiny/t001").encoded
        func expectServing() throws {
            try raw.socket.sendAll(single)
            #expect(try Self.readReply(raw.socket)?.status == 0)
        }
        // 65 members: one reply, requestTooLarge, and no member replies.
        let tooMany = DaemonBatchRequest(pack: "stress", paths: (0..<65).map { String(format: "tiny/t%03d", $0) }, standalone: false)
        try raw.socket.sendAll(tooMany.encoded)
        let refusal = try Self.readReply(raw.socket)
        #expect(refusal?.status == 66 && refusal?.hasDescriptor == false)
        #expect(refusal.map { String(decoding: $0.body, as: UTF8.self).contains("a batch of 65 members exceeds the limit of 64") } == true)
        try expectServing()
        // 64 is the limit, and holds.
        let most = DaemonBatchRequest(pack: "stress", paths: (0..<64).map { String(format: "tiny/t%03d", $0) }, standalone: false)
        try raw.socket.sendAll(most.encoded)
        for i in 0..<64 { #expect(try Self.readReply(raw.socket)?.length == Self.tinySize(i)) }
        // No member; a member that runs past the body; bytes after the last;
        // a path that is not UTF-8: malformed, one reply each.
        let header = { (length: Int) in DaemonTests.header(kind: 3, length: UInt32(length), packLength: 6) }
        let bodies: [[UInt8]] = [
            Array("stress".utf8) + [0, 0],
            Array("stress".utf8) + [1, 0, 9, 0] + Array("tiny".utf8),
            Array("stress".utf8) + [1, 0, 4, 0] + Array("tiny".utf8) + [0],
            Array("stress".utf8) + [2, 0, 9, 0] + Array("tiny/t001".utf8) + [2, 0, 0xff, 0xfe],
        ]
        for body in bodies {
            try raw.socket.sendAll(header(body.count) + body)
            #expect(try Self.readReply(raw.socket)?.status == 65, "\(body)")
            try expectServing()
        }
        daemon.stop()
    }

    /// Many connections that send nothing hold no thread of the daemon's,
    /// and another client is served promptly meanwhile: 10,000, or as many
    /// as this process's hard `ulimit -n` allows (at least 1,000); 10,000
    /// without fail with `ASSETPACKS_SOAK=1`. Each takes a descriptor here
    /// and one in the daemon.
    @Test(.timeLimit(.minutes(4))) func idleConnectionsHoldNoThread() throws {
        let soak = ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1"
        let limit = DescriptorLimit.raise(to: 10_000 + 256) ?? 0
        let count = soak ? 10_000 : min(10_000, limit - 256)
        try #require(limit >= count + 256 && count >= 1_000, "ulimit -n allows \(limit) descriptors")
        let s = TemporaryDirectory("assetpack-daemon-idle-threads")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container, ["--max-connections", String(count + 8), "--max-connections-per-user", String(count + 8),
                                              "--first-request-timeout", "300"])
        let pid = daemon.child.pid
        let threadsBefore = try Self.threads(of: pid)
        let idle = try (0..<count).map { _ in try RawClient(manager.container.daemonSocketPath) }
        // Accepted (each holds a descriptor in the daemon)…
        #expect(eventually(timeout: 60) { ((try? Self.descriptors(of: pid)) ?? 0) >= count })
        // …and served nothing, and a working client is served.
        let client = try AssetPackClient.connect(container: manager.container, timeout: 30)
        for i in 0..<20 {
            #expect(try client.descriptor(for: String(format: "tiny/t%03d", i), searchingInAssetPackWithID: "stress").length == Self.tinySize(i))
        }
        let threads = try Self.threads(of: pid)
        // The loop, its workers (2 to 8), the command's signal handling: a
        // few, not one per connection.
        #expect(threads < 32, "\(threads) threads with \(count) connections, \(threadsBefore) before")
        // None of them was closed.
        #expect(try Poll.readable(idle.prefix(64).map { $0.socket.descriptor.rawValue }, timeout: 0).isEmpty)
        daemon.stop()
    }

    /// A client that sends half a request and stalls, and one that sends
    /// requests and never reads the replies: neither holds up another
    /// client; the first is told so after the request timeout, the second
    /// is closed once its replies have waited that long.
    @Test(.timeLimit(.minutes(3))) func stalledClientsDoNotBlockOthers() throws {
        let s = TemporaryDirectory("assetpack-daemon-stalled")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container, ["--request-timeout", "3"])
        let path = manager.container.daemonSocketPath
        let started = Date()
        let half = try RawClient(path)
        try half.socket.sendAll(Array(DaemonRequest(pack: "stress", path: "tiny/t001").encoded.prefix(10)))
        // Requests for 5,000 members' descriptors (185 kB, which the sockets
        // hold), not read meanwhile: the replies fill the socket (each holds
        // a descriptor), and the daemon has replies it cannot send.
        let deaf = try UnixSocket.connect(to: path)
        try deaf.setTimeouts(milliseconds: 30_000)
        let request = DaemonRequest(pack: "stress", path: "media/big.bin").encoded
        var flood: [UInt8] = []
        for _ in 0..<5_000 { flood += request }
        try deaf.sendAll(flood)
        let client = try AssetPackClient.connect(container: manager.container, timeout: 30)
        for i in 0..<50 {
            #expect(try client.descriptor(for: String(format: "tiny/t%03d", i), searchingInAssetPackWithID: "stress").length == Self.tinySize(i))
        }
        #expect(try Poll.readable([half.socket.descriptor.rawValue], timeout: 0).isEmpty)
        #expect(try half.replyStatus() == 65)
        #expect(Date().timeIntervalSince(started) >= 2.5)
        #expect(try half.isClosed())
        // The deaf client is given up once its replies waited 3 s; it gets
        // what fitted, then the end of the stream (a reset: the daemon closed
        // with requests of it unread).
        #expect(eventually(timeout: 30) { daemon.child.stderr.contains("left its replies unread for 3.0 s") }, "\(daemon.child.stderr)")
        var replies = 0
        do {
            while let reply = try Self.readReply(deaf) {
                #expect(reply.status == 0)
                replies += 1
            }
        } catch let error as Errno where error == .connectionReset {
        } catch {
            Issue.record("after \(replies) replies: \(error)")
        }
        #expect(replies > 0 && replies < 5_000, "\(replies)")
        #expect(try client.descriptor(for: "tiny/t001", searchingInAssetPackWithID: "stress").length == 17)
        daemon.stop()
    }

    static func threads(of pid: Int32) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count
    }

    static func descriptors(of pid: Int32) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }
}
