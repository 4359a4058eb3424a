/// `assetpack help [<subcommand>]`: the same text as `<subcommand> --help`.
enum HelpCommand: Command {
    static let name = "help"
    static let summary = "Show the help of a subcommand (the same text as '<subcommand> --help')."

    static var subcommand: Positional {
        Positional("subcommand", help: "The subcommand to describe (default: show the overview).", optional: true,
                   completion: .choices(Program.commands.map { $0.name }))
    }

    static var positionals: [Positional] { [subcommand] }

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        if let name = arguments.optionalPositional(subcommand), let command = Program.command(named: name) {
            Output.write(Help.text(command))
        } else {
            Output.write(Help.overview())
        }
        return ExitCode.success
    }
}
