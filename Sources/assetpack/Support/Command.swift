/// One subcommand of `assetpack`, described by declarations: its options
/// and positionals are parsed, shown in `--help`, completed by the shells
/// and written into the man page from the same values.
protocol Command {
    /// The verb, as typed.
    static var name: String { get }
    /// One line: the overview's SUBCOMMANDS entry and the help's OVERVIEW.
    static var summary: String { get }
    /// More about the command, shown under OVERVIEW; may be empty.
    static var discussion: String { get }
    /// The positionals, in order.
    static var positionals: [Positional] { get }
    /// The options, in the order help lists them (`-h, --help` is added last).
    static var options: [Option] { get }
    /// Sections shown after OPTIONS, such as verify's EXIT STATUS.
    static var sections: [HelpSection] { get }
    /// The exit code of a usage error (64; verify uses fsck's 16).
    static var usageExitCode: Int32 { get }
    /// Runs the command on arguments parsed against its declarations;
    /// returns its exit code.
    static func run(_ arguments: Arguments) throws(CLIError) -> Int32
}

extension Command {
    static var discussion: String { "" }
    static var positionals: [Positional] { [] }
    static var options: [Option] { [] }
    static var sections: [HelpSection] { [] }
    static var usageExitCode: Int32 { ExitCode.usage }

    /// The options parsing accepts: the declared ones and `-h, --help`.
    static var acceptedOptions: [Option] { options + [.help] }
}

/// A section of help after OPTIONS, such as EXIT STATUS: a title and rows,
/// each a label and its text, laid out like options.
struct HelpSection: Sendable {
    let title: String
    let rows: [(label: String, text: String)]

    init(_ title: String, rows: [(label: String, text: String)]) {
        self.title = title
        self.rows = rows
    }
}
