#if canImport(Glibc)
import Glibc
#endif

/// Wakes a waiting thread when a file in one directory is created, written
/// and closed, renamed into it or removed (`inotify`), so that a watcher
/// sees a change within microseconds of it instead of at its next poll.
///
/// Events are not reported one by one: ``wait(timeout:)`` says whether
/// anything happened, and the caller re-reads what it watches. On a system
/// without inotify (or out of watches) ``init(directory:)`` still succeeds,
/// and ``wait(timeout:)`` then sleeps for its timeout: callers must always
/// re-read after a wait, changed or not, which makes that a plain poll.
public final class DirectoryWatch: @unchecked Sendable {
    // The descriptors are only read after init, and closed in deinit.
    private let inotify: Int32
    /// A pipe whose read end is polled with the inotify descriptor, so that
    /// ``interrupt()`` ends a wait from another thread.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// Watches `directory`, which must exist; a symlink there is not
    /// followed (`IN_DONT_FOLLOW`): the watch then falls back to polling.
    ///
    /// - Throws: `Errno` from `pipe` only (inotify's own failures fall back to polling).
    public init(directory: String) throws(Errno) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Errno(errno, operation: "pipe", path: directory) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        if fd >= 0 {
            let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ONLYDIR | IN_DONT_FOLLOW)
            if inotify_add_watch(fd, directory, mask) < 0 {
                close(fd)
                inotify = -1
                return
            }
        }
        inotify = fd
    }

    deinit {
        if inotify >= 0 { close(inotify) }
        close(wakeRead)
        close(wakeWrite)
    }

    /// Whether changes wake a wait (`false`: waits are plain sleeps).
    public var isNotifying: Bool { inotify >= 0 }

    /// Waits until something in the directory changes, ``interrupt()`` is
    /// called, or `timeout` seconds pass; then drains what was queued.
    ///
    /// - Returns: `true` when woken by a change or an interrupt.
    @discardableResult
    public func wait(timeout: Double) -> Bool {
        let watched = inotify >= 0 ? [inotify, wakeRead] : [wakeRead]
        let ready = (try? Poll.readable(watched, timeout: max(0, timeout))) ?? []
        drain()
        return !ready.isEmpty
    }

    /// Ends a wait in progress, or the next one, at once. From any thread.
    public func interrupt() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        for fd in [inotify, wakeRead] where fd >= 0 {
            while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
        }
    }
}
