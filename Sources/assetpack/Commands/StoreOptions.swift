import AssetPacks
import AssetSystem

/// Opens the manager for the container the container options name.
enum StoreOptions {
    static func manager(_ arguments: Arguments, lockTimeout: Double? = nil, options base: AssetStore.Options = .init()) throws(CLIError) -> AssetPackManager {
        let container = self.container(arguments)
        var options = base
        if let lockTimeout { options.lockWait = .seconds(lockTimeout) }
        do { return try AssetPackManager(container: container, options: options) } catch { throw .from(error) }
    }

    /// The container the container options name, without opening it.
    static func container(_ arguments: Arguments) -> GroupContainer {
        if let path = arguments.value(CommonOptions.container) { return GroupContainer(path: path) }
        return GroupContainer.default(group: arguments.value(CommonOptions.group) ?? "default")
    }
}
