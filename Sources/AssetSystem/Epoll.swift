internal import CAssetShim
#if canImport(Glibc)
import Glibc
#endif

/// An epoll instance: waits for readiness of many descriptors at once; each
/// event names its descriptor. Level triggered: a descriptor that stays readable is reported by every wait.
/// The corresponding C functions are `epoll_create1`, `epoll_ctl` and `epoll_wait`.
public struct Epoll: ~Copyable, Sendable {
    /// What a descriptor is watched for, and what an event reports.
    public struct Events: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Readable, or at end of stream (`EPOLLIN`).
        public static let readable = Events(rawValue: 0x001)
        /// Writable (`EPOLLOUT`).
        public static let writable = Events(rawValue: 0x004)
        /// An error on the descriptor (`EPOLLERR`); always reported.
        public static let error = Events(rawValue: 0x008)
        /// Hung up (`EPOLLHUP`); always reported, even when not asked for.
        public static let hangUp = Events(rawValue: 0x010)
        /// The peer shut down its writing side (`EPOLLRDHUP`).
        public static let peerClosed = Events(rawValue: 0x2000)
    }

    /// One ready descriptor and what it is ready for.
    public struct Event: Sendable, Equatable {
        public var descriptor: Int32
        public var events: Events
    }

    private let descriptor: FileDescriptor

    /// A new epoll instance (close-on-exec).
    public init() throws(Errno) {
        descriptor = FileDescriptor(adopting: try valueOrErrno("epoll_create1") { cas_epoll_create() })
    }

    /// Starts watching `fd` for `events`.
    public func add(_ fd: Int32, _ events: Events) throws(Errno) {
        try control(0, fd, events)
    }

    /// Changes what `fd` is watched for (an empty set: only errors and hang-ups).
    public func modify(_ fd: Int32, _ events: Events) throws(Errno) {
        try control(1, fd, events)
    }

    /// Stops watching `fd` (closing it does too, once no duplicate is left).
    public func remove(_ fd: Int32) throws(Errno) {
        try control(2, fd, [])
    }

    private func control(_ op: Int32, _ fd: Int32, _ events: Events) throws(Errno) {
        let ep = descriptor.rawValue
        _ = try valueOrErrno("epoll_ctl") { cas_epoll_ctl(ep, op, fd, events.rawValue) }
    }

    /// Waits up to `timeout` seconds (`nil`: no limit) for events, at most
    /// `maximum` (≤ 256) of them; empty when the time ran out. A signal ends
    /// the wait early with no events.
    public func wait(timeout: Double?, maximum: Int = 256) throws(Errno) -> [Event] {
        var ready = Ready(capacity: maximum)
        let n = try wait(timeout: timeout, into: &ready)
        return (0..<n).map { ready.event($0) }
    }

    /// Room for the events of one wait, to be reused from wait to wait.
    public struct Ready: Sendable {
        fileprivate var descriptors: [Int32]
        fileprivate var masks: [UInt32]

        /// Room for `capacity` events (1 to 256).
        public init(capacity: Int = 256) {
            let count = max(1, min(256, capacity))
            descriptors = [Int32](repeating: -1, count: count)
            masks = [UInt32](repeating: 0, count: count)
        }

        /// Event `i` of the last wait.
        public func event(_ i: Int) -> Event { Event(descriptor: descriptors[i], events: Events(rawValue: masks[i])) }
    }

    /// As ``wait(timeout:maximum:)``, into `ready`; returns how many events it holds.
    public func wait(timeout: Double?, into ready: inout Ready) throws(Errno) -> Int {
        let milliseconds: Int32 = timeout.map { Int32(clamping: Int(max(0, $0 * 1000).rounded(.up))) } ?? -1
        let ep = descriptor.rawValue
        let capacity = Int32(ready.descriptors.count)
        let n = ready.descriptors.withUnsafeMutableBufferPointer { t in
            ready.masks.withUnsafeMutableBufferPointer { m in
                cas_epoll_wait(ep, t.baseAddress, m.baseAddress, capacity, milliseconds)
            }
        }
        if n == -Errno.interrupted.rawValue { return 0 }
        guard n >= 0 else { throw Errno(-n, operation: "epoll_wait") }
        return Int(n)
    }
}

extension FileDescriptor {
    /// Makes reads and writes on the descriptor fail with `EAGAIN`
    /// (``Errno/wouldBlock``) instead of waiting (`O_NONBLOCK`), or wait again.
    public func setNonBlocking(_ on: Bool = true) throws(Errno) {
        let fd = rawValue
        let flags = try valueOrErrno("fcntl F_GETFL") { () -> Int32 in
            let r = fcntl(fd, F_GETFL)
            return r < 0 ? -errno : r
        }
        let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        guard wanted != flags else { return }
        _ = try valueOrErrno("fcntl F_SETFL") { () -> Int32 in fcntl(fd, F_SETFL, wanted) < 0 ? -errno : 0 }
    }
}

/// The process's limit on open descriptors (`RLIMIT_NOFILE`).
public enum DescriptorLimit {
    /// Raises the soft limit to at least `wanted`, as far as the hard limit
    /// allows (never lowers it); returns the soft limit now in force, or
    /// `nil` when it cannot be read. The corresponding C function is `setrlimit`.
    @discardableResult
    public static func raise(to wanted: Int) -> Int? {
        let limit = cas_raise_descriptor_limit(Int64(wanted))
        return limit < 0 ? nil : Int(clamping: limit)
    }
}
