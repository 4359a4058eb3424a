import Foundation
import Testing
@testable import AssetPacks
import AssetSystem
import TestSupport

/// What one client, or a crowd of connections, cannot take from the others:
/// connection slots, descriptors, memory files; and how the daemon gates
/// and logs peers.
///
/// Every wait here is for a condition: the daemon's own timeouts are set far
/// beyond what the test takes, or the test checks what happened after one,
/// never how fast.
@Suite(.serialized)
struct DaemonLimitsTests {
    typealias Daemon = DaemonTests.Daemon
    typealias RawClient = DaemonTests.RawClient

    func setUp(_ s: TemporaryDirectory) throws -> AssetPackManager { try DaemonTests().setUp(s) }

    static let request = DaemonRequest(pack: "stress", path: "tiny/t001").encoded

    func served(_ manager: AssetPackManager) throws -> Bool {
        try AssetPackClient.connect(container: manager.container, timeout: 30)
            .descriptor(for: "tiny/t001", searchingInAssetPackWithID: "stress").length == 17
    }

    @Test(.timeLimit(.minutes(3))) func idleConnectionsDoNotStarveAWorkingClient() throws {
        let s = TemporaryDirectory("assetpack-daemon-idle-crowd")
        let manager = try setUp(s)
        // One user may take every slot here, so the daemon-wide limit is what
        // bites; no idle connection times out while the test runs.
        let daemon = try Daemon(s.container, ["--max-connections-per-user", "256", "--first-request-timeout", "120"])
        let path = manager.container.daemonSocketPath
        // Every slot taken by a connection that sends nothing…
        let idle = try (0..<256).map { _ in try RawClient(path) }
        // …and a working client is served in place of the oldest, not after
        // any idle connection's timeout (120 s, 300 s: its own is 30 s).
        #expect(try served(manager))
        #expect(try idle[0].isClosed())
        // The newest idle connection still works.
        try idle[255].socket.sendAll(Self.request)
        #expect(try idle[255].replyStatus() == 0)
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(3))) func oneUserCannotHoldMoreThanItsConnections() throws {
        let s = TemporaryDirectory("assetpack-daemon-per-user")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: s.path)
        let manager = try setUp(s)
        let daemon = try Daemon(s.container, ["--max-connections-per-user", "3", "--request-timeout", "50", "--first-request-timeout", "50",
                                              "--allow-uid", "nobody"])
        let path = manager.container.daemonSocketPath
        // Two requests under way and one connection idle: the user's next
        // connection replaces the idle one.
        let busy = try (0..<2).map { _ in try RawClient(path) }
        for raw in busy { try raw.socket.sendAll(Array(Self.request.prefix(10))) }
        let idle = try RawClient(path)
        let fourth = try RawClient(path)
        #expect(try idle.isClosed())
        // Three under way: none to give up, so the next is busy, though the
        // daemon has room for 253 more.
        try fourth.socket.sendAll(Array(Self.request.prefix(10)))
        let fifth = try RawClient(path)
        #expect(try fifth.replyStatus() == 68)
        #expect(try fifth.isClosed())
        // Another user is served meanwhile.
        if DaemonTests.canSwitchUser {
            let other = try Program.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", CLI.binary,
                                                             "cat", "tiny/t001", "--pack", "stress", "--container", s.container, "--daemon"])
            #expect(other.status == 0 && other.stdout.count == 17, "\(other.stderr)")
        }
        for raw in busy + [fourth] {
            try raw.socket.sendAll(Array(Self.request.dropFirst(10)))
            #expect(try raw.replyStatus() == 0)
        }
        daemon.stop()
    }

    @Test(.timeLimit(.minutes(3))) func aConnectionThatSendsNoWholeRequestIsDroppedSoon() throws {
        let s = TemporaryDirectory("assetpack-daemon-first-request")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container, ["--first-request-timeout", "0.5", "--request-timeout", "120"])
        let path = manager.container.daemonSocketPath
        let started = Date()
        let silent = try RawClient(path)
        let half = try RawClient(path)
        try half.socket.sendAll(Array(Self.request.prefix(10)))
        let working = try RawClient(path)
        try working.socket.sendAll(Self.request)
        #expect(try working.replyStatus() == 0)
        // Closed without a word, and refused as cut short, after 0.5 s, not
        // after the idle (300 s) or request (120 s) timeout.
        #expect(try silent.isClosed())
        #expect(try half.replyStatus() == 65)
        #expect(try half.isClosed())
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.5 && elapsed < 60, "\(elapsed)")
        // A connection that sent its first request in time is not held to it.
        #expect(try Poll.readable([working.socket.descriptor.rawValue], timeout: 1).isEmpty)
        try working.socket.sendAll(Self.request)
        #expect(try working.replyStatus() == 0)
        daemon.stop()
    }

    /// With `ulimit -n 64`, the daemon serves as many connections as that
    /// leaves room for; a hundred clients each get an answer or see the
    /// connection close, none hangs, and a working client is served.
    @Test(.timeLimit(.minutes(3))) func aLowDescriptorLimitAnswersOrClosesEveryConnection() throws {
        let s = TemporaryDirectory("assetpack-daemon-ulimit")
        let manager = try setUp(s)
        // The connections it keeps wait for their first request meanwhile.
        let daemon = try Daemon(s.container, ["--first-request-timeout", "50"], descriptors: 64)
        #expect(daemon.child.stderr.contains("ulimit -n 64 leaves room for"), "\(daemon.child.stderr)")
        let path = manager.container.daemonSocketPath
        let crowd = try (0..<100).map { _ in try RawClient(path) }
        var answered = 0, closed = 0
        for raw in crowd {
            try? raw.socket.setTimeouts(milliseconds: 5_000)
            do {
                try raw.socket.sendAll(Self.request)
                switch try raw.replyStatus() {
                case nil: closed += 1
                case let status?:
                    #expect(status == 0 || status == 68, "status \(status)")
                    answered += 1
                }
            } catch let error as Errno where error == .brokenPipe || error == .connectionReset {
                closed += 1
            }
        }
        #expect(answered + closed == 100 && answered > 0, "answered \(answered), closed \(closed)")
        #expect(try served(manager))
        daemon.stop()
    }

    /// Out of descriptors when a connection arrives (the limit lowered under
    /// the daemon): it is accepted on a reserve descriptor and told to try
    /// again, not left hanging; the log says so once.
    @Test(.timeLimit(.minutes(3))) func runningOutOfDescriptorsAnswersBusyAndLogsOnce() throws {
        let s = TemporaryDirectory("assetpack-daemon-emfile")
        let manager = try setUp(s)
        let daemon = try Daemon(s.container)
        let path = manager.container.daemonSocketPath
        let held = try (0..<40).map { _ in try RawClient(path) }
        for raw in held {
            try raw.socket.sendAll(Self.request)
            #expect(try raw.replyStatus() == 0)
        }
        let pid = String(daemon.child.pid)
        #expect(try Program.run("/usr/bin/prlimit", ["--pid", pid, "--nofile=20:"]).status == 0)
        for _ in 0..<5 {
            let late = try RawClient(path)
            #expect(try late.replyStatus() == 68)
            #expect(try late.isClosed())
        }
        #expect(daemon.child.stderr.components(separatedBy: "out of file descriptors").count == 2, "\(daemon.child.stderr)")
        #expect(try Program.run("/usr/bin/prlimit", ["--pid", pid, "--nofile=20000:"]).status == 0)
        #expect(try served(manager))
        _ = held
        daemon.stop()
    }
}
