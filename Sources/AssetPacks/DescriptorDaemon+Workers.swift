import Foundation
import Dispatch
import Synchronization
import AssetSystem

extension DescriptorDaemon {
    /// A reply to send: its bytes and the descriptor that travels with its
    /// first byte, if any (closed when the reply goes away).
    final class Outgoing: Sendable {
        private let bytes: [UInt8]
        /// A success's bytes, held inline instead of in ``bytes``.
        private let success: DaemonReply.Success?
        let descriptor: FileDescriptor?
        /// The descriptor's number, for `sendmsg`.
        let passing: Int32?

        /// The connection's description this reply passes, kept open until it is sent.
        let shared: SharedDescription?

        init(_ bytes: [UInt8], passing descriptor: consuming FileDescriptor? = nil) {
            self.bytes = bytes
            self.success = nil
            self.passing = descriptor?.rawValue
            self.descriptor = descriptor
            self.shared = nil
        }

        /// A success passing `descriptor`.
        init(_ success: DaemonReply.Success, passing descriptor: consuming FileDescriptor) {
            self.bytes = []
            self.success = success
            self.passing = descriptor.rawValue
            self.descriptor = Optional(descriptor)
            self.shared = nil
        }

        /// A success that passes no descriptor: it names the client's kept one.
        init(_ success: DaemonReply.Success) {
            self.bytes = []
            self.success = success
            self.passing = nil
            self.descriptor = nil
            self.shared = nil
        }

        /// A success that passes `shared`'s descriptor, which stays the connection's.
        init(_ success: DaemonReply.Success, sharing shared: SharedDescription) {
            self.bytes = []
            self.success = success
            self.passing = shared.descriptor.rawValue
            self.descriptor = nil
            self.shared = shared
        }

        /// The reply's length in bytes.
        var count: Int { success == nil ? bytes.count : DaemonReply.Success.size }

        func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            if let success { return try success.withUnsafeBytes(body) }
            return try bytes.withUnsafeBytes(body)
        }
    }

    /// Work done off the loop for connection `connection`: its replies, in
    /// order, and the memory files it has been handed since (``MemoryFiles``).
    struct Completion: Sendable {
        let connection: Int
        let replies: [Outgoing]
        let given: Set<Int>
    }

    /// A fixed pool of threads that run the lookups that may block: making a
    /// memory file (an inflate, a copy), or waiting for another request's.
    /// Few (the CPU count, 2 to 8), so that the index's reader slots a crowd
    /// of connections holds stay bounded; downloads, which may take minutes,
    /// never run here.
    final class Workers: Sendable {
        private struct State {
            var jobs: [@Sendable () -> Void] = []
            var next = 0
            var started = false
            var stopping = false
        }

        let count: Int
        private let state = Mutex(State())
        private let available = DispatchSemaphore(value: 0)
        private let ended = DispatchGroup()

        init(count: Int) { self.count = count }

        /// Starts the threads (once).
        func start() {
            let first = state.withLock { s in
                defer { s.started = true }
                return !s.started
            }
            guard first else { return }
            for i in 0..<count {
                ended.enter()
                let thread = Thread { [self] in
                    defer { ended.leave() }
                    while let job = take() { job() }
                }
                thread.name = "assetpack-daemon-worker-\(i)"
                thread.start()
            }
        }

        /// Runs `job` on the first thread free.
        func submit(_ job: @escaping @Sendable () -> Void) {
            state.withLock { $0.jobs.append(job) }
            available.signal()
        }

        /// The next job; `nil` once stopping and none is left.
        private func take() -> (@Sendable () -> Void)? {
            while true {
                available.wait()
                let job = state.withLock { s -> (@Sendable () -> Void)?? in
                    guard s.next < s.jobs.count else { return s.stopping ? .some(nil) : nil }
                    let job = s.jobs[s.next]
                    s.next += 1
                    if s.next == s.jobs.count {
                        s.jobs.removeAll(keepingCapacity: true)
                        s.next = 0
                    }
                    return job
                }
                if let job { return job }
            }
        }

        /// Lets the threads end once the jobs queued are done, and waits up
        /// to `seconds` for them.
        func stop(waiting seconds: Double) {
            let started = state.withLock { s in
                s.stopping = true
                return s.started
            }
            guard started else { return }
            for _ in 0..<count { available.signal() }
            _ = ended.wait(timeout: .now() + seconds)
        }
    }
}
