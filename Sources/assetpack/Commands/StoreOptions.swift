import AssetPacks

/// Opens the manager for the container the container options name.
enum StoreOptions {
    /// The manager of the named container, waiting for locks as
    /// `--lock-timeout` says. Read-only commands pass
    /// `createsContainer: false`, so that a mistyped `--container` is an
    /// error instead of a new, empty container.
    static func manager(_ arguments: Arguments, createsContainer: Bool = true,
                        clearsStaleReaders: Bool = true) throws(CLIError) -> AssetPackManager {
        let options = AssetPackManager.Options(lockTimeout: try lockTimeout(arguments), createsContainer: createsContainer,
                                               clearsStaleReaders: clearsStaleReaders)
        do { return try AssetPackManager(container: container(arguments), options: options) } catch { throw .from(error) }
    }

    /// `--lock-timeout`, if given.
    static func lockTimeout(_ arguments: Arguments) throws(CLIError) -> Double? {
        try arguments.number(CommonOptions.lockTimeout)
    }

    /// The container the container options name, without opening it.
    static func container(_ arguments: Arguments) -> AssetPackManager.Container {
        if let path = arguments.value(CommonOptions.container) { return AssetPackManager.Container(path: path) }
        return AssetPackManager.Container.default(group: arguments.value(CommonOptions.group) ?? "default")
    }
}
