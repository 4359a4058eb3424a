import AssetPacks
import AssetSystem

/// Opens the manager for the container the common options name.
enum StoreOptions {
    static func manager(_ arguments: Arguments, lockTimeout: Double? = nil, options base: AssetStore.Options = .init()) throws(CLIError) -> AssetPackManager {
        let container: GroupContainer
        if let path = arguments.value("container") {
            container = GroupContainer(path: path)
        } else {
            container = GroupContainer.default(group: arguments.value("group") ?? "default")
        }
        var options = base
        if let lockTimeout { options.lockWait = .seconds(lockTimeout) }
        do { return try AssetPackManager(container: container, options: options) } catch { throw .from(error) }
    }
}
