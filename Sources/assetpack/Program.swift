/// The whole command line: the program's name and version, its options
/// before the subcommand, and its subcommands. Help, completions and the man
/// page are generated from this.
enum Program {
    static let name = "assetpack"
    /// The version `assetpack --version` prints.
    static let version = "0.1.0"
    static let summary = "AssetPacks — package, install and read asset packs in a shared group container."
    /// The man page's NAME line.
    static let tagline = "package, install and read asset packs in a shared group container"
    /// The man page's DESCRIPTION.
    static let description = [
        """
        assetpack packages the files a manifest selects into a pack (a ZIP archive that records the \
        manifest in its comment), installs packs atomically into a group container that several \
        processes share, and reads their members back: stored members straight from a mapping of the \
        archive, deflated ones inflated and CRC-checked, or as a file descriptor, also from a daemon \
        for processes that cannot open the container.
        """,
        """
        Every subcommand takes -h or --help; 'assetpack help <subcommand>' prints the same text. \
        Data goes to standard output, diagnostics to standard error; commands that report take --json \
        for machine-readable output.
        """,
    ]

    /// Exit codes of every command but verify (which has its own, in its help).
    static let exitStatus: [(label: String, text: String)] = [
        ("0", "Success."),
        ("1", "Failure: one line on standard error says what failed."),
        ("64", "Usage error: the message, the usage line and where to read more on standard error."),
    ]

    /// The environment variables the program reads.
    static let environment: [(label: String, text: String)] = [
        ("ASSETPACKS_CONTAINER", "The container to use when --container is not given; it wins over --group."),
        ("XDG_DATA_HOME", "Where default containers live: $XDG_DATA_HOME/assetpacks/<group> (default: ~/.local/share)."),
    ]

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
            ListCommand.self, CatCommand.self, RemoveCommand.self, VerifyCommand.self, LimitsCommand.self,
            KeygenCommand.self, PublishCommand.self, VerifyPublishedCommand.self, ServeCommand.self,
            FetchCommand.self, SyncCommand.self, StatusCommand.self, PauseCommand.self, ResumeCommand.self, CancelCommand.self,
            DaemonCommand.self, SourcesCommand.self, DemoCommand.self, HelpCommand.self, CompletionsCommand.self, ManpageCommand.self,
        ]
    }

    static func command(named name: String) -> (any Command.Type)? {
        commands.first { $0.name == name }
    }
}
