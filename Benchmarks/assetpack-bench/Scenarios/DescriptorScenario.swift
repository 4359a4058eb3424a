import Foundation
import AssetPacks
import AssetSystem
import AssetStore
import CSched

/// `descriptor`: descriptor handouts per second, each descriptor closed at
/// once, on the `small-read` members.
///
/// - `descriptor/stored`: a new descriptor of the archive positioned at a
///   stored member; against `open` of the extracted file, and against a bare
///   Unix-socket round trip (what a handout through the daemon adds at least).
/// - `descriptor/memfd`: a deflated member inflated into a sealed `memfd`;
///   against `open` of the extracted plain file, and against the floor of
///   a first handout: libdeflate's whole-member inflate of the same member
///   into a reused buffer (`inflate`).
/// - `descriptor/standalone`: a stored member copied into a sealed `memfd`
///   (offset 0, exactly the member); against `open` of the extracted file,
///   and against `memcpy` of the member from the archive's mapping into a
///   reused buffer (`copy`).
///   With 100,000 members in random order and the manager's default cache
///   (128 files), nearly every handout of these two makes a new file: they
///   measure the first handout of a member.
/// - `descriptor/memfd-repeat`, `descriptor/standalone-repeat`: the same
///   handouts of 64 members that stay in the cache: each a `dup` of the
///   kept file; against `open` of the same 64 files.
/// - `descriptor/stored-own`: `descriptor/stored` with `.ownOffset` (a new
///   open description by name, as the daemon and the C API ask for).
/// - `descriptor/daemon`: a stored member's descriptor from `assetpack
///   daemon` (another process) over its socket, `SCM_RIGHTS`; against the
///   bare one-byte Unix-socket round trip; with a note of the daemon's
///   threads and resident memory with 10,000 idle clients connected. Needs
///   `assetpack` built beside this executable (`swift build -c release`).
/// - `descriptor/daemon-batch`: 16 stored members' descriptors in one batch
///   request; against 16 requests in turn and 16 bare round trips.
enum DescriptorScenario {
    static let scenario = Scenario(
        "descriptor", "descriptor handouts per second: stored (archive range), deflated (sealed memfd), standalone"
    ) { ctx in try run(ctx) }

    static func run(_ ctx: Context) throws -> [ScenarioResult] {
        let stored = try SmallDataset.prepare(ctx.workspace, deflated: false)
        let text = try SmallDataset.prepare(ctx.workspace, deflated: true)
        let storedManager = try AssetPackManager(container: .init(path: stored.container.path))
        let textManager = try AssetPackManager(container: .init(path: text.container.path))
        let plan = ctx.scale.plan
        let range = try Competition.run([
            Contender("assetpacks", DescriptorHandout(manager: storedManager, pack: stored.packID, paths: stored.members.paths, options: [])),
            Contender("files", FilesOpen(paths: stored.filePaths)),
            Contender("unix-socket", UnixSocketRoundTrip(socket: try EchoSocket())),
        ], items: stored.members.count, plan: plan, seed: 0xD1)
        let textStreams = try ArchiveStreams(zipPath: text.zipPath, paths: text.members.paths)
        let storedStreams = try ArchiveStreams(zipPath: stored.zipPath, paths: stored.members.paths)
        let deflate = DeflateStreams(raw: textStreams.slices, sizes: text.members.sizes, adler32: try text.adler32())
        let memfd = try withExtendedLifetime(textStreams) {
            try Competition.run([
                Contender("assetpacks", bytes: text.members.sizes,
                          DescriptorHandout(manager: textManager, pack: text.packID, paths: text.members.paths, options: [])),
                Contender("files", bytes: text.members.sizes, FilesOpen(paths: text.filePaths)),
                Contender("inflate", bytes: text.members.sizes,
                          LibdeflateInflate(streams: deflate, buffer: ByteBuffer(capacity: text.largest), decompressor: .init())),
                Contender("inflate+memfd", bytes: text.members.sizes,
                          InflateIntoMemoryFile(inflate: LibdeflateInflate(streams: deflate, buffer: ByteBuffer(capacity: text.largest),
                                                                           decompressor: .init()))),
            ], items: text.members.count, plan: plan, seed: 0xD2)
        }
        let standalone = try withExtendedLifetime(storedStreams) {
            try Competition.run([
                Contender("assetpacks", bytes: stored.members.sizes,
                          DescriptorHandout(manager: storedManager, pack: stored.packID, paths: stored.members.paths, options: .standalone)),
                Contender("files", bytes: stored.members.sizes, FilesOpen(paths: stored.filePaths)),
                Contender("copy", bytes: stored.members.sizes,
                          MemberCopy(members: storedStreams.slices, buffer: ByteBuffer(capacity: stored.largest))),
                Contender("memfd", bytes: stored.members.sizes, CopyIntoMemoryFile(members: storedStreams.slices)),
            ], items: stored.members.count, plan: plan, seed: 0xD3)
        }
        let hot = 64
        let memfdRepeat = try Competition.run([
            Contender("assetpacks", bytes: Array(text.members.sizes.prefix(hot)),
                      DescriptorHandout(manager: textManager, pack: text.packID, paths: Array(text.members.paths.prefix(hot)), options: [])),
            Contender("files", bytes: Array(text.members.sizes.prefix(hot)), FilesOpen(paths: Array(text.filePaths.prefix(hot)))),
        ], items: hot, plan: plan, seed: 0xD5)
        let standaloneRepeat = try Competition.run([
            Contender("assetpacks", bytes: Array(stored.members.sizes.prefix(hot)),
                      DescriptorHandout(manager: storedManager, pack: stored.packID, paths: Array(stored.members.paths.prefix(hot)), options: .standalone)),
            Contender("files", bytes: Array(stored.members.sizes.prefix(hot)), FilesOpen(paths: Array(stored.filePaths.prefix(hot)))),
        ], items: hot, plan: plan, seed: 0xD6)
        let own = try Competition.run([
            Contender("assetpacks", DescriptorHandout(manager: storedManager, pack: stored.packID, paths: stored.members.paths, options: .ownOffset)),
            Contender("files", FilesOpen(paths: stored.filePaths)),
        ], items: stored.members.count, plan: plan, seed: 0xD7)
        var results = [
            ScenarioResult(name: "descriptor/stored",
                           summary: "descriptor of the archive at a stored member (1–16 KiB), a `dup` of the one kept open; files: `open`; unix-socket: one-byte round trip to an echo thread",
                           measurements: range),
            ScenarioResult(name: "descriptor/stored-own",
                           summary: "as `descriptor/stored` with `.ownOffset`: a new open description of the archive (`openat` by name) at the member; files: `open`",
                           measurements: own),
            ScenarioResult(name: "descriptor/memfd",
                           summary: "deflated text member (1–16 KiB) inflated into a sealed `memfd`; files: `open` of the plain file; "
                               + "inflate: libdeflate's inflate of the same member into a reused buffer (the floor of a first handout); "
                               + "inflate+memfd: the same, then a sealed `memfd` made by hand (`memfd_create`, `write`, seals, `close`)",
                           measurements: memfd, notes: [floorNote(memfd, floor: "inflate"), floorNote(memfd, floor: "inflate+memfd")]),
            ScenarioResult(name: "descriptor/standalone",
                           summary: "stored member (1–16 KiB) copied into a sealed `memfd`; files: `open`; "
                               + "copy: `memcpy` of the member from the archive's mapping into a reused buffer; "
                               + "memfd: a sealed `memfd` of the member made by hand (`memfd_create`, `write` from the mapping, seals, `close`)",
                           measurements: standalone, notes: [floorNote(standalone, floor: "copy"), floorNote(standalone, floor: "memfd")]),
            ScenarioResult(name: "descriptor/memfd-repeat",
                           summary: "deflated text members (1–16 KiB) handed out again: 64 members kept in the cache, each handout a `dup` of the sealed `memfd`; files: `open` of the same 64 plain files",
                           measurements: memfdRepeat),
            ScenarioResult(name: "descriptor/standalone-repeat",
                           summary: "stored members (1–16 KiB) asked for standalone again: 64 kept sealed `memfd`s, each handout a `dup`; files: `open` of the same 64 files",
                           measurements: standaloneRepeat),
        ]
        if let daemon = try DaemonProcess.start(executable: ctx.executable, container: stored.container,
                                                arguments: DaemonIdleClients.daemonArguments) {
            defer { daemon.stop() }
            results += try daemonCases(daemon, stored, plan)
        } else {
            Log.info("  descriptor/daemon skipped: no assetpack binary beside \(ctx.executable)")
        }
        return results
    }

    /// "first handout = N× the `floor` alone" (or `what` = …), from the p50s.
    static func floorNote(_ measurements: [Measurement], floor: String, what: String = "first handout") -> String {
        guard let ours = measurements.first(where: { $0.contender == "assetpacks" })?.p50,
              let alone = measurements.first(where: { $0.contender == floor })?.p50, alone > 0 else { return "no \(floor) figure" }
        return "\(what) = \(Format.ratio(ours / alone)) the \(floor) alone (p50 \(Format.duration(ours)) vs \(Format.duration(alone)))"
    }
}

/// What a program does by hand for a sealed memory file of a deflated
/// member: the inflate, then `memfd_create`, one `write`, the four seals
/// and `close` — no cache, no read-only descriptor, nothing made ahead.
struct InflateIntoMemoryFile: Operation {
    var inflate: LibdeflateInflate

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let size = try inflate.run(item)
        try makeAndCloseSealedMemoryFile(UnsafeRawPointer(inflate.buffer.pointer), size)
        return size
    }
}

/// A sealed memory file of `count` bytes at `bytes` made by hand
/// (`csched_sealed_memfd`), and closed.
@inline(__always)
func makeAndCloseSealedMemoryFile(_ bytes: UnsafeRawPointer?, _ count: Int) throws {
    let fd = csched_sealed_memfd(bytes, count)
    guard fd >= 0 else { throw PeerError("memfd: errno \(-fd)") }
    close(fd)
}

/// A sealed memory file of a stored member made by hand: `memfd_create`,
/// one `write` straight from the archive's mapping, the seals, `close`.
struct CopyIntoMemoryFile: Operation {
    let members: [UnsafeRawBufferPointer]

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let m = members[item]
        try makeAndCloseSealedMemoryFile(m.baseAddress, m.count)
        return m.count
    }
}

/// `memcpy` of one member's bytes into a reused buffer.
struct MemberCopy: Operation {
    let members: [UnsafeRawBufferPointer]
    let buffer: ByteBuffer

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let m = members[item]
        buffer.pointer.copyMemory(from: m.baseAddress!, byteCount: m.count)
        return Int(buffer.pointer.load(as: UInt8.self)) &+ m.count
    }
}

extension DescriptorScenario {
    /// `descriptor/daemon` and `descriptor/daemon-batch`, against the daemon
    /// `daemon` serves `stored` with; the first with a note of what 10,000
    /// idle clients cost the daemon.
    static func daemonCases(_ daemon: DaemonProcess, _ stored: SmallDataset, _ plan: Plan) throws -> [ScenarioResult] {
        let client = AssetPackClient(socketPath: stored.container.daemonSocketPath)
        let viaDaemon = try Competition.run([
            Contender("assetpacks", DaemonHandout(client: client, pack: stored.packID, paths: stored.members.paths)),
            Contender("unix-socket", UnixSocketRoundTrip(socket: try EchoSocket())),
            Contender("unix-socket-process", UnixSocketRoundTrip(socket: try EchoSocket(process: currentExecutable(), directory: NSTemporaryDirectory()))),
        ], items: stored.members.count, plan: plan, seed: 0xD4)
        let size = DaemonBatchHandout.size
        let batches = stored.members.count / size
        let viaBatches = try Competition.run([
            Contender("assetpacks", DaemonBatchHandout(client: client, pack: stored.packID, paths: stored.members.paths)),
            Contender("one-by-one", DaemonSinglesHandout(client: client, pack: stored.packID, paths: stored.members.paths)),
            Contender("unix-socket", UnixSocketRoundTrips(socket: try EchoSocket(), count: size)),
            Contender("unix-socket-process", UnixSocketRoundTrips(
                socket: try EchoSocket(process: currentExecutable(), directory: NSTemporaryDirectory()), count: size)),
        ], items: batches, plan: plan, seed: 0xD5)
        let placed = try placedDaemonCases(daemon, stored, plan)
        let idle = try DaemonIdleClients.measure(daemon, socketPath: stored.container.daemonSocketPath)
        let perMember = viaBatches.first { $0.contender == "assetpacks" }.map { Format.duration($0.p50 / Double(size)) } ?? "–"
        return [
            ScenarioResult(
                name: "descriptor/daemon",
                summary: "descriptor of a stored member from `assetpack daemon` over its socket (request, lookup, SCM_RIGHTS reply; "
                    + "SO_PEERCRED once per connection); unix-socket: one-byte round trip to an echo thread; "
                    + "unix-socket-process: the same to an echo process (the daemon's client also switches processes)",
                measurements: viaDaemon, notes: [idle]),
            ScenarioResult(
                name: "descriptor/daemon-batch",
                summary: "\(size) stored members' descriptors from `assetpack daemon` per operation: assetpacks one batch request "
                    + "(`descriptors(for:)`, one reply per member); one-by-one: \(size) requests in turn; unix-socket(-process): \(size) one-byte round trips to an echo thread (process)",
                measurements: viaBatches, notes: ["per member in a batch: \(perMember) (p50 / \(size))"]),
        ] + placed
    }

    /// `descriptor/daemon-one-cpu` and `descriptor/daemon-two-cpus`: the
    /// daemon against a round trip to an echo process with both servers
    /// placed alike (``Affinity``): on the client's CPU, then on another.
    /// Empty on a machine of one CPU.
    static func placedDaemonCases(_ daemon: DaemonProcess, _ stored: SmallDataset, _ plan: Plan) throws -> [ScenarioResult] {
        let all = Affinity.allowed()
        guard all.count >= 2 else { return [] }
        let client = AssetPackClient(socketPath: stored.container.daemonSocketPath)
        let echo = try EchoSocket(process: currentExecutable(), directory: NSTemporaryDirectory())
        guard let echoPID = echo.processID else { return [] }
        let size = DaemonBatchHandout.size
        var results: [ScenarioResult] = []
        for (label, server, words) in [("one-cpu", all[0], "all on one CPU"), ("two-cpus", all[1], "the client on one CPU, the daemon and the echo on another")] {
            let (single, batch) = try Affinity.placed(client: all[0], server: server, servers: [daemon.pid, echoPID], all: all) {
                (try Competition.run([
                    Contender("assetpacks", DaemonHandout(client: client, pack: stored.packID, paths: stored.members.paths)),
                    Contender("unix-socket-process", UnixSocketRoundTrip(socket: echo)),
                ], items: stored.members.count, plan: plan, seed: 0xD8),
                 try Competition.run([
                    Contender("assetpacks", DaemonBatchHandout(client: client, pack: stored.packID, paths: stored.members.paths)),
                    Contender("unix-socket-process", UnixSocketRoundTrips(socket: echo, count: size)),
                 ], items: stored.members.count / size, plan: plan, seed: 0xD9))
            }
            results.append(ScenarioResult(
                name: "descriptor/daemon-\(label)",
                summary: "as `descriptor/daemon`, placed with `sched_setaffinity`: \(words); unix-socket-process: a one-byte round trip to an echo process placed as the daemon",
                measurements: single, notes: [floorNote(single, floor: "unix-socket-process", what: "handout through the daemon")]))
            results.append(ScenarioResult(
                name: "descriptor/daemon-batch-\(label)",
                summary: "as `descriptor/daemon-batch` (\(size) members in one request), placed as `descriptor/daemon-\(label)`; unix-socket-process: \(size) round trips to the echo process",
                measurements: batch, notes: [floorNote(batch, floor: "unix-socket-process", what: "batch of \(size)")]))
        }
        return results
    }
}

/// A batch of ``size`` descriptors from the daemon in one request, closed at once.
struct DaemonBatchHandout: Operation {
    static let size = 16
    let client: AssetPackClient
    let pack: String
    let paths: [String]

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let start = item * Self.size
        var total = 0
        for result in try client.descriptors(for: Array(paths[start..<(start + Self.size)]), searchingInAssetPackWithID: pack) {
            total += Int(try result.get().length)
        }
        return total
    }
}

/// The same ``DaemonBatchHandout/size`` descriptors, one request each.
struct DaemonSinglesHandout: Operation {
    let client: AssetPackClient
    let pack: String
    let paths: [String]

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        var total = 0
        for path in paths[(item * DaemonBatchHandout.size)..<((item + 1) * DaemonBatchHandout.size)] {
            total += Int(try client.descriptor(for: path, searchingInAssetPackWithID: pack).length)
        }
        return total
    }
}

/// `count` bare round trips in turn.
struct UnixSocketRoundTrips: Operation {
    var one: UnixSocketRoundTrip
    let count: Int

    init(socket: EchoSocket, count: Int) {
        one = UnixSocketRoundTrip(socket: socket)
        self.count = count
    }

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        var total = 0
        for i in 0..<count { total &+= try one.run(item &+ i) }
        return total
    }
}

/// What idle clients cost the daemon: its threads and resident memory
/// (`/proc/PID`) before and with ``count`` connections that send nothing.
enum DaemonIdleClients {
    static let count = 10_000
    /// The daemon's limits let ``count`` connections of one user in.
    static let daemonArguments = ["--max-connections", String(count + 64), "--max-connections-per-user", String(count + 64),
                                  "--first-request-timeout", "600"]

    static func measure(_ daemon: DaemonProcess, socketPath: String) throws -> String {
        // Two descriptors per connection on this machine: ours and the daemon's.
        let limit = DescriptorLimit.raise(to: count + 512) ?? 0
        guard limit >= count + 512 else { return "idle clients not measured: ulimit -n allows \(limit) descriptors" }
        let pid = daemon.pid
        let before = (threads: threads(of: pid), rss: residentKiB(of: pid))
        final class Held {
            let socket: UnixSocket
            init(_ socket: consuming UnixSocket) { self.socket = socket }
        }
        var sockets: [Held] = []
        for _ in 0..<count {
            guard let socket = try? UnixSocket.connect(to: socketPath) else { break }
            sockets.append(Held(socket))
        }
        // Wait until the daemon holds them all (each is a descriptor there).
        let deadline = Monotonic.now + 60
        while descriptors(of: pid) < sockets.count, Monotonic.now < deadline { Monotonic.sleep(0.05) }
        let with = (threads: threads(of: pid), rss: residentKiB(of: pid))
        return "with \(Format.count(sockets.count)) idle clients connected the daemon had \(with.threads) threads "
            + "(\(before.threads) before) and \(with.rss / 1024) MiB resident (\(before.rss / 1024) MiB before): "
            + "\(String(format: "%.1f", Double(with.rss - before.rss) / Double(max(1, sockets.count)))) KiB per connection"
    }

    static func threads(of pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count) ?? 0
    }

    static func descriptors(of pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    static func residentKiB(of pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}

/// A descriptor from the daemon, closed at once.
struct DaemonHandout: Operation {
    let client: AssetPackClient
    let pack: String
    let paths: [String]

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let d = try client.descriptor(for: paths[item], searchingInAssetPackWithID: pack)
        return Int(d.length)
    }
}

/// `assetpack daemon` on a container, as a child process.
final class DaemonProcess {
    private let process: Process

    private init(_ process: Process) { self.process = process }

    /// Starts the daemon and waits for its "serving" line; `nil` when no
    /// `assetpack` binary sits beside `executable`.
    static func start(executable: String, container: GroupContainer, arguments: [String] = []) throws -> DaemonProcess? {
        let binary = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("assetpack").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return nil }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = ["daemon", "--container", container.path] + arguments
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        var line: [UInt8] = []
        while true {
            let byte = err.fileHandleForReading.readData(ofLength: 1)
            guard let b = byte.first else { throw BenchError.failed("assetpack daemon exited: \(String(decoding: line, as: UTF8.self))") }
            if b == 0x0a { break }
            line.append(b)
        }
        guard String(decoding: line, as: UTF8.self).contains("serving") else {
            p.terminate()
            throw BenchError.failed("assetpack daemon: \(String(decoding: line, as: UTF8.self))")
        }
        return DaemonProcess(p)
    }

    var pid: Int32 { process.processIdentifier }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
