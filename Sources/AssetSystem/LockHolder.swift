internal import CAssetShim
#if canImport(Glibc)
import Glibc
#endif

/// Who holds a lock that a wait gave up on, as far as this process can see.
///
/// Linux names the holder of a process-associated lock (`F_SETLK`, what
/// Python's `fcntl.lockf` and LMDB take): `F_OFD_GETLK` reports its pid, or
/// 0 when that process is outside this PID namespace. For an open file
/// description lock — what ``FileLock`` takes — it reports -1, in
/// `F_OFD_GETLK` and in `/proc/locks` alike, whoever holds it. Such a holder
/// is found by its open file instead: each `/proc/<pid>/fdinfo/<fd>` lists
/// the locks of that open file in `lock:` lines. Those are readable for the
/// user's own processes (root: everyone's), not for another user's, so the
/// holder of an open file description lock of another user is ``hidden``.
public struct LockHolder: Sendable, Equatable, CustomStringConvertible {
    /// The processes seen holding a conflicting lock, ascending.
    public let pids: [Int32]
    /// Of ``pids``, those stopped (`SIGSTOP`, Ctrl-Z, a debugger).
    public let stopped: [Int32]
    /// Of ``pids``, those of another user (seen by root).
    public let otherUsers: [Int32]
    /// Whether some conflicting lock is held by a process that was not seen.
    public let hidden: Bool

    public init(pids: [Int32] = [], stopped: [Int32] = [], otherUsers: [Int32] = [], hidden: Bool = false) {
        self.pids = pids
        self.stopped = stopped
        self.otherUsers = otherUsers
        self.hidden = hidden
    }

    /// Nobody known: not looked for, or the lock was free when looked at.
    public static let unknown = LockHolder()

    /// Whether a holder is a process of this user that is not stopped: one
    /// at work, which lets go when it is done (or the kernel does, when it
    /// dies).
    public var isWorking: Bool { pids.contains { !stopped.contains($0) && !otherUsers.contains($0) } }

    /// "held by pid 1234", "held by pids 12 and 34", "held by pid 1234
    /// (stopped)", "(another user's)"; for a holder not seen, "held by a
    /// process this user cannot see …"; empty for ``unknown``.
    public var description: String {
        guard !pids.isEmpty else {
            return hidden ? "held by a process this user cannot see (another user's: Linux reports no pid for an open file description lock)" : ""
        }
        let named = pids.map { pid in
            let notes = (otherUsers.contains(pid) ? ["another user's"] : []) + (stopped.contains(pid) ? ["stopped"] : [])
            return notes.isEmpty ? "\(pid)" : "\(pid) (\(notes.joined(separator: ", ")))"
        }
        let list = named.count == 1 ? named[0] : named.dropLast().joined(separator: ", ") + " and " + named[named.count - 1]
        return "held by pid\(named.count == 1 ? "" : "s") \(list)" + (hidden ? " and a process this user cannot see" : "")
    }

    /// The holders of the locks on the open file `fd` that conflict with a
    /// lock of `kind`: ``unknown`` when none does.
    static func find(_ fd: Int32, conflictingWith kind: FileLock.Kind) -> LockHolder {
        var reported: Int32 = 0
        let type: Int32 = kind == .shared ? CAS_LOCK_SHARED : CAS_LOCK_EXCLUSIVE
        guard cas_ofd_conflict(fd, type, &reported) == 1 else { return .unknown }
        var pids = Set<Int32>()
        if reported > 0 { pids.insert(reported) }
        var mode: UInt32 = 0, size: Int64 = 0, inode: UInt64 = 0, device: UInt64 = 0
        guard cas_fstat(fd, &mode, &size, &inode, &device) == 0 else { return Self.seen(pids, hidden: reported <= 0) }
        let all = ProcLocks.lines(of: "/proc/locks").filter { $0.conflicts(with: kind) }
        // The file as /proc names it; by its inode alone where the device
        // reads otherwise (an overlay, a device number of its own).
        var file = FileKey(device: device, inode: inode).text
        if !all.contains(where: { $0.file == file }),
           let other = all.first(where: { $0.file.hasSuffix(":" + String(inode)) }) {
            file = String(other.file)
        }
        var hidden = false
        var openFileLocks = 0
        for lock in all where lock.file == file {
            switch lock.kind {
            case .openFile: openFileLocks += 1
            case .process: if lock.pid > 0 { pids.insert(lock.pid) } else { hidden = true }
            }
        }
        if openFileLocks > 0 {
            let found = ProcLocks.openFileLockHolders(of: file, conflictingWith: kind, upTo: openFileLocks, own: fd)
            pids.formUnion(found.pids)
            if found.count < openFileLocks { hidden = true }
        }
        return Self.seen(pids, hidden: hidden || (pids.isEmpty && reported <= 0))
    }

    /// `pids`, each looked at: stopped, another user's.
    private static func seen(_ pids: Set<Int32>, hidden: Bool) -> LockHolder {
        let sorted = pids.sorted()
        let states = sorted.map { ($0, ProcLocks.state(of: $0)) }
        return LockHolder(pids: sorted, stopped: states.filter { $0.1.stopped }.map(\.0),
                          otherUsers: states.filter { $0.1.otherUser }.map(\.0), hidden: hidden)
    }
}

/// A file as `/proc/locks` names it: `MAJOR:MINOR:INODE`, the device's
/// numbers in hex of at least two digits.
struct FileKey {
    let text: String

    init(device: UInt64, inode: UInt64) {
        let major = ((device >> 32) & 0xffff_f000) | ((device >> 8) & 0x0000_0fff)
        let minor = ((device >> 12) & 0xffff_ff00) | (device & 0x0000_00ff)
        func hex(_ n: UInt64) -> String {
            let s = String(n, radix: 16)
            return s.count < 2 ? "0" + s : s
        }
        text = hex(major) + ":" + hex(minor) + ":" + String(inode)
    }
}
