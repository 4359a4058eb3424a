import Synchronization
import AssetSystem

/// A one-line progress bar on standard error, redrawn at most ten times a
/// second, shown only once the work has taken more than half a second.
final class ProgressBar: Sendable {
    private let unit: String
    private let state = Mutex<(start: Double, lastDraw: Double, drawn: Bool)>((Monotonic.now, 0, false))

    init(unit: String) { self.unit = unit }

    func update(_ done: UInt64, _ total: UInt64) {
        let now = Monotonic.now
        let draw = state.withLock { s -> Bool in
            guard now - s.start > 0.5, now - s.lastDraw > 0.1 || done == total else { return false }
            s.lastDraw = now
            s.drawn = true
            return true
        }
        guard draw, total > 0 else { return }
        let width = 30
        let filled = Int(Double(width) * Double(done) / Double(total))
        let percent = Int(100 * Double(done) / Double(total))
        Output.errorPartial("\r[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) +
                            "] \(percent)% \(done)/\(total) \(unit)")
    }

    func finish() {
        if state.withLock({ $0.drawn }) { Output.errorPartial("\r\u{1b}[K") }
    }
}
