import Foundation
public import AssetSystem

/// The directory that cooperating processes share:
///
/// ```
/// <container>/
///   index/      LMDB environment (data.mdb, lock.mdb)
///   packs/      installed archives, one file per installed pack version
///   staging/    installs and downloads in progress
///   cache/      extracted members
///   locks/      container.lock, daemon.lock, and packs/<pack>.lock (one per pack)
///   daemon.sock the descriptor daemon's socket, while it runs
/// ```
///
/// Pack locks have `locks/packs/` to themselves, so that no pack ID can name
/// the container's or the daemon's lock.
public struct GroupContainer: Sendable, Hashable {
    /// The container directory, absolute.
    public let path: String

    /// A container at `path` (made absolute against the working directory).
    public init(path: String) {
        if path.hasPrefix("/") {
            self.path = path
        } else {
            self.path = FileManager.default.currentDirectoryPath + "/" + path
        }
    }

    /// The default container of a group: `$XDG_DATA_HOME/assetpacks/<group>`,
    /// with `XDG_DATA_HOME` defaulting to `~/.local/share`. The environment
    /// variable `ASSETPACKS_CONTAINER`, when set, wins.
    public static func `default`(group: String = "default", environment: [String: String] = ProcessInfo.processInfo.environment) -> GroupContainer {
        if let explicit = environment["ASSETPACKS_CONTAINER"], !explicit.isEmpty {
            return GroupContainer(path: explicit)
        }
        let dataHome: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            dataHome = xdg
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            dataHome = home + "/.local/share"
        }
        return GroupContainer(path: dataHome + "/assetpacks/" + group)
    }

    public var indexPath: String { path + "/index" }
    public var packsPath: String { path + "/packs" }
    public var stagingPath: String { path + "/staging" }
    public var cachePath: String { path + "/cache" }
    public var locksPath: String { path + "/locks" }
    /// The accepted catalogs' sequence numbers (AssetDelivery's trust state).
    public var trustPath: String { path + "/trust" }
    public var daemonSocketPath: String { path + "/daemon.sock" }
    public var containerLockPath: String { locksPath + "/container.lock" }
    /// The lock the descriptor daemon holds for its life.
    public var daemonLockPath: String { locksPath + "/daemon.lock" }
    /// The directory of pack locks: nothing else lives in it.
    public var packLocksPath: String { locksPath + "/packs" }

    /// The lock file of one pack, `locks/packs/<id>.lock`.
    public func lockPath(forPack id: String) -> String { packLocksPath + "/" + id + ".lock" }

    /// Creates the directory layout where it is missing.
    public func createLayout() throws(Errno) {
        for dir in [indexPath, packsPath, stagingPath, cachePath, locksPath, packLocksPath] {
            try FileSystem.createDirectories(dir)
        }
    }
}
