import Foundation
import CSched

/// Which CPUs threads may run on (`sched_setaffinity`), so that a client and
/// the process it talks to can be measured on one CPU and on two, the same
/// way for every contender of a table. On a small VM the two cost very
/// different round trips (an idle vCPU has to be woken through the host),
/// and without a placement the scheduler picks one per pair of threads.
enum Affinity {
    /// CPUs this process may use now.
    static func allowed() -> [Int] {
        var cpus = [Int32](repeating: 0, count: 1024)
        let n = csched_get(&cpus, Int32(cpus.count))
        return n > 0 ? cpus.prefix(Int(n)).map(Int.init) : []
    }

    /// Lets thread (or process main thread) `tid` run on `cpus` only; 0 is
    /// the calling thread. Returns whether the kernel took it.
    @discardableResult
    static func set(_ tid: Int32, to cpus: [Int]) -> Bool {
        let list = cpus.map(Int32.init)
        return csched_set(tid, list, Int32(list.count)) == 0
    }

    /// Sets every thread of process `pid` (`/proc/PID/task`) to `cpus`;
    /// threads it starts later inherit it from theirs.
    @discardableResult
    static func set(process pid: Int32, to cpus: [Int]) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return !tasks.isEmpty && tasks.compactMap(Int32.init).allSatisfy { set($0, to: cpus) }
    }

    /// Runs `body` with the calling thread on `client` and processes
    /// `servers` on `server`, and puts all of them back on `all` after.
    static func placed<T>(client: Int, server: Int, servers: [Int32], all: [Int], _ body: () throws -> T) throws -> T {
        guard set(0, to: [client]), servers.allSatisfy({ set(process: $0, to: [server]) }) else {
            throw BenchError.failed("sched_setaffinity failed for the client or \(servers)")
        }
        defer {
            set(0, to: all)
            for pid in servers { set(process: pid, to: all) }
        }
        return try body()
    }
}
