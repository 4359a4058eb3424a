import AssetPacks

/// `assetpack rm`: removes an installed pack.
enum RemoveCommand: Command {
    static let name = "rm"
    static let summary = "Remove an installed pack and free its space."

    static let packID = Positional("pack-id", help: "The pack to remove.")

    static let positionals = [packID]
    static let options = CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let id = arguments.positional(packID)
        let manager = try StoreOptions.manager(arguments, createsContainer: false)
        do {
            try manager.remove(assetPackWithID: id)
            Output.error("\(id) removed")
            return ExitCode.success
        } catch {
            throw .from(error)
        }
    }
}
