#if canImport(Glibc)
import Glibc
#endif

/// What `/proc` says about file locks and processes, for ``LockHolder``.
/// Every read is best effort: a file that cannot be read says nothing.
enum ProcLocks {
    /// One line of `/proc/locks`, or the part after `lock:` of an fdinfo
    /// line: `1: OFDLCK ADVISORY  READ -1 fe:00:1234 0 EOF`.
    struct Line {
        enum Kind { case openFile, process }
        let kind: Kind
        let exclusive: Bool
        let pid: Int32
        let file: Substring

        /// Parses a lock line; `nil` for a waiter (`->`), a `flock` or lease
        /// (they never conflict with `fcntl` locks), or anything else.
        init?(_ line: Substring) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] != "->" else { return nil }
            switch fields[1] {
            case "OFDLCK": kind = .openFile
            case "POSIX": kind = .process
            default: return nil
            }
            guard fields[3] == "READ" || fields[3] == "WRITE", let pid = Int32(fields[4]) else { return nil }
            exclusive = fields[3] == "WRITE"
            self.pid = pid
            file = fields[5]
        }

        /// Whether this lock keeps a lock of `kind` from being taken.
        func conflicts(with wanted: FileLock.Kind) -> Bool { exclusive || wanted == .exclusive }
    }

    /// The lock lines of the file at `path` (`/proc/locks`).
    static func lines(of path: String) -> [Line] {
        guard let fd = try? FileDescriptor.open(path, .readOnly), let bytes = try? fd.readToEnd() else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap(Line.init)
    }

    /// The processes whose open files hold open-file-description locks on
    /// `file` that conflict with `kind`, found through every readable
    /// `/proc/<pid>/fdinfo/<fd>`; stops once `upTo` locks are found. `count`
    /// is how many locks were found (a process may hold several), the
    /// waiter's own among them (its descriptor `own`), whose process is not
    /// named: a lock of the waiter's description never stands in its way.
    static func openFileLockHolders(of file: String, conflictingWith kind: FileLock.Kind, upTo: Int, own: Int32) -> (pids: Set<Int32>, count: Int) {
        var pids = Set<Int32>()
        var count = 0
        let me = getpid()
        for name in FileSystem.names(in: "/proc") {
            guard let pid = Int32(name) else { continue }
            let fdinfo = "/proc/" + name + "/fdinfo"
            for fd in FileSystem.names(in: fdinfo) {
                let mine = pid == me && fd == String(own)
                guard let text = read(fdinfo + "/" + fd, limit: 8192), text.contains("lock:") else { continue }
                for line in text.split(separator: "\n") where line.hasPrefix("lock:") {
                    guard let lock = Line(line.dropFirst(5)), lock.kind == .openFile, lock.file == file,
                          lock.conflicts(with: kind) else { continue }
                    if !mine { pids.insert(pid) }
                    count += 1
                    if count >= upTo { return (pids, count) }
                }
            }
        }
        return (pids, count)
    }

    /// Whether process `pid` is stopped (`T`, `t`) or dead (`Z`, `X`), and
    /// whether it runs as another effective user than this process; a
    /// process whose files cannot be read is neither.
    static func state(of pid: Int32) -> (stopped: Bool, otherUser: Bool) {
        var stopped = false
        if let stat = read("/proc/\(pid)/stat", limit: 4096), let close = stat.lastIndex(of: ")"),
           let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first {
            stopped = "TtZX".contains(state)
        }
        guard let status = read("/proc/\(pid)/status", limit: 16384),
              let uids = status.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }) else { return (stopped, false) }
        let fields = uids.split(whereSeparator: { $0 == "\t" || $0 == " " })
        guard fields.count >= 3, let effective = UInt32(fields[2]) else { return (stopped, false) }
        return (stopped, effective != geteuid())
    }

    /// The text of the small file at `path`, read once up to `limit` bytes;
    /// `nil` when it cannot be read.
    static func read(_ path: String, limit: Int) -> String? {
        guard let fd = try? FileDescriptor.open(path, .readOnly),
              let bytes = try? fd.read(count: limit, at: 0) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
