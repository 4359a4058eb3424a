/// The whole command line: the program's name and version, its options
/// before the subcommand, and its subcommands. The overview and the
/// completions are generated from this.
enum Program {
    static let name = "assetpack"
    /// The version `assetpack --version` prints.
    static let version = "0.1.0"
    static let summary = "AssetPacks — package, install and read asset packs in a shared group container."

    static let versionOption = Option.flag("version", help: "Show the version.")

    /// Options that may come before the subcommand: the container options
    /// (moved after the subcommand, so they mean what they mean there).
    static var leadingOptions: [Option] { CommonOptions.containerOptions }

    /// What the overview lists under OPTIONS.
    static var options: [Option] { leadingOptions + [versionOption, .help] }

    /// The subcommands, in the order the overview lists them.
    static var commands: [any Command.Type] {
        [
            TemplateCommand.self, PackageCommand.self, InspectCommand.self, InstallCommand.self,
            ListCommand.self, CatCommand.self, RemoveCommand.self, VerifyCommand.self, DaemonCommand.self,
            DemoCommand.self, HelpCommand.self, CompletionsCommand.self,
        ]
    }

    static func command(named name: String) -> (any Command.Type)? {
        commands.first { $0.name == name }
    }
}
