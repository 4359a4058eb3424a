import Foundation
import Testing
import Synchronization
@testable import AssetPacks
import AssetSystem
import AssetStore
import TestSupport

/// `assetpack daemon` in its own process, and clients in others: this test
/// process (AssetPackClient, raw sockets) and `assetpack cat --daemon`,
/// also as another user.
@Suite(.serialized) struct DaemonTests {
    /// A running `assetpack daemon`.
    final class Daemon {
        let child: Child
        let container: AssetPackManager.Container

        /// Starts `assetpack daemon`, with `ulimit -n descriptors` when given.
        init(_ container: String, _ extra: [String] = [], descriptors: Int? = nil) throws {
            self.container = AssetPackManager.Container(path: container)
            let args = ["daemon", "--container", container] + extra
            if let descriptors {
                child = try Child("/bin/sh", ["-c", "ulimit -n \(descriptors) && exec \"$0\" \"$@\"", CLI.binary] + args)
            } else {
                child = try Child(CLI.binary, args)
            }
            // It says so once it listens (no probe connection, which would
            // count against --max-connections).
            let up = eventually(timeout: 30) { !child.process.isRunning || child.stderr.contains("serving") }
            guard up, child.process.isRunning else { throw TestFailure("the daemon did not start: \(child.stderr)") }
        }

        /// SIGTERM, then checks that it exited 0 and removed its socket.
        func stop() {
            child.signal(SIGTERM)
            #expect(child.wait(timeout: 20), "the daemon did not stop on SIGTERM")
            #expect(child.exitStatus == 0, "\(child.stderr)")
            #expect(!FileManager.default.fileExists(atPath: container.daemonSocketPath))
        }
    }

    /// A container with stress v1 and a pack `other` that shares its common
    /// paths (but not `only/v1*`).
    func setUp(_ s: TemporaryDirectory) throws -> AssetPackManager {
        try Helper.makePacks(s.path + "/packs", versions: 2)
        try Helper.makePacks(s.path + "/other", id: "other", versions: 2)
        let manager = try AssetPackManager(container: .init(path: s.container))
        try manager.installPack(at: s.path + "/packs/v1.zip")
        try manager.installPack(at: s.path + "/other/v2.zip")
        return manager
    }

    func bytes(of d: AssetDescriptor) throws -> Data { try d.data() }

    @Test(.timeLimit(.minutes(3))) func descriptorsFromTheDaemonReadTheRightBytes() throws {
        let s = TemporaryDirectory("assetpack-daemon-bytes")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container)
        let client = try AssetPackClient.connect(container: manager.container)
        for path in ["media/big.bin", "media/mid.bin", "text/a.txt", "tiny/t007", "only/v1.txt"] {
            let want = try manager.contents(at: path, searchingInAssetPackWithID: "stress")
            let d = try client.descriptor(for: path, searchingInAssetPackWithID: "stress")
            let local = try manager.descriptor(for: path, searchingInAssetPackWithID: "stress")
            #expect(d.source == local.source && d.offset == local.offset && d.length == local.length, "\(path)")
            #expect(try bytes(of: d) == want, "\(path)")
            // The file position is at the member, as for a local descriptor.
            #expect(lseek(d.fileDescriptor, 0, SEEK_CUR) == d.offset)
            // Read-only and close-on-exec.
            #expect(fcntl(d.fileDescriptor, F_GETFL) & O_ACCMODE == O_RDONLY)
            #expect(fcntl(d.fileDescriptor, F_GETFD) & FD_CLOEXEC != 0)
            let standalone = try client.descriptor(for: path, searchingInAssetPackWithID: "stress", options: .standalone)
            #expect(standalone.offset == 0 && standalone.source == .memory)
            #expect(try bytes(of: standalone) == want)
        }
        // A path-only lookup, and the command line client.
        let unique = try client.descriptor(for: "only/v1.txt")
        #expect(try bytes(of: unique) == manager.contents(at: "only/v1.txt", searchingInAssetPackWithID: "stress"))
        let cat = try CLI.assetpack(["cat", "text/a.txt", "--pack", "stress", "--daemon"], container: s.container)
        let text = try manager.contents(at: "text/a.txt", searchingInAssetPackWithID: "stress")
        #expect(cat.status == 0 && cat.stdout == text)
        // An update is seen on the same connection; bytes already handed out stay.
        try manager.installPack(at: s.path + "/packs/v2.zip")
        #expect(try bytes(of: unique).prefix(8) == Data([1, 0, 0, 0, 0, 0, 0, 0]))
        let updated = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress")
        #expect(try bytes(of: updated).prefix(8) == Data([2, 0, 0, 0, 0, 0, 0, 0]))
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(3))) func errorsComeBackAsTheSameCases() throws {
        let s = TemporaryDirectory("assetpack-daemon-errors")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container)
        let client = try AssetPackClient.connect(container: manager.container)
        /// The error the daemon sends for a request, and the one the
        /// manager reports for the same request in this process.
        func both(_ path: String, _ pack: String?) -> (remote: AssetPackError?, local: AssetPackError?) {
            var remote: AssetPackError?, local: AssetPackError?
            do { _ = try client.descriptor(for: path, searchingInAssetPackWithID: pack) } catch { remote = error }
            do { _ = try manager.descriptor(for: path, searchingInAssetPackWithID: pack) } catch { local = error }
            return (remote, local)
        }
        let cases: [(String, String?, AssetPackError.Code)] = [
            ("x", "nothing", .assetPackNotFound), ("no/such", "stress", .fileNotFound), ("no/such", nil, .fileNotFound),
            ("media/small.bin", nil, .ambiguousPath), ("x", "../etc", .invalidPackID),
        ]
        for (path, pack, code) in cases {
            let (remote, local) = both(path, pack)
            #expect(remote?.code == code, "\(path) in \(pack ?? "any pack"): \(String(describing: remote))")
            #expect(remote == local, "\(path) in \(pack ?? "any pack")")
        }
        #expect(both("media/small.bin", nil).remote?.packs == ["other", "stress"])
        #expect(both("x", "../etc").remote?.reason == .badFirstCharacter)
        let cat = try CLI.assetpack(["cat", "no/such", "--pack", "stress", "--daemon"], container: s.container)
        #expect(cat.status == 1 && cat.stderr == "assetpack cat: error: no file 'no/such' in asset pack 'stress'\n")
        daemon.stop()
        // No daemon: a clear error, not a hang.
        do { _ = try client.descriptor(for: "media/big.bin", searchingInAssetPackWithID: "stress"); Issue.record("answered") } catch {
            #expect(error.code == .daemonUnavailable && error.path == manager.container.daemonSocketPath, "\(error)")
        }
    }

    /// Root, with setpriv, and `nobody` can run the built binary.
    static let canSwitchUser: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
        let r = try? Program.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", CLI.binary, "--version"])
        return r?.status == 0
    }()

    /// `nobody` reaches the socket (group `nogroup`, mode 0660) but the
    /// daemon refuses it by `SO_PEERCRED`; allowed by uid, it is served —
    /// though it could not open the container itself.
    @Test(.enabled(if: canSwitchUser), .timeLimit(.minutes(3))) func aWrongUIDPeerIsRefused() throws {
        let s = TemporaryDirectory("assetpack-daemon-uid")
        // nobody must be able to reach the socket path.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: s.path)
        let manager = try setUp(s)
        let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups", CLI.binary]
        let args = ["cat", "media/mid.bin", "--pack", "stress", "--container", s.container]
        let want = try manager.contents(at: "media/mid.bin", searchingInAssetPackWithID: "stress")

        var daemon = try Daemon(s.container, ["--socket-group", "nogroup"])
        let refused = try Program.run("/usr/bin/setpriv", asNobody + args + ["--daemon"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("refused the request: uid 65534 (gid 65534) is not allowed"), "\(refused.stderr)")
        #expect(daemon.child.stderr.contains("uid 65534 gid 65534 is not allowed"))
        // Everyone else is still served.
        let client = try AssetPackClient.connect(container: manager.container)
        #expect(try bytes(of: client.descriptor(for: "media/mid.bin", searchingInAssetPackWithID: "stress")) == want)
        daemon.stop()

        for allow in [["--allow-uid", "nobody"], ["--allow-gid", "65534"]] {
            daemon = try Daemon(s.container, ["--socket-group", "nogroup"] + allow)
            let served = try Program.run("/usr/bin/setpriv", asNobody + args + ["--daemon"])
            #expect(served.status == 0, "\(allow): \(served.stderr)")
            #expect(served.stdout == want)
            daemon.stop()
        }
        // Without the daemon, nobody cannot use the container.
        #expect(try Program.run("/usr/bin/setpriv", asNobody + args).status != 0)
    }

    /// Raw bytes on the socket, as a confused or hostile client sends them.
    final class RawClient: Sendable {
        let socket: UnixSocket
        init(_ path: String) throws { socket = try UnixSocket.connect(to: path); try socket.setTimeouts(milliseconds: 10_000) }

        /// Reads one reply; its status, or nil at end of stream.
        func replyStatus() throws -> UInt16? {
            var got: [UInt8] = []
            while got.count < 16 {
                let m = try socket.receive(upTo: 16 - got.count)
                if m.bytes.isEmpty { return nil }
                got += m.bytes
            }
            #expect(Array(got[0..<4]) == Array("APDR".utf8))
            let length = Int(got[8]) | Int(got[9]) << 8 | Int(got[10]) << 16 | Int(got[11]) << 24
            var body = 0
            while body < length {
                let m = try socket.receive(upTo: length - body)
                if m.bytes.isEmpty { return nil }
                body += m.bytes.count
            }
            return UInt16(got[6]) | UInt16(got[7]) << 8
        }

        /// Whether the daemon closed the connection (end of stream).
        func isClosed() throws -> Bool { try socket.receive(upTo: 1).bytes.isEmpty }
    }

    static func header(magic: String = "APDQ", version: UInt16 = 1, kind: UInt16 = 1, length: UInt32, flags: UInt16 = 0, packLength: UInt16) -> [UInt8] {
        var h = Array(magic.utf8)
        for v in [version, kind] { h += [UInt8(v & 0xff), UInt8(v >> 8)] }
        h += [UInt8(length & 0xff), UInt8(length >> 8 & 0xff), UInt8(length >> 16 & 0xff), UInt8(length >> 24)]
        for v in [flags, packLength] { h += [UInt8(v & 0xff), UInt8(v >> 8)] }
        return h
    }

    @Test(.timeLimit(.minutes(3))) func garbageAndTruncatedRequestsLeaveTheDaemonServing() throws {
        let s = TemporaryDirectory("assetpack-daemon-garbage")
        let manager = try setUp(s)
        // A request timeout far beyond what 20 lookups take on a loaded machine.
        let daemon = try Daemon(s.container, ["--first-request-timeout", "6", "--request-timeout", "6"])
        let path = manager.container.daemonSocketPath
        let client = try AssetPackClient.connect(container: manager.container)
        func stillServing() throws -> Bool {
            try client.descriptor(for: "tiny/t001", searchingInAssetPackWithID: "stress").length == 17
        }

        // Garbage: refused as malformed, then closed.
        let garbage = try RawClient(path)
        try garbage.socket.sendAll(Array(repeating: 0x5a, count: 64))
        #expect(try garbage.replyStatus() == 65)
        #expect(try garbage.isClosed())
        // A request longer than the daemon reads: refused as too large, closed.
        let huge = try RawClient(path)
        try huge.socket.sendAll(Self.header(length: 1 << 20, packLength: 0))
        #expect(try huge.replyStatus() == 66)
        #expect(try huge.isClosed())
        // Another protocol version.
        let future = try RawClient(path)
        try future.socket.sendAll(Self.header(version: 9, length: 1, packLength: 0) + [0x61])
        #expect(try future.replyStatus() == 67)
        // A body that is not UTF-8: refused, but the connection goes on.
        let badText = try RawClient(path)
        try badText.socket.sendAll(Self.header(length: 2, packLength: 0) + [0xff, 0xfe])
        #expect(try badText.replyStatus() == 65)
        try badText.socket.sendAll(DaemonRequest(pack: "stress", path: "tiny/t001").encoded)
        #expect(try badText.replyStatus() == 0)
        // A request carrying a descriptor: refused, closed, the descriptor dropped.
        let smuggler = try RawClient(path)
        let file = try FileDescriptor.open(s.path + "/packs/v1.zip")
        try smuggler.socket.sendAll(DaemonRequest(pack: "stress", path: "tiny/t001").encoded, passing: file.rawValue)
        #expect(try smuggler.replyStatus() == 65)
        #expect(try smuggler.isClosed())
        // Half a request, then silence: others are served meanwhile, and the
        // daemon gives up on it after the request timeout.
        let half = try RawClient(path)
        let started = Date()
        try half.socket.sendAll(Array(DaemonRequest(pack: "stress", path: "tiny/t001").encoded.prefix(10)))
        for _ in 0..<20 { #expect(try stillServing()) }
        // Served before the daemon gave up on the half request: it has not answered it yet.
        #expect(try Poll.readable([half.socket.descriptor.rawValue], timeout: 0).isEmpty)
        #expect(try half.replyStatus() == 65)
        #expect(Date().timeIntervalSince(started) >= 5.5)  // the timeout counts from the connect, just before
        #expect(try half.isClosed())
        // Half a request, then gone.
        let quitter = try RawClient(path)
        try quitter.socket.sendAll(Array(DaemonRequest(pack: "stress", path: "tiny/t001").encoded.prefix(20)))
        _ = consume quitter
        #expect(try stillServing())
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(3))) func aHundredConcurrentClientsAllGetAnswers() throws {
        let s = TemporaryDirectory("assetpack-daemon-crowd")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container)
        let want = try manager.contents(at: "media/mid.bin", searchingInAssetPackWithID: "stress")
        // A hundred connections open at once…
        let clients = try (0..<100).map { _ in try AssetPackClient.connect(container: manager.container) }
        // …each asking from its own thread, all released together.
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let answered = Mutex<[Int: Bool]>([:])
        for (i, client) in clients.enumerated() {
            done.enter()
            Thread {
                defer { done.leave() }
                go.wait()
                var ok = false
                if let d = try? client.descriptor(for: "media/mid.bin", searchingInAssetPackWithID: "stress") {
                    ok = (try? d.data()) == want
                }
                answered.withLock { $0[i] = ok }
            }.start()
        }
        for _ in clients { go.signal() }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let results = answered.withLock { $0 }
        #expect(results.count == 100 && results.values.allSatisfy { $0 })
        daemon.stop()
    }

    /// Past `--max-connections`, with no connection idle, a client is told
    /// the daemon is busy; an idle connection is closed after
    /// `--idle-timeout`, and the client reconnects by itself on its next request.
    @Test(.timeLimit(.minutes(3))) func connectionLimitAndIdleTimeout() throws {
        let s = TemporaryDirectory("assetpack-daemon-limits")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container, ["--max-connections", "2", "--idle-timeout", "0.3", "--request-timeout", "20"])
        let path = manager.container.daemonSocketPath
        let request = DaemonRequest(pack: "stress", path: "tiny/t001").encoded
        // Two requests under way: none idle, so a third connection is busy.
        let first = try RawClient(path), second = try RawClient(path)
        for raw in [first, second] { try raw.socket.sendAll(Array(request.prefix(10))) }
        let third = try RawClient(path)
        #expect(try third.replyStatus() == 68)
        #expect(try third.isClosed())
        for raw in [first, second] {
            try raw.socket.sendAll(Array(request.dropFirst(10)))
            #expect(try raw.replyStatus() == 0)
        }
        // The daemon closes idle connections without a word.
        #expect(try first.isClosed())
        #expect(try second.isClosed())
        let client = try AssetPackClient.connect(container: manager.container)
        #expect(try client.descriptor(for: "tiny/t001", searchingInAssetPackWithID: "stress").length == 17)
        // A connection opened after the client's request closes after it: the
        // client's has been closed by then, and it reconnects.
        #expect(try RawClient(path).isClosed())
        #expect(try client.descriptor(for: "tiny/t001", searchingInAssetPackWithID: "stress").length == 17)
        do { _ = try AssetPackClient.connect(container: manager.container).descriptor(for: "x", searchingInAssetPackWithID: "stress") } catch {
            #expect(error.code == .fileNotFound, "\(error)")
        }
        daemon.stop()
    }

    @Test func badOptionsAreUsageErrors() throws {
        let s = TemporaryDirectory("assetpack-daemon-usage")
        for args in [["--max-connections", "0"], ["--request-timeout", "0"], ["--socket-group", "no-such-group-here"],
                     ["--first-request-timeout", "0"], ["--max-connections-per-user", "1.5"], ["--memory-cache", "lots"],
                     ["--memory-budget", "-1"], ["--memory-budget", "9999999999G"],
                     ["--allow-uid", "no-such-user-here"], ["--max-downloads", "0"], ["--max-downloads", "2.5"], ["extra"]] {
            let r = try CLI.assetpack(["daemon"] + args, container: s.container)
            #expect(r.status == 64, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("See 'assetpack daemon --help'."))
        }
        #expect(!FileManager.default.fileExists(atPath: s.container + "/daemon.sock"))
        let help = try CLI.assetpack(["help", "daemon"])
        #expect(help.status == 0 && help.out.contains("--allow-uid") && help.out.contains("SIGTERM"))
        #expect(try CLI.assetpack(["cat", "--help"]).out.contains("--daemon"))
    }

    @Test(.timeLimit(.minutes(3))) func aStaleSocketDoesNotStopANewDaemonButALiveOneDoes() throws {
        let s = TemporaryDirectory("assetpack-daemon-stale")
        let manager = try setUp(s)
        let first = try Daemon(s.container)
        first.child.signal(SIGKILL)
        #expect(first.child.wait(timeout: 10) && first.child.wasKilled)
        #expect(FileManager.default.fileExists(atPath: manager.container.daemonSocketPath))   // left behind
        let second = try Daemon(s.container)
        let client = try AssetPackClient.connect(container: manager.container)
        #expect(try client.descriptor(for: "tiny/t001", searchingInAssetPackWithID: "stress").length == 17)
        // A third while the second lives: refused, naming the live one.
        let third = try CLI.assetpack(["daemon"], container: s.container)
        #expect(third.status == 1)
        #expect(third.stderr.contains("another descriptor daemon (pid \(second.child.pid)) serves"), "\(third.stderr)")
        #expect(try client.descriptor(for: "tiny/t001", searchingInAssetPackWithID: "stress").length == 17)
        second.stop()
    }
}
