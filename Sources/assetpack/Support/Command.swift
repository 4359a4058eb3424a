/// One subcommand of `assetpack`.
protocol Command {
    /// The verb, as typed.
    static var name: String { get }
    /// One line for the overview.
    static var summary: String { get }
    /// The USAGE line(s), without the leading "assetpack".
    static var usage: String { get }
    /// The OPTIONS section (and any notes), already formatted.
    static var options: String { get }
    /// Value options and flags the command accepts (without dashes).
    static var valueOptions: Set<String> { get }
    static var flagOptions: Set<String> { get }
    /// The exit code of a usage error (64; verify uses fsck's 16).
    static var usageExitCode: Int32 { get }
    /// Runs the command; returns its exit code.
    static func run(_ arguments: Arguments) throws(CLIError) -> Int32
}

extension Command {
    static var valueOptions: Set<String> { [] }
    static var flagOptions: Set<String> { [] }
    static var usageExitCode: Int32 { ExitCode.usage }

    /// The `--help` text: OVERVIEW / USAGE / OPTIONS.
    static var helpText: String {
        var text = "OVERVIEW: \(summary)\n\nUSAGE: assetpack \(usage)\n"
        let opts = options.isEmpty ? "" : options + "\n"
        text += "\nOPTIONS:\n\(opts)  -h, --help              Show help information.\n"
        return text
    }
}

/// The options every command that opens a container takes.
enum ContainerOptions {
    static let names: Set<String> = ["container", "group"]
    static let help = """
          --container <dir>       The group container (default: $ASSETPACKS_CONTAINER,
                                  else $XDG_DATA_HOME/assetpacks/<group>).
          --group <id>            The group whose default container to use (default: default).
        """
}
