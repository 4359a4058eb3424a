import Synchronization
import AssetStore
import AssetSystem

/// When the store passed its crash points during one download, to split
/// the download's figure into the transfer and the install that adopts the
/// file. The points are only reported (`CrashPoint` calls the handler set
/// here and does nothing else); recording one costs a clock read.
final class InstallPhases: Sendable {
    private let passed = Mutex<[(name: String, seconds: Double)]>([])

    /// Records every point passed until ``stop()``.
    func start() {
        passed.withLock { $0.removeAll() }
        CrashPoint.setHandler { [self] name in
            let now = Monotonic.now
            passed.withLock { $0.append((name.description, now)) }
        }
    }

    func stop() { CrashPoint.setHandler(nil) }

    /// Seconds from the first time `from` was passed to the last time `to`
    /// was; `nil` when either is missing.
    func seconds(from: String, to: String) -> Double? {
        passed.withLock { points in
            guard let start = points.first(where: { $0.name == from }), let end = points.last(where: { $0.name == to }) else { return nil }
            return end.seconds - start.seconds
        }
    }

    /// The install's phases in one round: all of it (container lock to
    /// done), its `fsync` of the adopted file, and its validation.
    struct Round {
        var install: Double
        var sync: Double
        var validation: Double
    }

    var round: Round? {
        guard let install = seconds(from: "install.locked-container", to: "install.done"),
              let sync = seconds(from: "adopt.linked", to: "adopt.synced"),
              let validation = seconds(from: "adopt.synced", to: "install.validated") else { return nil }
        return Round(install: install, sync: sync, validation: validation)
    }
}
