import Foundation
import Testing
import Synchronization
@testable import AssetPacks
import AssetSystem
import TestSupport

/// libassetpacks-client against a daemon that breaks the protocol, in a
/// thread of the test process: the C client (in its own process, see
/// ``DaemonClientCTests``) must refuse each reply with `EPROTO`, close every
/// descriptor that came with it, and agree with the Swift client.
@Suite(.serialized) struct DaemonClientFakeDaemonTests {
    /// What the fake daemon does on one connection, once it has read the request.
    enum Act: Sendable {
        /// Sends each piece with its own `sendmsg`, with the descriptor of
        /// the file at the path attached when one is given, then closes.
        case reply([(bytes: [UInt8], passing: String?)])
        /// Closes without a word.
        case close
        /// Says nothing until the client goes.
        case silence
    }

    /// Listens at `path` and serves one act per connection, in order.
    final class FakeDaemon: Sendable {
        private final class Listener: Sendable {
            let socket: UnixListener
            init(_ socket: consuming UnixListener) { self.socket = socket }
        }

        let path: String
        private let listener: Listener
        private let stopped = Atomic<Bool>(false)
        private let served = Atomic<Int>(0)
        private let seen = Mutex<[UInt16]>([])
        private let finished = DispatchSemaphore(value: 0)

        init(_ path: String, _ acts: [Act]) throws {
            self.path = path
            listener = Listener(try UnixListener(path: path))
            Thread { [self] in
                defer { finished.signal() }
                for act in acts { guard serveOne(act) else { return } }
            }.start()
        }

        /// How many connections it has served.
        var connections: Int { served.load(ordering: .acquiring) }

        /// The flags of each connection's request, in order.
        var flags: [UInt16] { seen.withLock { $0 } }

        /// Stops accepting and waits for the thread (it polls, so within a moment).
        func stop() {
            stopped.store(true, ordering: .releasing)
            #expect(finished.wait(timeout: .now() + 30) == .success, "the fake daemon did not stop")
        }

        private func serveOne(_ act: Act) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            let fd = listener.socket.descriptor.rawValue
            while (try? Poll.readable([fd], timeout: 0.05))?.isEmpty ?? true {
                if stopped.load(ordering: .acquiring) || Date() > deadline { return false }
            }
            do {
                serve(try accept(), act)
                return true
            } catch {
                return false
            }
        }

        private func accept() throws(Errno) -> UnixSocket {
            let connection = try listener.socket.accept()
            try connection.setTimeouts(milliseconds: 30_000)
            return connection
        }

        private func serve(_ connection: consuming UnixSocket, _ act: Act) {
            served.add(1, ordering: .releasing)
            // The whole request first, so that nothing is left unread at the close.
            guard let header = try? Self.read(16, from: connection), header.count == 16 else { return }
            seen.withLock { $0.append(UInt16(header[12]) | UInt16(header[13]) << 8) }
            let length = Int(header[8]) | Int(header[9]) << 8 | Int(header[10]) << 16 | Int(header[11]) << 24
            _ = try? Self.read(length, from: connection)
            switch act {
            case .reply(let pieces):
                for piece in pieces {
                    do {
                        if let path = piece.passing {
                            let file = try FileDescriptor.open(path)
                            try connection.sendAll(piece.bytes, passing: file.rawValue)
                        } else {
                            try connection.sendAll(piece.bytes)
                        }
                    } catch {
                        break
                    }
                }
            case .close:
                break
            case .silence:
                while !stopped.load(ordering: .acquiring) {
                    guard let count = try? connection.receive(upTo: 64).bytes.count, count > 0 else { break }
                }
            }
        }

        private static func read(_ count: Int, from socket: borrowing UnixSocket) throws -> [UInt8] {
            var got: [UInt8] = []
            while got.count < count {
                let m = try socket.receive(upTo: count - got.count)
                if m.bytes.isEmpty { break }
                got += m.bytes
            }
            return got
        }
    }

    static func replyHeader(magic: String = "APDR", version: UInt16 = 1, status: UInt16, length: Int) -> [UInt8] {
        var h = Array(magic.utf8)
        h.appendLittleEndian(version)
        h.appendLittleEndian(status)
        h.appendLittleEndian(UInt32(length))
        h.appendLittleEndian(UInt32(0))
        return h
    }

    static func successBody(offset: Int64 = 0, length: Int64 = 10, size: Int64 = 10, source: UInt8 = 0) -> [UInt8] {
        var b: [UInt8] = []
        for v in [offset, length, size] { b.appendLittleEndian(v) }
        b += [source, 0, 0, 0]
        b.appendLittleEndian(UInt32(0))
        return b
    }

    static func failureBody(_ fields: [[UInt8]], count: UInt16? = nil) -> [UInt8] {
        var b: [UInt8] = []
        b.appendLittleEndian(Int64(0))
        b.appendLittleEndian(count ?? UInt16(fields.count))
        for f in fields { b.appendLittleEndian(UInt16(f.count)); b += f }
        return b
    }

    /// One reply of header and body in one piece, with the file at `passing` attached.
    static func whole(status: UInt16, _ body: [UInt8], passing: String? = nil) -> Act {
        .reply([(replyHeader(status: status, length: body.count) + body, passing)])
    }

    @Test(.timeLimit(.minutes(4))) func malformedRepliesAreRefusedAndTheirDescriptorsClosed() throws {
        let b = try DaemonClientCTests.built.get()
        let s = TemporaryDirectory("assetpack-cclient-fake")
        let file = try s.write("file", [UInt8](repeating: 7, count: 100))
        let message = Array("no".utf8)
        let success = Self.successBody()
        let cases: [(what: String, act: Act)] = [
            ("bad magic", .reply([(Self.replyHeader(magic: "XXXX", status: 0, length: 32) + success, file)])),
            ("protocol version 2", .reply([(Self.replyHeader(version: 2, status: 0, length: 32) + success, file)])),
            ("a body of 65537 bytes", .reply([(Self.replyHeader(status: 2, length: 65537), nil)])),
            ("a success without a descriptor", Self.whole(status: 0, success)),
            ("a failure with a descriptor", Self.whole(status: 2, Self.failureBody([Array("p".utf8), message]), passing: file)),
            ("two descriptors in one reply", .reply([(Self.replyHeader(status: 0, length: 32), file), (success, file)])),
            ("a success body of 16 bytes", Self.whole(status: 0, Array(success.prefix(16)), passing: file)),
            ("a range 8+10 outside a file of 10 bytes", Self.whole(status: 0, Self.successBody(offset: 8), passing: file)),
            ("a descriptor source 2", Self.whole(status: 0, Self.successBody(source: 2), passing: file)),
            ("a field past the end", Self.whole(status: 1, Self.failureBody([message], count: 2))),
            ("a field past the end or not UTF-8", Self.whole(status: 1, Self.failureBody([[0xff], message]))),
            ("a field past the end or not UTF-8", Self.whole(status: 1, Self.failureBody([[0xed, 0xa0, 0x80], message]))),
            ("a failure without a message", Self.whole(status: 1, Self.failureBody([]))),
            ("a failure body of 4 bytes", Self.whole(status: 1, [0, 0, 0, 0])),
            ("status 2 with 0 fields", Self.whole(status: 2, Self.failureBody([message]))),
            ("status 4 with 2 fields", Self.whole(status: 4, Self.failureBody([Array("x".utf8), Array("r".utf8), message]))),
            ("status 16, which the daemon does not send", Self.whole(status: 16, Self.failureBody([message]))),
            ("the reply ended after 26 bytes", .reply([(Self.replyHeader(status: 0, length: 32) + success.prefix(10), file)])),
        ]
        for c in cases {
            // The C client, then the Swift client, each on a connection of its own.
            let fake = try FakeDaemon(s.file("fake.sock"), [c.act, c.act])
            defer { fake.stop(); unlink(fake.path) }
            let a = try DaemonClientCTests.get(b, ["--socket", fake.path], ["--pack", "p", "m"])
            #expect(a.rc == -23 && a.errno == EPROTO && a["status"] == "0" && a.fields.isEmpty, "\(c.what): \(a.values)")
            let prefix = "descriptor daemon at \(fake.path) is unavailable: read reply: the daemon sent \(c.what)"
            #expect(a["message"]?.hasPrefix(prefix) == true && a["message"]?.hasSuffix(": Protocol error") == true,
                    "\(c.what): \(a["message"] ?? "")")
            do {
                _ = try AssetPackClient(socketPath: fake.path).descriptor(for: "m", searchingInAssetPackWithID: "p")
                Issue.record("\(c.what): the Swift client accepted it")
            } catch {
                #expect(error.code == .daemonUnavailable && error.systemError == EPROTO, "\(c.what): \(error)")
                if !c.what.hasPrefix("a descriptor source") { #expect(error.message == a["message"], "\(c.what)") }
            }
        }
    }

    /// Replies mutated at random from valid ones (client-check's own server
    /// thread, so that 10,000 of them take a moment), under AddressSanitizer:
    /// each is a consistent success or one of the codes, never a crash, a
    /// leak, or a descriptor left open.
    @Test(.timeLimit(.minutes(4))) func randomlyBrokenRepliesNeverCrashOrLeak() throws {
        let b = try DaemonClientCTests.built.get()
        let s = TemporaryDirectory("assetpack-cclient-fuzz")
        let rounds = ProcessInfo.processInfo.environment["ASSETPACKS_SOAK"] == "1" ? 200_000 : 10_000
        for seed in [1, 2, 3] {
            var env = ProcessInfo.processInfo.environment
            env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
            let r = try Program.run(b.sanitizedCheck, ["fuzz", s.file("fuzz-\(seed).sock"), String(rounds), String(seed)], environment: env)
            #expect(r.status == 0 && r.stderr.isEmpty, "seed \(seed): \(r.out)\(r.stderr)")
            let successes = r.out.split(separator: "\n").first { $0.hasPrefix("successes=") }.flatMap { Int($0.dropFirst(10)) } ?? 0
            // Some survive the mutations, most do not.
            #expect(successes > rounds / 50 && successes < rounds / 2, "\(r.out)")
            #expect(r.out.hasPrefix("requests=\(rounds)\n") && r.out.hasSuffix("leaked=0\nfailures=0\n"), "\(r.out)")
        }
    }

    /// `requestNotPermitted` (70), the refusal a peer that is not the
    /// container's owner gets for a request only the owner may make: both
    /// clients report it as its own code with its fields (pack, path,
    /// reason) and the same message; with other fields it breaks the protocol.
    @Test(.timeLimit(.minutes(3))) func aRequestNotPermittedComesBackAsItsOwnCode() throws {
        let b = try DaemonClientCTests.built.get()
        let s = TemporaryDirectory("assetpack-cclient-permission")
        let fields = ["Big", "http://127.0.0.1:9/catalog.json", "870", "uid 4242 may not have the daemon download 'Big'"].map { Array($0.utf8) }
        let refusal = Self.whole(status: 70, Self.failureBody(fields))
        let fake = try FakeDaemon(s.file("fake.sock"), [refusal, refusal])
        defer { fake.stop() }
        let a = try DaemonClientCTests.get(b, ["--socket", fake.path], ["m"])
        #expect(a.rc == -70 && a["status"] == "70" && a["reason"] == "870", "\(a.values)")
        #expect(a.fields == ["Big", "http://127.0.0.1:9/catalog.json", "870"], "\(a.values)")
        do {
            _ = try AssetPackClient(socketPath: fake.path).descriptor(for: "m")
            Issue.record("the refusal was a success")
        } catch {
            #expect(error.code == .requestNotPermitted && error.reason == .sourceNotConfigured && error.pack == "Big", "\(error)")
            #expect(error.path == "http://127.0.0.1:9/catalog.json")
            #expect(a["message"] == error.message && error.message == "descriptor daemon at \(fake.path) refused the request: uid 4242 may not have the daemon download 'Big'")
        }
        // The same status with a field short: a broken reply.
        let short = try FakeDaemon(s.file("short.sock"), [Self.whole(status: 70, Self.failureBody(Array(fields.dropFirst())))])
        defer { short.stop() }
        let broken = try DaemonClientCTests.get(b, ["--socket", short.path], ["m"])
        #expect(broken.rc == -23 && broken.errno == EPROTO && broken["message"]?.contains("status 70 with 2 fields") == true, "\(broken.values)")
    }

    @Test(.timeLimit(.minutes(3))) func aStatusOfANewerDaemonIsAnError() throws {
        let b = try DaemonClientCTests.built.get()
        let s = TemporaryDirectory("assetpack-cclient-future")
        let fake = try FakeDaemon(s.file("fake.sock"), [Self.whole(status: 200, Self.failureBody([Array("f".utf8), Array("a future error".utf8)]))])
        defer { fake.stop() }
        let a = try DaemonClientCTests.get(b, ["--socket", fake.path], ["m"])
        #expect(a.rc == -69 && a["status"] == "200" && a.fields == ["f"], "\(a.values)")
        #expect(a["message"] == "descriptor daemon at \(fake.path): a future error")
    }

    /// The connection closed before any reply: asked once more on a new
    /// connection, then unavailable; silence: unavailable once the timeout passes.
    @Test(.timeLimit(.minutes(3))) func closedConnectionsAreRetriedOnceAndSilenceTimesOut() throws {
        let b = try DaemonClientCTests.built.get()
        let s = TemporaryDirectory("assetpack-cclient-silence")
        let closing = try FakeDaemon(s.file("closing.sock"), [.close, .close, .close])
        let a = try DaemonClientCTests.get(b, ["--socket", closing.path], ["m"])
        #expect(a.rc == -23 && a.errno == ECONNRESET, "\(a.values)")
        #expect(a["message"] == "descriptor daemon at \(closing.path) is unavailable: read reply: the daemon closed the connection: Connection reset by peer")
        #expect(closing.connections == 2)
        closing.stop()
        // Closed once (an idle connection the daemon dropped), then answered.
        let once = try FakeDaemon(s.file("once.sock"), [.close, Self.whole(status: 1, Self.failureBody([Array("p".utf8), Array("gone".utf8)]))])
        let retried = try DaemonClientCTests.get(b, ["--socket", once.path], ["--pack", "p", "m"])
        #expect(retried.rc == -1 && retried["message"] == "gone" && once.connections == 2, "\(retried.values)")
        once.stop()

        // Silence: the timeout, however often a signal interrupts the wait.
        let silent = try FakeDaemon(s.file("silent.sock"), [.silence, .silence])
        defer { silent.stop() }
        for interrupt in [[], ["--interrupt"]] {
            let started = Date()
            let t = try DaemonClientCTests.get(b, ["--socket", silent.path], ["--timeout", "300", "m"] + interrupt)
            let took = Date().timeIntervalSince(started)
            #expect(t.rc == -23 && t.errno == ETIMEDOUT, "\(t.values)")
            #expect(t["message"] == "descriptor daemon at \(silent.path) is unavailable: read reply: no answer within 0.300 s: Connection timed out")
            #expect(took >= 0.29 && took < 30, "took \(took) s")
            #expect(interrupt.isEmpty ? t["signals"] == "0" : Int(t["signals"] ?? "") ?? 0 > 2, "\(t.values)")
        }
    }

    /// A daemon that predates batches answers one "unknown request kind 3"
    /// and closes: both clients then ask member by member, each on the
    /// connection the fake daemon gives it. The Swift client asks for shared
    /// positions and to keep them, so it takes the first two refusals for a
    /// daemon that predates those flags (which may know batches) and asks
    /// for the batch once more without each flag first.
    @Test(.timeLimit(.minutes(3))) func aDaemonWithoutBatchesIsAskedMemberByMember() throws {
        let b = try DaemonClientCTests.built.get()
        let s = TemporaryDirectory("assetpack-client-old-daemon")
        let file = s.file("member")
        try Data(repeating: 7, count: 10).write(to: URL(fileURLWithPath: file))
        let unknown = Self.whole(status: 65, Self.failureBody([Array("unknown request kind 3".utf8)]))
        let found = Self.whole(status: 0, Self.successBody(), passing: file)
        let missing = Self.whole(status: 2, Self.failureBody([Array("b".utf8), Array("no b".utf8)]))
        for client in ["swift", "c"] {
            let old = try FakeDaemon(s.file("old-\(client).sock"), (client == "swift" ? [unknown, unknown] : []) + [unknown, found, missing, found])
            defer { old.stop() }
            if client == "swift" {
                let results = try AssetPackClient(socketPath: old.path).descriptors(for: ["a", "b", "c"])
                #expect(results.count == 3)
                #expect((try? results[0].get().length) == 10 && (try? results[2].get().length) == 10)
                if case .failure(let e) = results[1] { #expect(e.code == .fileNotFound && e.member == "b", "\(e)") } else { Issue.record("b was found") }
            } else {
                let r = try Program.run(b.check, ["batch", "--socket", old.path, "a", "b", "c"])
                #expect(r.status == 0 && r.out == "rc=0\nmember=0,10,0\nmember=-2,0,0\nmember=0,10,0\nleaked=0\n", "\(r.out) \(r.stderr)")
            }
            #expect(old.connections == (client == "swift" ? 6 : 4))
            #expect(old.flags == (client == "swift" ? [6, 2, 0, 0, 0, 0] : [0, 0, 0, 0]))
        }
    }

    /// What an older daemon does: refuse a request with `message` as
    /// malformed, or answer it with a 10-byte member file in `s`.
    static func olderDaemonsActs(in s: TemporaryDirectory, refusing message: String) throws -> (file: String, refusal: Act, found: Act) {
        let file = s.file("member")
        try Data(repeating: 7, count: 10).write(to: URL(fileURLWithPath: file))
        return (file, whole(status: 65, failureBody([Array(message.utf8)])), whole(status: 0, successBody(), passing: file))
    }

    /// A daemon that predates shared positions refuses the flags ("unknown
    /// flags 6", then "unknown flags 2") and closes: the clients ask once
    /// more without the newest flag each time, on a new connection, and
    /// never send it to that daemon again; a batch stays a batch.
    @Test(.timeLimit(.minutes(3))) func aDaemonWithoutSharedPositionsIsAskedWithoutThem() throws {
        let s = TemporaryDirectory("assetpack-client-unshared-daemon")
        let (file, unknown, found) = try Self.olderDaemonsActs(in: s, refusing: "unknown flags 2")
        let old = try FakeDaemon(s.file("old.sock"), [unknown, unknown, found, found])
        defer { old.stop() }
        let client = AssetPackClient(socketPath: old.path)
        for _ in 0 ..< 2 {
            let d = try client.descriptor(for: "a", searchingInAssetPackWithID: "p")
            #expect(d.length == 10 && d.source == .archive)
        }
        #expect(old.connections == 4 && old.flags == [6, 2, 0, 0])
        // The C client, with APC_SHARED (one handle per call of client-check).
        let b = try DaemonClientCTests.built.get()
        let oldForC = try FakeDaemon(s.file("old-c.sock"), [unknown, unknown, found])
        defer { oldForC.stop() }
        let r = try Program.run(b.check, ["get", "--socket", oldForC.path, "--pack", "p", "--shared", "a"])
        #expect(r.status == 0 && r.out.hasPrefix("rc=0\n") && r.out.hasSuffix("leaked=0\n"), "\(r.out) \(r.stderr)")
        #expect(oldForC.connections == 3 && oldForC.flags == [6, 2, 0])
        // A path that is not UTF-8 goes without the flag: the daemon's
        // refusal of it is not taken for one of the flag.
        let refusing = try FakeDaemon(s.file("refusing.sock"), [Self.whole(status: 65, Self.failureBody([Array("not UTF-8".utf8)]))])
        defer { refusing.stop() }
        let bad = try Program.run(b.check, ["get", "--socket", refusing.path, "--pack", "p", "--shared", "--hex-path", "ff2e6a736f6e"])
        #expect(bad.status == 0 && bad.out.hasPrefix("rc=-65\n"), "\(bad.out) \(bad.stderr)")
        #expect(refusing.connections == 1 && refusing.flags == [0])

        let success = Self.replyHeader(status: 0, length: 32) + Self.successBody()
        let notFound = Self.failureBody([Array("b".utf8), Array("p".utf8), Array("no b".utf8)])
        let replies = Act.reply([(success, file), (Self.replyHeader(status: 2, length: notFound.count) + notFound, nil), (success, file)])
        let batching = try FakeDaemon(s.file("batching.sock"), [unknown, unknown, replies])
        defer { batching.stop() }
        let results = try AssetPackClient(socketPath: batching.path).descriptors(for: ["a", "b", "c"], searchingInAssetPackWithID: "p")
        #expect(results.count == 3 && (try? results[0].get().length) == 10 && (try? results[2].get().length) == 10)
        if case .failure(let e) = results[1] { #expect(e.code == .fileNotFound && e.member == "b", "\(e)") } else { Issue.record("b was found") }
        #expect(batching.connections == 3 && batching.flags == [6, 2, 0])
        let batchingForC = try FakeDaemon(s.file("batching-c.sock"), [unknown, unknown, replies])
        defer { batchingForC.stop() }
        let c = try Program.run(b.check, ["batch", "--socket", batchingForC.path, "--pack", "p", "--shared", "a", "b", "c"])
        #expect(c.status == 0 && c.out == "rc=0\nmember=0,10,0\nmember=-2,0,0\nmember=0,10,0\nleaked=0\n", "\(c.out) \(c.stderr)")
        #expect(batchingForC.connections == 3 && batchingForC.flags == [6, 2, 0])
    }

    static func keptBody(offset: Int64 = 0, length: Int64 = 10, size: Int64 = 10, source: UInt8 = 0, slot: UInt8, reuse: UInt8 = 0,
                         reserved: UInt8 = 0) -> [UInt8] {
        var b = successBody(offset: offset, length: length, size: size, source: source)
        b[25] = slot
        b[26] = reuse
        b[27] = reserved
        return b
    }

    /// A daemon that knows shared positions but not keeping them ("unknown
    /// flags 6"): both clients ask once more with the shared position
    /// alone, and keep sending it.
    @Test(.timeLimit(.minutes(3))) func aDaemonWithoutKeptDescriptionsIsAskedForSharedOnes() throws {
        let s = TemporaryDirectory("assetpack-client-unkept-daemon")
        let (_, unknown, found) = try Self.olderDaemonsActs(in: s, refusing: "unknown flags 6")
        let old = try FakeDaemon(s.file("old.sock"), [unknown, found, found])
        defer { old.stop() }
        let client = AssetPackClient(socketPath: old.path)
        for _ in 0 ..< 2 { #expect(try client.descriptor(for: "a", searchingInAssetPackWithID: "p").length == 10) }
        #expect(old.connections == 3 && old.flags == [6, 2, 2])
        let b = try DaemonClientCTests.built.get()
        let oldForC = try FakeDaemon(s.file("old-c.sock"), [unknown, found])
        defer { oldForC.stop() }
        let r = try Program.run(b.check, ["get", "--socket", oldForC.path, "--pack", "p", "--shared", "a"])
        #expect(r.status == 0 && r.out.hasPrefix("rc=0\n") && r.out.hasSuffix("leaked=0\n"), "\(r.out) \(r.stderr)")
        #expect(oldForC.connections == 2 && oldForC.flags == [6, 2])
    }

    /// A batch's replies on one connection: the first passes a descriptor
    /// for slot 1, the second names the slot. Both clients hand out a new
    /// descriptor of the kept description for each, at its member, and
    /// close what they kept with the connection.
    @Test(.timeLimit(.minutes(3))) func aKeptDescriptionIsReusedBySlot() throws {
        let s = TemporaryDirectory("assetpack-client-kept")
        let file = s.file("member")
        try Data((0 ..< 20).map { UInt8($0) }).write(to: URL(fileURLWithPath: file))
        let first = Self.replyHeader(status: 0, length: 32) + Self.keptBody(offset: 0, length: 10, size: 20, slot: 1)
        let second = Self.replyHeader(status: 0, length: 32) + Self.keptBody(offset: 10, length: 10, size: 20, slot: 1, reuse: 1)
        let replies = Act.reply([(first, file), (second, nil)])
        let fake = try FakeDaemon(s.file("kept.sock"), [replies, replies])
        defer { fake.stop() }
        /// This process's descriptors of the member file (a path no other test opens).
        func held() -> Int {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == file }.count
        }
        do {
            let client = AssetPackClient(socketPath: fake.path)
            let results = try client.descriptors(for: ["a", "b"], searchingInAssetPackWithID: "p").map { try $0.get() }
            #expect(try results[0].data() == Data(0 ..< 10) && results[1].data() == Data(10 ..< 20))
            #expect(lseek(results[1].fileDescriptor, 0, SEEK_CUR) == 10)
            #expect(DaemonDescriptorSharingTests.shareAPosition(results[0], results[1]))
            #expect(held() == 3)   // the two handed out, and the one the client keeps in slot 1
            _ = client
        }
        #expect(held() == 0)
        let b = try DaemonClientCTests.built.get()
        let c = try Program.run(b.check, ["batch", "--socket", fake.path, "--pack", "p", "--shared", "a", "b"])
        #expect(c.status == 0 && c.out == "rc=0\nmember=0,10,0\nmember=0,10,0\nleaked=0\n", "\(c.out) \(c.stderr)")
        #expect(fake.flags == [6, 6])
    }

    /// Kept-slot replies that break the protocol, to a client that asked to
    /// keep descriptions (or did not): both clients refuse each with the
    /// same message and close what came with it.
    @Test(.timeLimit(.minutes(4))) func brokenKeptSlotRepliesAreRefused() throws {
        let b = try DaemonClientCTests.built.get()
        let s = TemporaryDirectory("assetpack-client-kept-broken")
        let file = try s.write("file", [UInt8](repeating: 7, count: 100))
        let cases: [(what: String, keeps: Bool, act: Act)] = [
            ("kept slot 1 to a request that keeps none", false, Self.whole(status: 0, Self.keptBody(slot: 1), passing: file)),
            ("kept slot 5", true, Self.whole(status: 0, Self.keptBody(slot: 5), passing: file)),
            ("a memory file for kept slot 1", true, Self.whole(status: 0, Self.keptBody(source: 1, slot: 1), passing: file)),
            ("a reuse of no kept slot", true, Self.whole(status: 0, Self.keptBody(slot: 0, reuse: 1))),
            ("a success with reserved bytes 2 0", true, Self.whole(status: 0, Self.keptBody(slot: 1, reuse: 2), passing: file)),
            ("a success with reserved bytes 0 1", true, Self.whole(status: 0, Self.keptBody(slot: 0, reserved: 1), passing: file)),
            ("a descriptor with a reply that reuses kept slot 1", true, Self.whole(status: 0, Self.keptBody(slot: 1, reuse: 1), passing: file)),
            ("a reuse of kept slot 2, which holds nothing", true, Self.whole(status: 0, Self.keptBody(slot: 2, reuse: 1))),
        ]
        for c in cases {
            let fake = try FakeDaemon(s.file("fake.sock"), [c.act, c.act])
            defer { fake.stop(); unlink(fake.path) }
            let a = try DaemonClientCTests.get(b, ["--socket", fake.path], ["--pack", "p"] + (c.keeps ? ["--shared"] : []) + ["m"])
            #expect(a.rc == -23 && a.errno == EPROTO && a["leaked"] == "0", "\(c.what): \(a.values)")
            #expect(a["message"] == "descriptor daemon at \(fake.path) is unavailable: read reply: the daemon sent \(c.what): Protocol error",
                    "\(c.what): \(a["message"] ?? "")")
            do {
                _ = try AssetPackClient(socketPath: fake.path).descriptor(for: "m", searchingInAssetPackWithID: "p", options: c.keeps ? [] : .ownOffset)
                Issue.record("\(c.what): the Swift client accepted it")
            } catch {
                #expect(error.code == .daemonUnavailable && error.systemError == EPROTO && error.message == a["message"], "\(c.what): \(error)")
            }
            #expect(fake.flags == [c.keeps ? 6 : 0, c.keeps ? 6 : 0])
        }
    }
}
