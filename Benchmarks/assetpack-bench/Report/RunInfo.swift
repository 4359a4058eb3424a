import Foundation

/// Where and when a run happened, for the report's heading.
struct RunInfo {
    let date: Date
    let quick: Bool
    var seconds: Double = 0
    let machine: String
    let commit: String

    init(quick: Bool) {
        date = Date()
        self.quick = quick
        machine = RunInfo.describeMachine()
        commit = RunInfo.gitCommit()
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
