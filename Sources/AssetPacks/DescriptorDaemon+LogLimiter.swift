import AssetSystem
import Synchronization

extension DescriptorDaemon {
    /// Passes log lines on at most once per interval for each kind, so that
    /// a flood of refused peers or busy replies cannot flood the log; the
    /// next line that passes says how many were left out.
    final class LogLimiter: Sendable {
        enum Kind: Hashable, Sendable {
            case refused, busy, descriptors
            /// A client that left its replies unread past the request timeout.
            case unread
        }

        private struct Entry {
            var next: Double
            var leftOut: Int
        }

        private let interval: Double
        private let sink: (@Sendable (String) -> Void)?
        private let state = Mutex<[Kind: Entry]>([:])

        init(interval: Double, log: (@Sendable (String) -> Void)?) {
            self.interval = interval
            self.sink = log
        }

        /// Logs `line` unless a line of `kind` was logged less than an interval ago.
        func log(_ kind: Kind, _ line: @autoclosure () -> String) {
            guard let sink else { return }
            let now = Monotonic.now
            let interval = self.interval
            let leftOut: Int? = state.withLock { s in
                if let entry = s[kind], entry.next > now {
                    s[kind]?.leftOut += 1
                    return nil
                }
                defer { s[kind] = Entry(next: now + interval, leftOut: 0) }
                return s[kind]?.leftOut ?? 0
            }
            guard let leftOut else { return }
            sink(leftOut == 0 ? line() : line() + " (\(leftOut) more like it left out)")
        }
    }
}
