import Foundation
import Synchronization
import AssetArchive
import AssetPacks

/// Descriptor handouts per second: in-process, through the daemon, and a
/// bare 1-byte Unix-socket round trip as the floor, all in one run.
///
/// Each figure is the median of `--runs` rounds of `--seconds` each, after a
/// warm-up, with the scenarios interleaved round by round; with N threads,
/// each thread has its own client and connection and the figure is their sum. Every handout is a descriptor that is
/// received and closed; nothing is read through it.
enum Bench {
    static func run(_ options: Options) throws {
        let assetpack = options.string("assetpack")
        let seconds = options.double("seconds", default: 1.5)
        let runs = options.int("runs", default: 3)
        let root = NSTemporaryDirectory() + "assetpack-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let container = GroupContainer(path: root + "/container")

        var noise = [UInt8](repeating: 0, count: 65536)
        var x: UInt64 = 0x9e37_79b9_7f4a_7c15
        for i in noise.indices { x ^= x << 13; x ^= x >> 7; x ^= x << 17; noise[i] = UInt8(truncatingIfNeeded: x) }
        let text = Array(String(repeating: "a line of text that deflates\n", count: 700).utf8)
        try ArchiveWriter.write([
            .init(path: "media/clip.bin", source: .bytes(noise), compression: .stored),
            .init(path: "text/notes.txt", source: .bytes(text), compression: .deflated),
        ], comment: PackDescription(id: "bench", downloadPolicy: .onDemand, platforms: [.linux]).archiveComment, to: root + "/bench.zip")
        let manager = try AssetPackManager(container: container)
        try manager.installPack(at: root + "/bench.zip")

        let daemon = try spawn(assetpack, ["daemon", "--container", container.path])
        defer { daemon.terminate(); daemon.waitUntilExit() }
        let echoPath = root + "/echo.sock", fdEchoPath = root + "/echo-fd.sock"
        let echo = try spawn("/proc/self/exe", ["echo-server", "--socket", echoPath])
        let fdEcho = try spawn("/proc/self/exe", ["echo-server", "--socket", fdEchoPath, "--pass-fd", root + "/bench.zip"])
        defer { for p in [echo, fdEcho] { p.terminate(); p.waitUntilExit() } }
        for path in [container.daemonSocketPath, echoPath, fdEchoPath] { try waitForListener(path) }

        typealias Make = @Sendable () throws -> (@Sendable () throws -> Void)
        var scenarios: [(name: String, threads: Int, make: Make)] = []
        for threads in [1, 2] {
            scenarios.append(("in-process descriptor, stored member, \(threads) thread(s)", threads, {
                { _ = try manager.descriptor(for: "media/clip.bin", searchingInAssetPackWithID: "bench") }
            }))
        }
        scenarios.append(("in-process descriptor, deflated member (sealed memfd), 1 thread", 1, {
            { _ = try manager.descriptor(for: "text/notes.txt", searchingInAssetPackWithID: "bench") }
        }))
        for threads in [1, 2, 4] {
            scenarios.append(("daemon descriptor, stored member, \(threads) client(s)", threads, {
                let client = try AssetPackClient.connect(container: container)
                return { _ = try client.descriptor(for: "media/clip.bin", searchingInAssetPackWithID: "bench") }
            }))
        }
        scenarios.append(("daemon descriptor, deflated member (sealed memfd), 1 client", 1, {
            let client = try AssetPackClient.connect(container: container)
            return { _ = try client.descriptor(for: "text/notes.txt", searchingInAssetPackWithID: "bench") }
        }))
        for threads in [1, 2, 4] {
            scenarios.append(("bare 1-byte Unix socket round trip, \(threads) client(s)", threads, { try roundTrip(echoPath) }))
        }
        scenarios.append(("1-byte round trip carrying a descriptor (SCM_RIGHTS), 1 client", 1, { try roundTrip(fdEchoPath) }))

        // Rounds interleave the scenarios, so that load from elsewhere on the
        // machine spreads over all of them rather than landing on one.
        var samples = [[Double]](repeating: [], count: scenarios.count)
        for _ in 0..<runs {
            for (i, scenario) in scenarios.enumerated() {
                samples[i].append(try rateOf(threads: scenario.threads, seconds: seconds, scenario.make))
            }
        }
        var results: [String: [String: Int]] = [:]
        for (i, scenario) in scenarios.enumerated() {
            let sorted = samples[i].sorted()
            results[scenario.name] = ["median": Int(median(sorted)), "min": Int(sorted.first ?? 0), "max": Int(sorted.last ?? 0)]
            FileHandle.standardError.write(Data("\(scenario.name): \(Int(median(sorted)))/s (min \(Int(sorted.first ?? 0)), max \(Int(sorted.last ?? 0)))\n".utf8))
        }

        report([
            "method": "\(runs) interleaved rounds of \(seconds) s per scenario, each after a 0.3 s warm-up; per-thread clients; \(ProcessInfo.processInfo.activeProcessorCount) CPUs",
            "perSecond": results,
        ])
    }

    /// A closure that sends one byte on its own connection to `path` and
    /// waits for the answer (closing any descriptor that comes with it).
    static func roundTrip(_ path: String) throws -> @Sendable () throws -> Void {
        final class Box: Sendable { let socket: UnixSocket; init(_ s: consuming UnixSocket) { socket = s } }
        let box = Box(try UnixSocket.connect(to: path))
        return {
            try box.socket.sendAll([1])
            var byte: [UInt8] = [0]
            let n = try byte.withUnsafeMutableBytes { b in Result { () throws(Errno) in try box.socket.receive(into: b).count } }.get()
            guard n == 1 else { throw Errno.connectionReset.with(operation: "echo ended") }
        }
    }

    /// Operations per second of `threads` threads, each running its own
    /// closure from `make` for `seconds`.
    static func rateOf(threads: Int, seconds: Double, _ make: @escaping @Sendable () throws -> (@Sendable () throws -> Void)) throws -> Double {
        let bodies = try (0..<threads).map { _ in try make() }
        for body in bodies { let until = Monotonic.now + 0.3; while Monotonic.now < until { try body() } }
        let total = Atomic<Int>(0)
        let failure = Mutex<String?>(nil)
        let group = DispatchGroup()
        let start = Monotonic.now
        let deadline = start + seconds
        for body in bodies {
            group.enter()
            Thread {
                defer { group.leave() }
                var n = 0
                do {
                    while true {
                        for _ in 0..<64 { try body() }
                        n += 64
                        if Monotonic.now >= deadline { break }
                    }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                total.add(n, ordering: .relaxed)
            }.start()
        }
        group.wait()
        let elapsed = Monotonic.now - start
        if let message = failure.withLock({ $0 }) { throw Errno.ioError.with(operation: message) }
        return Double(total.load(ordering: .relaxed)) / elapsed
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func spawn(_ program: String, _ arguments: [String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        return p
    }

    /// Waits (up to 10 s) until something accepts connections at `path`.
    static func waitForListener(_ path: String) throws {
        let deadline = Monotonic.now + 10
        while true {
            if (try? UnixSocket.connect(to: path)) != nil { return }
            guard Monotonic.now < deadline else { throw Errno.timedOut.with(operation: "nothing listens", path: path) }
            Monotonic.sleep(0.01)
        }
    }
}
