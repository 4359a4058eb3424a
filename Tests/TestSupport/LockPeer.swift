import Foundation

/// Another process holding `fcntl` locks on files: Python, optionally as
/// another user (`setpriv`), so that none of this package's code is
/// involved. It opens each file — read-only for a shared lock, read-write
/// for an exclusive one — locks the whole file without waiting, reports
/// what happened to each, and holds its locks until ``release()`` (or until
/// it is killed).
package final class LockPeer: @unchecked Sendable {
    // The Process and the pipe's handles are used from one test at a time.

    /// What became of one file.
    package enum Outcome: Equatable, Sendable, CustomStringConvertible {
        /// Opened and locked: the peer holds the lock.
        case held
        /// Opened, but another process's lock was in the way (`EAGAIN`).
        case busy
        /// Not opened: the `errno` name (`EACCES`, `ENOENT`).
        case refused(String)

        package var description: String {
            switch self {
            case .held: return "held"
            case .busy: return "busy"
            case .refused(let e): return "refused (\(e))"
            }
        }
    }

    /// An open file description lock (`F_OFD_SETLK`, Linux reports no pid
    /// for it) or a process-associated one (`F_SETLK`, as `fcntl.lockf`).
    package enum Style: String, Sendable { case openFile = "ofd", process = "posix" }

    static let script = #"""
    import errno, fcntl, os, struct, sys
    style, kind = sys.argv[1], sys.argv[2]
    results, keep = [], []
    for path in sys.argv[3:]:
        try:
            fd = os.open(path, (os.O_RDONLY if kind == "read" else os.O_RDWR) | os.O_NOFOLLOW)
        except OSError as e:
            results.append("refused:" + errno.errorcode.get(e.errno, str(e.errno)))
            continue
        lock = struct.pack("hhqqi", fcntl.F_RDLCK if kind == "read" else fcntl.F_WRLCK, 0, 0, 0, 0)
        try:
            fcntl.fcntl(fd, 37 if style == "ofd" else fcntl.F_SETLK, lock)  # 37: F_OFD_SETLK
            results.append("held")
            keep.append(fd)
        except OSError:
            results.append("busy")
    print(os.getpid(), *results, flush=True)
    sys.stdin.read()
    """#

    private let process = Process()
    private let input = Pipe()
    /// The peer's pid (the Python process's, also under `setpriv`).
    package let pid: Int32
    /// What became of each file, in the order given.
    package let outcomes: [Outcome]

    /// Starts the peer on `files`, as `uid`/`gid` (with no supplementary
    /// groups, or `groups`) when given, and waits for its report.
    ///
    /// - Throws: ``Program/Failure`` when it cannot start or reports nothing.
    package init(_ files: [String], style: Style = .openFile, exclusive: Bool = false,
                 uid: UInt32? = nil, gid: UInt32? = nil, groups: [UInt32] = []) throws {
        let python = ["python3", "-c", Self.script, style.rawValue, exclusive ? "write" : "read"] + files
        var arguments = python
        if let uid {
            let g = gid ?? uid
            arguments = ["--reuid=\(uid)", "--regid=\(g)", groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")]
                + python
        }
        // The system's Python: another user may not be able to run one
        // installed under root's home.
        let python3 = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : Program.find("python3")
        guard let python3, let executable = uid == nil ? python3 : Program.find("setpriv") else {
            throw Program.Failure(program: uid == nil ? "python3" : "setpriv", status: nil, stderr: "")
        }
        arguments[arguments.firstIndex(of: "python3")!] = python3
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = uid == nil ? Array(arguments.dropFirst()) : arguments
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let fields = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard let first = fields.first, let pid = Int32(first), fields.count == files.count + 1 else {
            process.terminate()
            throw Program.Failure(program: "lock peer", status: nil, stderr: String(decoding: line, as: UTF8.self))
        }
        self.pid = pid
        outcomes = fields.dropFirst().map { field in
            if field == "held" { return .held }
            if field == "busy" { return .busy }
            return .refused(String(field.split(separator: ":").last ?? ""))
        }
    }

    /// Lets go of every lock: the peer exits. Waits for it.
    package func release() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// Sends `signal` to the peer (`SIGSTOP`, `SIGCONT`).
    package func signal(_ signal: Int32) { kill(pid, signal) }

    deinit {
        if process.isRunning {
            kill(pid, SIGCONT)
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }
}
