import Foundation
import Synchronization
import AssetStore

/// The writer the crash tests kill: installs (or updates) or removes a pack
/// with the store calls `assetpack install` and `assetpack rm` make, with
/// the store's crash points armed from the environment variable
/// `ASSETPACKS_CRASH_AT`. `install.published` kills the process (`SIGKILL`,
/// no clean-up of any kind) the first time it passes that point;
/// `install.index.member#7` the seventh time. Without the variable it is a
/// plain writer. docs/coordination.md lists every point.
///
///     install --container C --pack FILE
///     remove  --container C --id ID
enum CrashingWriter {
    /// The point to die at, from `ASSETPACKS_CRASH_AT`.
    struct Target: Sendable {
        let name: String
        let occurrence: Int

        /// Parses `name` or `name#N` (N ≥ 1); `nil` for no or an empty value.
        init?(_ spec: String?) {
            guard let spec, !spec.isEmpty else { return nil }
            if let hash = spec.lastIndex(of: "#"), let n = Int(spec[spec.index(after: hash)...]), n >= 1 {
                name = String(spec[..<hash])
                occurrence = n
            } else {
                name = spec
                occurrence = 1
            }
        }
    }

    /// How many times the target point has been passed.
    private static let passes = Atomic<Int>(0)

    /// Has the store call `kill` here when `ASSETPACKS_CRASH_AT` names a point.
    static func arm() {
        guard let target = Target(ProcessInfo.processInfo.environment["ASSETPACKS_CRASH_AT"]) else { return }
        CrashPoint.setHandler { name in
            guard name.description == target.name else { return }
            guard passes.wrappingAdd(1, ordering: .relaxed).newValue == target.occurrence else { return }
            kill(getpid(), SIGKILL)
            while true { pause() }
        }
    }

    static func install(_ options: Options) throws -> [String: Any] {
        arm()
        let store = try AssetStore(container: GroupContainer(path: options.string("container")), options: options.storeOptions())
        let outcome = try store.install(packAt: options.string("pack"))
        return ["change": outcome.change.rawValue, "id": outcome.record.id]
    }

    static func remove(_ options: Options) throws -> [String: Any] {
        arm()
        let store = try AssetStore(container: GroupContainer(path: options.string("container")), options: options.storeOptions())
        let id = options.string("id")
        try store.remove(pack: id)
        return ["removed": id]
    }
}
