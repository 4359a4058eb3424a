import Foundation
import Testing
import AssetPacks
import TestSupport

/// `assetpack daemon` under systemd socket activation, with real processes:
/// `systemd-socket-activate` binding the socket and passing it as
/// descriptor 3, a shell passing something else as descriptor 3, and
/// `systemd-analyze verify` reading the shipped units.
@Suite(.serialized) struct SocketActivationTests {
    static let activator = Program.find("systemd-socket-activate")
    static let analyzer = Program.find("systemd-analyze")

    @Test(.enabled(if: activator != nil), .timeLimit(.minutes(3)))
    func theDaemonServesTheSocketSystemdPassesAndLeavesItsFile() throws {
        let s = TemporaryDirectory("assetpack-activation")
        let manager = try DaemonTests().setUp(s)
        let socket = manager.container.daemonSocketPath
        // systemd-socket-activate binds the socket, and execs the daemon at
        // the first connection, handing it over as descriptor 3.
        let activator = try Child(Self.activator!, ["-l", socket, CLI.binary, "daemon", "--container", s.container])
        #expect(eventually(timeout: 30) { activator.stderr.contains("Listening on") }, "\(activator.stderr)")
        let client = AssetPackClient(socketPath: socket, timeout: 30)
        let d = try client.descriptor(for: "text/a.txt", searchingInAssetPackWithID: "stress")
        #expect(try d.data() == manager.contents(at: "text/a.txt", searchingInAssetPackWithID: "stress"))
        #expect(activator.stderr.contains("serving \(socket) (pid \(activator.pid), socket from systemd)"), "\(activator.stderr)")
        activator.signal(SIGTERM)
        #expect(activator.wait(timeout: 20) && activator.exitStatus == 0, "\(activator.stderr)")
        // The socket unit owns the file: still there, and nothing answers on it.
        #expect(FileManager.default.fileExists(atPath: socket))
        do {
            _ = try AssetPackClient(socketPath: socket).descriptor(for: "text/a.txt")
            Issue.record("a stopped daemon answered")
        } catch {
            #expect(error.code == .daemonUnavailable && error.systemError == ECONNREFUSED, "\(error)")
        }
        // A daemon started the usual way replaces it, as any stale socket.
        let daemon = try DaemonTests.Daemon(s.container)
        #expect(try AssetPackClient(socketPath: socket).descriptor(for: "text/a.txt", searchingInAssetPackWithID: "stress").length > 0)
        daemon.stop()
    }

    /// The daemon with `LISTEN_PID` its own and `LISTEN_FDS=1`, and `fd3`
    /// (a shell redirection) as descriptor 3.
    func activated(_ container: String, fd3: String, pid: String = "$$") throws -> Program.Result {
        try Program.run("/bin/sh", ["-c", "export LISTEN_PID=\(pid) LISTEN_FDS=1; exec \"$0\" daemon --container \"$1\" 3\(fd3)",
                                    CLI.binary, container])
    }

    @Test(.timeLimit(.minutes(3))) func aDescriptorThreeThatIsNotAListeningUnixSocketIsRefused() throws {
        let s = TemporaryDirectory("assetpack-activation-refused")
        let r = try activated(s.container, fd3: "</dev/null")
        #expect(r.status == 1)
        #expect(r.stderr == "assetpack daemon: error: systemd socket activation (LISTEN_FDS=1): descriptor 3 is not a listening Unix stream socket: Socket operation on non-socket\n",
                "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.container + "/daemon.sock"))
        // Not open at all (the container's files may then take number 3).
        let closed = try activated(s.container, fd3: "<&-")
        #expect(closed.status == 1 && closed.stderr.contains("descriptor 3 is not a listening Unix stream socket"), "\(closed.stderr)")
    }

    @Test(.enabled(if: activator != nil), .timeLimit(.minutes(3)))
    func aDatagramSocketIsRefused() throws {
        let s = TemporaryDirectory("assetpack-activation-datagram")
        try FileManager.default.createDirectory(atPath: s.container, withIntermediateDirectories: true)
        let socket = s.container + "/daemon.sock"
        let activator = try Child(Self.activator!, ["--datagram", "-l", socket, CLI.binary, "daemon", "--container", s.container])
        #expect(eventually(timeout: 30) { activator.stderr.contains("Listening on") }, "\(activator.stderr)")
        // A datagram "connection" wakes systemd-socket-activate, which execs the daemon.
        _ = try? Program.run("/usr/bin/python3", ["-c", "import socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b'x', '\(socket)')"])
        #expect(activator.wait(timeout: 30) && activator.exitStatus == 1, "\(activator.stderr)")
        #expect(activator.stderr.contains("descriptor 3 is not a listening Unix stream socket: Socket type not supported"), "\(activator.stderr)")
    }

    @Test(.timeLimit(.minutes(3))) func variablesForAnotherProcessAreIgnored() throws {
        let s = TemporaryDirectory("assetpack-activation-other")
        let daemon = try Child("/bin/sh", ["-c", "export LISTEN_PID=1 LISTEN_FDS=1; exec \"$0\" daemon --container \"$1\" 3</dev/null",
                                           CLI.binary, s.container])
        #expect(eventually(timeout: 30) { daemon.stderr.contains("serving") }, "\(daemon.stderr)")
        #expect(!daemon.stderr.contains("socket from systemd"))
        daemon.signal(SIGTERM)
        #expect(daemon.wait(timeout: 20) && daemon.exitStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: s.container + "/daemon.sock"))
    }

    /// `systemd-analyze verify` (as the user manager reads them) accepts the
    /// units in contrib/systemd, as an instance, with `ExecStart` pointing at
    /// the built binary (verify checks that it is executable).
    @Test(.enabled(if: analyzer != nil), .timeLimit(.minutes(3)))
    func systemdAcceptsTheUnits() throws {
        let s = TemporaryDirectory("assetpack-units")
        let contrib = repositoryRoot + "/contrib/systemd/"
        let service = try String(contentsOfFile: contrib + "assetpack-daemon@.service", encoding: .utf8)
        #expect(service.contains("ExecStart=/usr/local/bin/assetpack daemon --container %h/.local/share/assetpacks/%i\n"))
        try s.write("units/assetpack-daemon@test.service",
                    Array(service.replacingOccurrences(of: "/usr/local/bin/assetpack", with: CLI.binary).utf8))
        try s.write("units/assetpack-daemon@test.socket", try s.readFile(contrib + "assetpack-daemon@.socket"))
        try FileManager.default.createDirectory(atPath: s.file("runtime"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = s.file("runtime")
        let r = try Program.run(Self.analyzer!, ["--user", "verify", s.file("units/assetpack-daemon@test.socket"),
                                                 s.file("units/assetpack-daemon@test.service")], environment: environment)
        #expect(r.status == 0 && r.stderr.isEmpty && r.out.isEmpty, "\(r.stderr)\(r.out)")
    }
}

extension TemporaryDirectory {
    /// The bytes of a file anywhere.
    func readFile(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
}
