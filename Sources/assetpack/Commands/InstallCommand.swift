import AssetPacks

/// `assetpack install`: installs a local pack file.
enum InstallCommand: Command {
    static let name = "install"
    static let summary = "Install a pack file into the container (replacing an older version)."
    static let usage = "install <pack> [--id <id>] [--container <dir>] [--lock-timeout <seconds>]"
    static let options = """
          --id <id>               The pack ID for a plain ZIP without a recorded manifest
                                  (default: the file name without its extension).
        \(ContainerOptions.help)
          --lock-timeout <s>      Give up when another process holds the pack's lock
                                  longer than this (default: wait).
          --json                  Print the installed pack as JSON.
        """
    static let valueOptions = ContainerOptions.names.union(["id", "lock-timeout"])
    static let flagOptions: Set<String> = ["json"]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let path = try arguments.expect(["<pack>"])[0]
        let manager = try StoreOptions.manager(arguments, lockTimeout: try arguments.number("lock-timeout"))
        do {
            let outcome = try manager.installPack(at: path, id: arguments.value("id"))
            if arguments.flag("json") {
                var object = ListCommand.json(outcome.pack)
                object["change"] = outcome.change.rawValue
                Output.json(object)
            } else {
                let verb: String
                switch outcome.change {
                case .installed: verb = "installed"
                case .replaced: verb = "updated"
                case .unchanged: verb = "already installed (identical)"
                }
                Output.error("\(outcome.pack.id) \(verb): version \(outcome.pack.version), \(outcome.pack.memberCount) files")
            }
            return ExitCode.success
        } catch {
            throw .from(error)
        }
    }
}
