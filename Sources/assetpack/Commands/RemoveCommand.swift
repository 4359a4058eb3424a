import AssetPacks

/// `assetpack rm`: removes an installed pack.
enum RemoveCommand: Command {
    static let name = "rm"
    static let summary = "Remove an installed pack and free its space."
    static let usage = "rm <pack-id> [--container <dir>] [--lock-timeout <seconds>]"
    static let options = """
        \(ContainerOptions.help)
          --lock-timeout <s>      Give up when another process holds the pack's lock
                                  longer than this (default: wait).
        """
    static let valueOptions = ContainerOptions.names.union(["lock-timeout"])

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let id = try arguments.expect(["<pack-id>"])[0]
        let manager = try StoreOptions.manager(arguments, lockTimeout: try arguments.number("lock-timeout"))
        do {
            try manager.remove(assetPackWithID: id)
            Output.error("\(id) removed")
            return ExitCode.success
        } catch {
            throw .from(error)
        }
    }
}
