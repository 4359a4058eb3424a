/// `assetpack manpage`: prints the manual page, generated from the
/// declarations, as roff.
enum ManpageCommand: Command {
    static let name = "manpage"
    static let summary = "Print the manual page (roff) of assetpack and all its subcommands."
    static let discussion = """
        Read it with 'assetpack manpage | man -l -', or install it as assetpack.1 in a man1 directory \
        on $MANPATH.
        """

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        Output.write(ManPage.roff())
        return ExitCode.success
    }
}
