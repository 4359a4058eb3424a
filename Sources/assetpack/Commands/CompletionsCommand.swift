/// `assetpack completions <shell>`: prints a completion script generated
/// from the declarations.
enum CompletionsCommand: Command {
    static let name = "completions"
    static let summary = "Print a completion script for bash, zsh or fish."
    static let discussion = """
        The script completes the subcommands, each one's options, and file or directory names where a \
        path is expected. Load it with 'source <(assetpack completions bash)' in ~/.bashrc; for zsh, \
        save it as _assetpack in a directory on $fpath; for fish, save it as \
        ~/.config/fish/completions/assetpack.fish.
        """

    static let shell = Positional("shell", help: "The shell to complete for.", completion: .choices(Shell.allCases.map(\.rawValue)))

    static let positionals = [shell]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        // Parsing checked the word against the choices.
        let shell = Shell(rawValue: arguments.positional(Self.shell))!
        Output.write(Completions.script(for: shell))
        return ExitCode.success
    }
}
