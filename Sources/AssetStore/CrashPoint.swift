import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Named points in the install, update and remove paths where a crash test
/// can have the process killed, to show that a writer killed at any of them
/// leaves a store that opens, verifies clean, and holds the old version, the
/// new one, or none.
///
/// The environment variable `ASSETPACKS_CRASH_AT` names the point:
/// `install.published` kills the process (`SIGKILL`, no clean-up of any
/// kind) the first time it passes that point; `install.index.member#7` the
/// seventh time. Without the variable a point costs one load and one
/// branch. docs/coordination.md lists every point.
enum CrashPoint {
    /// The point to die at, read once from the environment.
    private struct Target: Sendable {
        let name: String
        let occurrence: Int

        init?(_ spec: UnsafePointer<CChar>?) {
            guard let spec, let text = Optional(String(cString: spec)), !text.isEmpty else { return nil }
            if let hash = text.lastIndex(of: "#"), let n = Int(text[text.index(after: hash)...]), n >= 1 {
                name = String(text[..<hash])
                occurrence = n
            } else {
                name = text
                occurrence = 1
            }
        }
    }

    private static let target = Target(getenv("ASSETPACKS_CRASH_AT"))
    private static let passes = Atomic<Int>(0)

    /// Kills the process here if `ASSETPACKS_CRASH_AT` names this point (and
    /// this is the named occurrence).
    @inline(__always)
    static func hit(_ name: StaticString) {
        guard let target else { return }
        check(name, target)
    }

    private static func check(_ name: StaticString, _ target: Target) {
        guard target.name == name.description else { return }
        let pass = passes.wrappingAdd(1, ordering: .relaxed).newValue
        guard pass == target.occurrence else { return }
        kill(getpid(), SIGKILL)
        while true { pause() }
    }
}
