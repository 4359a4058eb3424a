#if canImport(Glibc)
import Glibc
#endif

/// The version `assetpack --version` prints.
let assetpackVersion = "0.1.0"

let commands: [any Command.Type] = [
    TemplateCommand.self, PackageCommand.self, InspectCommand.self, InstallCommand.self,
    ListCommand.self, CatCommand.self, RemoveCommand.self, VerifyCommand.self, DaemonCommand.self, DemoCommand.self,
]

@MainActor
func overview() -> String {
    var text = """
        OVERVIEW: AssetPacks — package, install and read asset packs in a shared group container.

        USAGE: assetpack <subcommand> [options] [arguments]

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:

        """
    for c in commands {
        text += "  " + c.name.padding(toLength: 22, withPad: " ", startingAt: 0) + c.summary + "\n"
    }
    text += "\n  See 'assetpack help <subcommand>' for detailed help.\n"
    return text
}

@MainActor
func main() -> Int32 {
    var raw = Array(CommandLine.arguments.dropFirst())
    guard let verb = raw.first else {
        Output.error(overview())
        return ExitCode.usage
    }
    switch verb {
    case "-h", "--help":
        Output.line(overview())
        return ExitCode.success
    case "--version":
        Output.line("assetpack \(assetpackVersion)")
        return ExitCode.success
    case "help":
        guard raw.count > 1 else { Output.line(overview()); return ExitCode.success }
        guard let command = commands.first(where: { $0.name == raw[1] }) else {
            Output.error("Error: unknown subcommand '\(raw[1])'\nSee 'assetpack --help'.")
            return ExitCode.usage
        }
        Output.line(command.helpText)
        return ExitCode.success
    default:
        break
    }
    guard let command = commands.first(where: { $0.name == verb }) else {
        Output.error("Error: unknown subcommand '\(verb)'\nSee 'assetpack --help'.")
        return ExitCode.usage
    }
    raw.removeFirst()
    do throws(CLIError) {
        let arguments = try Arguments(raw, options: command.valueOptions, flags: command.flagOptions)
        if arguments.flag("help") {
            Output.line(command.helpText)
            return ExitCode.success
        }
        return try command.run(arguments)
    } catch {
        switch error {
        case .usage(let message):
            Output.error("Error: \(message)\nUsage: assetpack \(command.usage.split(separator: "\n").first ?? "")\nSee 'assetpack \(command.name) --help'.")
            return command.usageExitCode
        case .failure(let message, let code):
            let oneLine = message.split(whereSeparator: \.isNewline).joined(separator: " ")
            Output.error("assetpack \(command.name): error: \(oneLine)")
            return code
        }
    }
}

exit(main())
