import Foundation
import AssetPacks
import AssetSystem
import AssetStore

/// The hidden `--worker` subcommands that scenarios start as separate
/// processes.
///
///     --worker reader CONTAINER PACK PATHS-FILE SECONDS SEED
///     --worker clock SECONDS SEED
///     --worker installer CONTAINER PACK SECONDS normal|background ZIP…
///     --worker profile CONTAINER PACK PATHS-FILE COUNT random|hot
///     --worker status-watcher CONTAINER PACK COUNT
///     --worker pipe-reader COUNT
///     --worker echo SOCKET
enum Workers {
    /// What a reader reports.
    struct ReaderReport: Codable {
        var ops: Int
        var seconds: Double
        var batch: Int
        var histogram: [[UInt64]]
        /// The longest timed batch (``batch`` reads), nanoseconds.
        var longest: UInt64
        /// Timed batches that took more than 2 ms.
        var over2ms: Int
        /// What the reader's thread went through in the timed chunks
        /// (4,096 reads) that held a batch over 2 ms: ``SlowChunks``.
        var slow: SlowChunks
        /// Timed chunks, and the minor page faults taken in all of them.
        var timedChunks = 0
        var timedMinorFaults = 0
    }

    /// The timed chunks holding a batch over 2 ms, by what the reader's
    /// thread went through during the chunk (`getrusage(RUSAGE_THREAD)`
    /// before and after each timed chunk — two calls per 4,096 reads):
    /// whether it was taken off the CPU by the scheduler (an involuntary
    /// context switch), gave it up itself (a voluntary one: waiting for a
    /// lock, for I/O), took a major page fault (a page read from disk), or
    /// none of these — a stall of the store's own making on the CPU.
    struct SlowChunks: Codable {
        var chunks = 0
        var preempted = 0
        var blocked = 0
        var majorFaults = 0
        var onCPU = 0
        /// Chunks whose time off the CPU (wall time minus the thread's user
        /// and system time) was at least their slowest batch.
        var offCPUCovers = 0
        /// The most of a slow batch that the chunk's time off the CPU does
        /// not account for (slowest batch − off-CPU time, at least 0), ns:
        /// an upper bound on a stall spent running.
        var unexplained: UInt64 = 0
        /// Chunks whose time waiting for a CPU while runnable (the
        /// scheduler's run delay, `/proc/thread-self/schedstat`) was at
        /// least their slowest batch.
        var waitCovers = 0
        /// Chunks without a voluntary switch whose time neither running
        /// nor waiting for a CPU was at least their slowest batch: time
        /// the host took the vCPU away while the thread ran on it. With
        /// `CONFIG_PARAVIRT_TIME_ACCOUNTING` a task's run time leaves out
        /// steal, so wall − run time − run delay is the steal (or time
        /// asleep, which a chunk without a voluntary switch has none of).
        var stealCovers = 0
        /// The most steal (as above) seen in one slow chunk, ns.
        var stolen: UInt64 = 0
        /// Minor page faults the thread took in the slow chunks, all of
        /// them, and the most in one. (A first touch of memory the host has
        /// taken back — free page reporting, a balloon — costs the host's
        /// fault as well, which the guest sees as time on the CPU.)
        var minorFaults = 0
        var mostMinorFaults = 0
        /// When the first 64 slow chunks began and ended (`CLOCK_MONOTONIC`,
        /// ns): to line them up with a trace recorded on the same clock
        /// (`perf record -k CLOCK_MONOTONIC`).
        var windows: [[UInt64]] = []

        mutating func merge(_ other: SlowChunks) {
            chunks += other.chunks; preempted += other.preempted; blocked += other.blocked
            majorFaults += other.majorFaults; onCPU += other.onCPU; offCPUCovers += other.offCPUCovers
            unexplained = max(unexplained, other.unexplained)
            waitCovers += other.waitCovers; stealCovers += other.stealCovers; stolen = max(stolen, other.stolen)
            minorFaults += other.minorFaults; mostMinorFaults = max(mostMinorFaults, other.mostMinorFaults)
            windows += other.windows.prefix(max(0, 64 - windows.count))
        }
    }

    /// The calling thread's run time and run delay in nanoseconds, from
    /// `/proc/thread-self/schedstat` (kept open, read again at offset 0).
    private final class SchedStat {
        private let fd: Int32

        init() { fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC) }
        deinit { if fd >= 0 { close(fd) } }

        /// (run time, time runnable but waiting for a CPU), or zeros.
        func now() -> (run: UInt64, delay: UInt64) {
            var buffer = [UInt8](repeating: 0, count: 96)
            let n = fd < 0 ? -1 : pread(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return (0, 0) }
            let fields = buffer[..<n].split(separator: UInt8(ascii: " ")).prefix(2).map { UInt64(String(decoding: $0, as: UTF8.self)) ?? 0 }
            return fields.count == 2 ? (fields[0], fields[1]) : (0, 0)
        }
    }

    /// The calling thread's resource use (`RUSAGE_THREAD`).
    private struct ThreadUse {
        var involuntary: Int
        var voluntary: Int
        var majorFaults: Int
        var minorFaults: Int
        var cpu: UInt64

        static func now() -> ThreadUse {
            var u = rusage()
            getrusage(1 /* RUSAGE_THREAD */, &u)
            let ns = { (t: timeval) in UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_usec) * 1000 }
            return ThreadUse(involuntary: u.ru_nivcsw, voluntary: u.ru_nvcsw, majorFaults: u.ru_majflt, minorFaults: u.ru_minflt,
                             cpu: ns(u.ru_utime) + ns(u.ru_stime))
        }
    }

    /// What an installer reports.
    struct InstallerReport: Codable {
        var installs: Int
        var seconds: Double
    }

    static func run(_ arguments: [String]) throws {
        guard let kind = arguments.first else { throw BenchError.usage("--worker needs a kind") }
        let a = Array(arguments.dropFirst())
        switch kind {
        case "reader" where a.count == 5:
            guard let seconds = Double(a[3]), let seed = UInt64(a[4]) else { throw BenchError.usage("bad reader arguments") }
            try reader(container: a[0], pack: a[1], pathsFile: a[2], seconds: seconds, seed: seed)
        case "clock" where a.count == 2:
            guard let seconds = Double(a[0]), let seed = UInt64(a[1]) else { throw BenchError.usage("bad clock arguments") }
            try clockOnly(seconds: seconds, seed: seed)
        case "installer" where a.count >= 5:
            guard let seconds = Double(a[2]), ["normal", "background"].contains(a[3]) else { throw BenchError.usage("bad installer arguments") }
            try installer(container: a[0], pack: a[1], seconds: seconds, priority: a[3] == "background" ? .background : .normal,
                          zips: Array(a[4...]))
        case "profile" where a.count == 5:
            guard let count = Int(a[3]), count > 0 else { throw BenchError.usage("bad profile arguments") }
            try profile(container: a[0], pack: a[1], pathsFile: a[2], count: count, order: a[4])
        case "status-watcher" where a.count == 3:
            guard let count = Int(a[2]) else { throw BenchError.usage("bad status-watcher arguments") }
            try StatusScenario.watch(container: a[0], pack: a[1], count: count)
        case "echo" where a.count == 1:
            try EchoSocket.worker(socketPath: a[0])
        case "pipe-reader" where a.count == 1:
            guard let count = Int(a[0]) else { throw BenchError.usage("bad pipe-reader arguments") }
            try StatusScenario.readPipe(count: count)
        default:
            throw BenchError.usage("unknown worker \(arguments)")
        }
    }

    /// Reads members by path in random order for `seconds`, alternating
    /// untimed chunks (for reads/s) and chunks timed as ``Competition``
    /// times them (for the latency histogram).
    static func reader(container: String, pack: String, pathsFile: String, seconds: Double, seed: UInt64) throws {
        let manager = try AssetPackManager(container: .init(path: container))
        let paths = try String(contentsOfFile: pathsFile, encoding: .utf8).split(separator: "\n").map(String.init)
        var op = ContentsRead(manager: manager, pack: pack, paths: paths, consume: false)
        try timedLoop(&op, items: paths.count, seconds: seconds, seed: seed)
    }

    /// The machine's own floor for ``reader(container:pack:pathsFile:seconds:seed:)``:
    /// the same loop, timed the same way, over an operation that reads
    /// nothing — its longest batch is the longest the machine kept a
    /// thread that only reads the clock from running.
    static func clockOnly(seconds: Double, seed: UInt64) throws {
        var op = NoRead()
        try timedLoop(&op, items: 10_000, seconds: seconds, seed: seed)
    }

    /// An operation that reads nothing: ``clockOnly(seconds:seed:)``.
    struct NoRead: Operation {
        @inline(never)
        mutating func run(_ item: Int) throws -> Int { item }
    }

    /// Runs `op` over `items` in random order for `seconds` after the
    /// handshake, alternating untimed and timed chunks, and reports.
    private static func timedLoop<Op: Operation>(_ op: inout Op, items: Int, seconds: Double, seed: UInt64) throws {
        let warm = Array(0 ..< Int32(items))
        let warmNs = try warm.withUnsafeBufferPointer { try Contender.pass(&op, $0) }
        let mean = max(1, Double(warmNs) / Double(items))
        let batch = mean >= 10 * Clock.overhead ? 1 : min(4096, Int((10 * Clock.overhead / mean).rounded(.up)))
        let chunk = 4096 - 4096 % batch
        let order = randomOrder(count: 1 << 20, items: items, seed: seed)
        handshake()

        var histogram = Histogram()
        var longest: UInt64 = 0
        var over2ms = 0
        var slow = SlowChunks()
        let schedstat = SchedStat()
        var timedChunks = 0
        var timedMinorFaults = 0
        var untimedOps = 0
        var untimedNs: UInt64 = 0
        let deadline = Clock.now() + UInt64(seconds * 1e9)
        var at = 0
        var timed = false
        try order.withUnsafeBufferPointer { all in
            while Clock.now() < deadline {
                if at + chunk > all.count { at = 0 }
                let slice = UnsafeBufferPointer(rebasing: all[at ..< at + chunk])
                if timed {
                    let before = ThreadUse.now()
                    let scheduledBefore = schedstat.now()
                    let began = Clock.now()
                    let slowest = try Contender.batches(&op, slice, batch: batch, into: &histogram)
                    let ended = Clock.now()
                    let after = ThreadUse.now()
                    timedChunks += 1
                    timedMinorFaults += after.minorFaults - before.minorFaults
                    longest = max(longest, slowest)
                    if slowest > 2_000_000 {
                        over2ms += 1
                        let scheduledAfter = schedstat.now()
                        slow.chunks += 1
                        if slow.windows.count < 64 { slow.windows.append([began, ended]) }
                        let wall = ended &- began
                        let run = scheduledAfter.run &- scheduledBefore.run
                        let delay = scheduledAfter.delay &- scheduledBefore.delay
                        if delay >= slowest { slow.waitCovers += 1 }
                        if after.voluntary == before.voluntary, run > 0 {
                            let steal = wall > run &+ delay ? wall - run - delay : 0
                            slow.stolen = max(slow.stolen, steal)
                            if steal >= slowest { slow.stealCovers += 1 }
                        }
                        let off = (ended &- began) > (after.cpu &- before.cpu) ? (ended &- began) - (after.cpu &- before.cpu) : 0
                        if off >= slowest { slow.offCPUCovers += 1 }
                        slow.unexplained = max(slow.unexplained, slowest > off ? slowest - off : 0)
                        let preempted = after.involuntary > before.involuntary
                        let blocked = after.voluntary > before.voluntary
                        let faulted = after.majorFaults > before.majorFaults
                        slow.minorFaults += after.minorFaults - before.minorFaults
                        slow.mostMinorFaults = max(slow.mostMinorFaults, after.minorFaults - before.minorFaults)
                        if preempted { slow.preempted += 1 }
                        if blocked { slow.blocked += 1 }
                        if faulted { slow.majorFaults += 1 }
                        if !preempted && !blocked && !faulted { slow.onCPU += 1 }
                    }
                } else {
                    untimedNs &+= try Contender.pass(&op, slice)
                    untimedOps += chunk
                }
                timed.toggle()
                at += chunk
            }
        }
        try report(ReaderReport(ops: untimedOps, seconds: Double(untimedNs) / 1e9, batch: batch, histogram: histogram.sparse,
                                longest: longest, over2ms: over2ms, slow: slow,
                                timedChunks: timedChunks, timedMinorFaults: timedMinorFaults))
    }

    /// Installs the given pack files in turn, as updates of `pack`, at
    /// `priority`, until `seconds` have passed.
    static func installer(container: String, pack: String, seconds: Double, priority: AssetPackManager.WorkPriority, zips: [String]) throws {
        let manager = try AssetPackManager(container: .init(path: container))
        handshake()
        let start = Clock.now()
        let deadline = start + UInt64(seconds * 1e9)
        var installs = 0
        while Clock.now() < deadline {
            try manager.installPack(at: zips[installs % zips.count], id: pack, priority: priority)
            installs += 1
        }
        try report(InstallerReport(installs: installs, seconds: Double(Clock.now() - start) / 1e9))
    }

    /// For profilers (`perf`, `valgrind --tool=callgrind`): `count` reads of
    /// `contents(at:)` in one untimed loop, over random paths of the file or
    /// the first path only (`hot`); prints the mean time per read.
    static func profile(container: String, pack: String, pathsFile: String, count: Int, order kind: String) throws {
        let manager = try AssetPackManager(container: .init(path: container))
        let paths = try String(contentsOfFile: pathsFile, encoding: .utf8).split(separator: "\n").map(String.init)
        var op = ContentsRead(manager: manager, pack: pack, paths: paths, consume: false)
        let order = kind == "hot" ? [Int32](repeating: 0, count: count) : randomOrder(count: count, items: paths.count, seed: 1)
        let ns = try order.withUnsafeBufferPointer { try Contender.pass(&op, $0) }
        print("\(Format.fixed(Double(ns) / Double(count), decimals: 1)) ns per read")
    }

    /// Writes `ready`, then waits for the parent's line.
    private static func handshake() {
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        _ = readLine()
    }

    private static func report<T: Encodable>(_ value: T) throws {
        FileHandle.standardOutput.write(try JSONEncoder().encode(value))
    }
}
