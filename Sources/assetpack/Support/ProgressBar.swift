import Synchronization
import AssetPacks
#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress bar on standard error, redrawn at most ten times a
/// second, shown only once the work has taken more than half a second.
final class ProgressBar: Sendable {
    private struct State {
        var start: Double
        var lastDraw: Double = 0
        var drawn = false
    }

    private let state = Mutex(State(start: ProgressBar.now))

    /// A bar when standard error is a terminal, else `nil`: pipes and logs
    /// get no carriage returns.
    static func onTerminal() -> ProgressBar? { Output.stderrIsTerminal ? ProgressBar() : nil }

    /// The library's progress callback, drawing on this bar.
    var callback: @Sendable (AssetPackProgress) -> Void { { [self] in update($0) } }

    func update(_ progress: AssetPackProgress) {
        let now = Self.now
        let last = progress.completed == progress.total
        let draw = state.withLock { s -> Bool in
            guard now - s.start > 0.5, now - s.lastDraw > 0.1 || last else { return false }
            s.lastDraw = now
            s.drawn = true
            return true
        }
        guard draw, progress.total > 0 else { return }
        let width = 30
        let filled = Int(Double(width) * progress.fraction)
        Output.errorPartial("\r" + progress.phase.rawValue + " [" + String(repeating: "#", count: filled) +
                            String(repeating: " ", count: width - filled) +
                            "] \(Int(100 * progress.fraction))% \(progress.completed)/\(progress.total) \(progress.unit.rawValue)\u{1b}[K")
    }

    /// Clears the bar's line, if it was drawn.
    func finish() {
        if state.withLock({ $0.drawn }) { Output.errorPartial("\r\u{1b}[K") }
    }

    private static var now: Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
