import Foundation

/// Where and when a run happened, for the report's heading.
struct RunInfo {
    let date: Date
    let quick: Bool
    var seconds: Double = 0
    let machine: String
    let commit: String
    /// CPU use when the run started, to tell at the end how much of the
    /// machine other processes took meanwhile.
    let cpuAtStart: CPUUse
    /// The share of the machine's CPU time that other processes used during
    /// the run, and the share the hypervisor took (steal); set at the end.
    var otherShare = 0.0
    var stealShare = 0.0
    /// The kernel's own reclaim of idle memory (DAMON) when the run started.
    let reclaimAtStart: IdleReclaim?
    /// What it did during the run, in words; set at the end.
    var reclaim: String?

    init(quick: Bool) {
        date = Date()
        self.quick = quick
        machine = RunInfo.describeMachine()
        commit = RunInfo.gitCommit()
        cpuAtStart = CPUUse.now()
        reclaimAtStart = IdleReclaim.now()
    }

    /// Records how much CPU time others took since the start, and what the
    /// kernel paged out meanwhile.
    mutating func finish(seconds: Double) {
        self.seconds = seconds
        (otherShare, stealShare) = CPUUse.now().shares(since: cpuAtStart, seconds: seconds)
        if let start = reclaimAtStart, let end = IdleReclaim.now() {
            let idle = "DAMON pages out memory idle for \(Format.fixed(end.idleSeconds, decimals: 0)) s or more"
            if let before = start.pagedOut, let after = end.pagedOut {
                reclaim = idle + ": \(Format.bytes(Double(after &- before))) paged out during the run "
                    + "(the benchmark data's page cache among what it may take)"
            } else {
                reclaim = idle
            }
        }
    }

    var dateText: String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return f.string(from: date)
    }

    /// CPU model, cores, memory, kernel and compiler.
    static func describeMachine() -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(model), \(cores) cores, \(Format.fixed(memory, decimals: 1)) GiB, Linux \(release), \(compiler)"
    }

    static var compiler: String {
        #if compiler(>=6.3)
        return "Swift 6.3+"
        #elseif compiler(>=6.2)
        return "Swift 6.2"
        #else
        return "Swift 6"
        #endif
    }

    /// The short commit of the working tree the harness was run from, with
    /// `+dirty` when it has changes; "unknown" outside a git checkout.
    static func gitCommit() -> String {
        let root = Report.benchmarksDirectory
        func git(_ args: [String]) -> String? {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = ["git", "-C", root] + args
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            do { try p.run() } catch { return nil }
            let data = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else { return nil }
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let head = git(["rev-parse", "--short", "HEAD"]) else { return "unknown" }
        let dirty = git(["status", "--porcelain", "--untracked-files=no"]).map { !$0.isEmpty } ?? false
        return dirty ? head + "+dirty" : head
    }
}

/// Machine-wide and own CPU time, in seconds: `/proc/stat`'s busy and steal
/// time of all CPUs, and this process's and its waited-for children's
/// user and system time (`getrusage`).
struct CPUUse {
    var busy = 0.0
    var steal = 0.0
    var own = 0.0

    static func now() -> CPUUse {
        var use = CPUUse()
        let stat = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? ""
        if let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) {
            let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
            let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
            if ticks.count >= 8, hz > 0 {
                // user nice system idle iowait irq softirq steal
                use.busy = (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]) / hz
                use.steal = ticks[7] / hz
            }
        }
        for who in [RUSAGE_SELF.rawValue, RUSAGE_CHILDREN.rawValue] {
            var usage = rusage()
            getrusage(who, &usage)
            use.own += Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        }
        return use
    }

    /// The shares of the machine's CPU time that other processes used and
    /// the hypervisor stole between `start` and this sample, `seconds` apart.
    func shares(since start: CPUUse, seconds: Double) -> (other: Double, steal: Double) {
        let capacity = max(seconds, 1e-9) * Double(ProcessInfo.processInfo.activeProcessorCount)
        return (max(0, (busy - start.busy) - (own - start.own)) / capacity, (steal - start.steal) / capacity)
    }
}

/// DAMON's schemes that page out idle memory, where the kernel runs them
/// (`/sys/kernel/mm/damon/admin`): page cache a benchmark left idle for
/// that long may be gone when it reads again, whatever "warm" meant.
struct IdleReclaim {
    /// The shortest idle time a `pageout` scheme waits for, in seconds.
    var idleSeconds: Double
    /// Bytes its schemes have paged out so far, when the stats could be
    /// refreshed (writing `update_schemes_stats` takes root).
    var pagedOut: UInt64?

    static let root = "/sys/kernel/mm/damon/admin/kdamonds"

    /// Running `pageout` schemes now, or `nil` when there are none.
    static func now() -> IdleReclaim? {
        func read(_ path: String) -> String? {
            (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func entries(_ path: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { Int($0) != nil }.map { path + "/" + $0 }
        }
        var idle = Double.infinity
        var pagedOut: UInt64? = 0
        for kdamond in entries(root) where read(kdamond + "/state") == "on" {
            let refreshed = (try? "update_schemes_stats".write(toFile: kdamond + "/state", atomically: false, encoding: .utf8)) != nil
            for context in entries(kdamond + "/contexts") {
                let aggregation = Double(read(context + "/monitoring_attrs/intervals/aggr_us") ?? "") ?? 0
                for scheme in entries(context + "/schemes") where read(scheme + "/action") == "pageout" {
                    let age = Double(read(scheme + "/access_pattern/age/min") ?? "") ?? 0
                    idle = min(idle, age * aggregation / 1e6)
                    let applied = refreshed ? UInt64(read(scheme + "/stats/sz_applied") ?? "") : nil
                    pagedOut = applied.flatMap { a in pagedOut.map { $0 &+ a } }
                }
            }
        }
        return idle.isFinite ? IdleReclaim(idleSeconds: idle, pagedOut: pagedOut) : nil
    }
}
