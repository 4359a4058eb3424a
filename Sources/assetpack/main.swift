#if canImport(Glibc)
import Glibc
#endif

/// Splits off the options before the subcommand: `--version` and `--help`
/// answer at once; the container options are kept (the words, and which
/// options they are), to go after the subcommand, where they mean what they
/// mean there.
func leadingOptions(_ raw: inout [String]) throws(CLIError) -> (leading: [String], options: [Option], answer: String?) {
    var leading: [String] = []
    var given: [Option] = []
    let options = Program.leadingOptions
    while let arg = raw.first, arg.hasPrefix("-"), arg != "-" {
        raw.removeFirst()
        if Option.help.spellings.contains(arg) { return ([], [], Help.overview()) }
        if Program.versionOption.spellings.contains(arg) { return ([], [], "\(Program.name) \(Program.version)\n") }
        if arg == "--" { break }
        let spelling = arg.split(separator: "=", maxSplits: 1).first.map(String.init) ?? arg
        guard let option = options.first(where: { $0.spellings.contains(spelling) }) else {
            throw .usage("unknown option '\(spelling)' before the subcommand")
        }
        leading.append(arg)
        given.append(option)
        if option.takesValue && spelling == arg {
            guard let value = raw.first else { throw .usage("option '\(arg)' needs a value") }
            leading.append(value)
            raw.removeFirst()
        }
    }
    return (leading, given, nil)
}

func main() -> Int32 {
    var raw = Array(CommandLine.arguments.dropFirst())
    if raw.isEmpty {
        Output.error(Help.overview())
        return ExitCode.usage
    }
    var leading: [String]
    var leadingGiven: [Option]
    do throws(CLIError) {
        let split = try leadingOptions(&raw)
        if let answer = split.answer {
            Output.write(answer)
            return ExitCode.success
        }
        leading = split.leading
        leadingGiven = split.options
        guard let verb = raw.first else { throw .usage("missing <subcommand>") }
        guard Program.command(named: verb) != nil else { throw .usage("unknown subcommand '\(verb)'") }
    } catch {
        Output.error(Help.usageError(error.message, nil))
        return ExitCode.usage
    }
    let command = Program.command(named: raw.removeFirst())!
    // Help is the same whatever container was named before it.
    if command == HelpCommand.self { (leading, leadingGiven) = ([], []) }
    do throws(CLIError) {
        for option in leadingGiven where !command.acceptedOptions.contains(where: { $0.name == option.name }) {
            throw .usage("option '\(option.longSpelling)' does not apply to '\(command.name)'")
        }
        let arguments = try Arguments(leading + raw, options: command.acceptedOptions, positionals: command.positionals)
        if arguments.wantsHelp {
            Output.write(Help.text(command))
            return ExitCode.success
        }
        return try command.run(arguments)
    } catch {
        switch error {
        case .usage(let message):
            Output.error(Help.usageError(message, command))
            return command.usageExitCode
        case .failure(let message, let code):
            let oneLine = message.split(whereSeparator: \.isNewline).joined(separator: " ")
            Output.error("\(Program.name) \(command.name): error: \(oneLine)")
            return code
        }
    }
}

exit(main())
