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

    init(quick: Bool) {
        date = Date()
        self.quick = quick
        machine = RunInfo.describeMachine()
        commit = RunInfo.gitCommit()
        cpuAtStart = CPUUse.now()
    }

    /// Records how much CPU time others took since the start.
    mutating func finish(seconds: Double) {
        self.seconds = seconds
        (otherShare, stealShare) = CPUUse.now().shares(since: cpuAtStart, seconds: seconds)
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
