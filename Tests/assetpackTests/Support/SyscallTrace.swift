import Foundation
import TestSupport

/// What `strace -f -y` recorded of one command's file-system calls, reduced
/// to the operations whose order decides what survives a power loss: names
/// made (`mkdir`, `rename`, `link`), names removed (`unlink`), flushes of a
/// file or a directory (`fsync`, `fdatasync`) and of the index's writable
/// map (`msync` of a range mapped from `index/data.mdb`).
///
/// `-y` prints each descriptor argument with the path it is open on
/// (`fsync(5</c/packs>)`, `renameat2(6</c/staging>, "a", 6</c/staging>, "b", …)`),
/// so a flush is known by the directory it flushes without following
/// descriptors through the trace.
struct SyscallTrace {
    enum Operation: Equatable {
        /// A directory made at `path`.
        case mkdir(path: String)
        /// `from` renamed to `to` (full paths).
        case rename(from: String, to: String)
        /// A new name `to` for an existing file (`from`: its name, or the
        /// path of an unnamed `O_TMPFILE` descriptor).
        case link(from: String, to: String)
        case unlink(path: String)
        /// `fsync` or `fdatasync` of the file or directory open at `path`.
        case sync(path: String)
        /// An `msync` (or `fsync`/`fdatasync`) of the index: a commit's flush.
        case indexSync
        /// A file opened with `O_CREAT` at `path`.
        case create(path: String)
    }

    /// The operations that succeeded, in the order the trace shows them.
    private(set) var operations: [Operation] = []
    /// The trace's lines that gave each operation (for messages).
    private(set) var lines: [String] = []

    /// The system calls a trace records (`strace -e trace=…`).
    static let traced = "mkdir,mkdirat,rename,renameat,renameat2,link,linkat,unlink,unlinkat,"
        + "fsync,fdatasync,msync,mmap,munmap,open,openat,creat"

    /// Whether `strace` is there and may trace a child here (a seccomp
    /// sandbox or `ptrace_scope` may forbid it).
    static let isAvailable: Bool = {
        guard Program.available("strace"), let r = try? Program.run("strace", ["-f", "-o", "/dev/null", "true"]) else { return false }
        return r.status == 0
    }()

    /// Runs `arguments` (the program first) under `strace -f -y` and parses
    /// what it recorded.
    static func record(_ arguments: [String], environment: [String: String]? = nil) throws -> (Program.Result, SyscallTrace) {
        let output = FileManager.default.temporaryDirectory.path + "/assetpacks-strace-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let result = try Program.run("strace", ["-f", "-y", "-qq", "-s", "4096", "-e", "trace=" + traced, "-o", output] + arguments,
                                     environment: environment)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return (result, SyscallTrace(parsing: text))
    }

    /// Parses strace's output (`-f -y`, one call a line, with `<unfinished ...>`
    /// and `<... resumed>` halves joined per process).
    init(parsing text: String) {
        var pending: [Substring: String] = [:]
        var maps: [(range: Range<UInt64>, index: Bool)] = []
        for raw in text.split(separator: "\n") {
            var line = raw
            // "1234  call(…" with -f; the pid is dropped once halves are joined.
            let pid = line.prefix { $0.isNumber }
            if !pid.isEmpty { line = line.dropFirst(pid.count).drop { $0 == " " } }
            var call = String(line)
            if call.hasSuffix("<unfinished ...>") {
                pending[pid] = String(call.dropLast("<unfinished ...>".count))
                continue
            }
            if call.hasPrefix("<... "), let resumed = call.range(of: " resumed>") {
                call = (pending.removeValue(forKey: pid) ?? "") + call[resumed.upperBound...]
            }
            // strace pads a resumed call's result to a column: `<... fsync resumed>)      = 0`.
            guard let open = call.firstIndex(of: "("),
                  let equals = call.range(of: #"\) +="#, options: [.regularExpression, .backwards]) else { continue }
            let name = String(call[..<open])
            let result = call[equals.upperBound...].drop { $0 == " " }.prefix { !$0.isWhitespace }
            guard !result.hasPrefix("-1"), !result.hasPrefix("?") else { continue }
            let args = Self.arguments(call[call.index(after: open)..<equals.lowerBound])
            if let operation = Self.operation(name, args, result: String(result), maps: &maps) {
                operations.append(operation)
                lines.append(String(raw))
            }
        }
    }

    /// A copy without the operations at `offsets` (to show a rule fails
    /// when a flush it needs is gone).
    func removing(_ offsets: [Int]) -> SyscallTrace {
        var copy = self
        for i in offsets.sorted(by: >) {
            copy.operations.remove(at: i)
            copy.lines.remove(at: i)
        }
        return copy
    }

    // MARK: Parsing one call

    /// One argument as strace shows it: a descriptor with its path, a
    /// string, or anything else as text.
    enum Argument {
        case descriptor(path: String)
        case string(String)
        case other(String)
    }

    private static func operation(
        _ name: String, _ args: [Argument], result: String, maps: inout [(range: Range<UInt64>, index: Bool)]
    ) -> Operation? {
        func path(_ dir: Argument, _ name: Argument) -> String? {
            guard case .string(let n) = name else { return nil }
            if n.hasPrefix("/") { return n }
            guard case .descriptor(let d) = dir else { return nil }
            return n.isEmpty ? d : d + "/" + n
        }
        func isIndex(_ p: String) -> Bool { p.hasSuffix("/index/data.mdb") }
        switch (name, args.count) {
        case ("mkdir", 2...):
            guard case .string(let p) = args[0] else { return nil }
            return .mkdir(path: p)
        case ("mkdirat", 3...):
            return path(args[0], args[1]).map { .mkdir(path: $0) }
        case ("rename", 2...), ("link", 2...):
            guard case .string(let a) = args[0], case .string(let b) = args[1] else { return nil }
            return name == "rename" ? .rename(from: a, to: b) : .link(from: a, to: b)
        case ("renameat", 4...), ("renameat2", 4...), ("linkat", 4...):
            guard let from = path(args[0], args[1]), let to = path(args[2], args[3]) else { return nil }
            return name == "linkat" ? .link(from: from, to: to) : .rename(from: from, to: to)
        case ("unlink", 1...):
            guard case .string(let p) = args[0] else { return nil }
            return .unlink(path: p)
        case ("unlinkat", 3...):
            guard case .other(let flags) = args[2], !flags.contains("AT_REMOVEDIR") else { return nil }
            return path(args[0], args[1]).map { .unlink(path: $0) }
        case ("fsync", 1...), ("fdatasync", 1...):
            guard case .descriptor(let p) = args[0] else { return nil }
            return isIndex(p) ? .indexSync : .sync(path: p)
        case ("openat", 3...), ("open", 2...), ("creat", 1...):
            let target = name == "openat" ? path(args[0], args[1]) : { if case .string(let p) = args[0] { return p } else { return nil } }()
            let flags = name == "openat" ? args[2] : args.count > 1 ? args[1] : .other("O_CREAT")
            guard let target, case .other(let f) = flags, f.contains("O_CREAT") || name == "creat" else { return nil }
            return .create(path: target)
        case ("mmap", 5...):
            guard case .descriptor(let p) = args[4], case .other(let length) = args[1],
                  let count = UInt64(length), let start = address(result) else { return nil }
            maps.append((start..<start + count, isIndex(p)))
            return nil
        case ("munmap", 2...):
            guard case .other(let a) = args[0], let start = address(a) else { return nil }
            maps.removeAll { $0.range.lowerBound == start }
            return nil
        case ("msync", 2...):
            guard case .other(let a) = args[0], let start = address(a) else { return nil }
            return maps.contains { $0.index && $0.range.contains(start) } ? .indexSync : nil
        default:
            return nil
        }
    }

    private static func address(_ text: String) -> UInt64? {
        text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : nil
    }

    /// Splits strace's argument list at top-level commas, and reads each.
    static func arguments(_ text: Substring) -> [Argument] {
        var parts: [String] = []
        var current = ""
        var depth = 0
        var quoted = false
        var escaped = false
        for c in text {
            if quoted {
                current.append(c)
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { quoted = false }
                continue
            }
            switch c {
            case "\"": quoted = true
            case "<", "[", "{", "(": depth += 1
            case ">", "]", "}", ")": depth -= 1
            case "," where depth == 0:
                parts.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
                continue
            default: break
            }
            current.append(c)
        }
        if !current.isEmpty { parts.append(current.trimmingCharacters(in: .whitespaces)) }
        return parts.map(argument)
    }

    private static func argument(_ text: String) -> Argument {
        if text.hasPrefix("\""), let end = text.lastIndex(of: "\""), end > text.startIndex {
            return .string(unescape(text[text.index(after: text.startIndex)..<end]))
        }
        // `5</c/packs>`, `AT_FDCWD</work>`, `16</c/staging/#1234>(deleted)`
        // (an unnamed `O_TMPFILE`, or a file unlinked since).
        var text = Substring(text)
        if text.hasSuffix("(deleted)") { text = text.dropLast("(deleted)".count) }
        if let open = text.firstIndex(of: "<"), text.hasSuffix(">"),
           text[..<open].allSatisfy({ $0.isNumber || $0.isUppercase || $0 == "_" }) {
            return .descriptor(path: String(text[text.index(after: open)..<text.index(before: text.endIndex)]))
        }
        return .other(String(text))
    }

    private static func unescape(_ text: Substring) -> String {
        var out = ""
        var escaped = false
        for c in text {
            if escaped { out.append(c); escaped = false } else if c == "\\" { escaped = true } else { out.append(c) }
        }
        return out
    }
}
