/// The text of `--help`, the overview and usage errors, laid out from the
/// declarations.
enum Help {
    /// The USAGE line of `command` (or of the program), wrapped with the
    /// continuation lines under the first argument.
    static func usage(_ command: (any Command.Type)?, label: String = "USAGE:") -> [String] {
        let head = "\(label) \(Program.name)" + (command.map { " " + $0.name } ?? "")
        var tokens: [String]
        if let command {
            tokens = command.options.map(\.synopsis) + command.positionals.map(\.synopsis)
        } else {
            tokens = Program.leadingOptions.map(\.synopsis) + ["<subcommand>", "[options]", "[arguments]"]
        }
        var lines: [String] = []
        var line = head
        let indent = String(repeating: " ", count: head.count + 1)
        for token in tokens {
            if line.count + 1 + token.count > TextLayout.width && line != head && line != indent {
                lines.append(line)
                line = indent + token
            } else {
                line += (line == indent ? "" : " ") + token
            }
        }
        lines.append(line)
        return lines
    }

    /// `assetpack <sub> --help`, `-h` and `assetpack help <sub>`:
    /// OVERVIEW, USAGE, ARGUMENTS, OPTIONS (`-h, --help` last), then the
    /// command's own sections.
    static func text(_ command: any Command.Type) -> String {
        var out = overviewLine(command.summary)
        for paragraph in paragraphs(command.discussion) {
            out += [""] + TextLayout.wrap(paragraph, indent: 0)
        }
        out += [""] + usage(command)
        if !command.positionals.isEmpty {
            out += ["", "ARGUMENTS:"]
            for p in command.positionals { out += TextLayout.entry(p.label, describe(p.help, p.completion)) }
        }
        out += ["", "OPTIONS:"]
        for o in command.acceptedOptions { out += TextLayout.entry(o.helpLabel, describe(o)) }
        for section in command.sections { out += [""] + lines(of: section) }
        return out.joined(separator: "\n") + "\n"
    }

    /// `assetpack`, `assetpack --help`, `assetpack help`.
    static func overview() -> String {
        var out = overviewLine(Program.summary) + [""] + usage(nil) + ["", "OPTIONS:"]
        for o in Program.options { out += TextLayout.entry(o.helpLabel, o.help) }
        out += ["", "SUBCOMMANDS:"]
        for c in Program.commands { out += TextLayout.entry(c.name, c.summary) }
        out += [""]
        out += TextLayout.wrap("The container options may also come after the subcommand, as its own options. " +
                               "See 'assetpack help <subcommand>' for detailed help, and 'assetpack manpage' " +
                               "for the manual page ('assetpack manpage | man -l -').", indent: 2)
        return out.joined(separator: "\n") + "\n"
    }

    /// `OVERVIEW: <summary>`, wrapped under the summary's first word.
    static func overviewLine(_ summary: String) -> [String] {
        TextLayout.wrap("OVERVIEW: " + summary, indent: "OVERVIEW: ".count, firstIndent: 0)
    }

    /// What a usage error prints: `Error: …`, the usage line, and where to
    /// read more.
    static func usageError(_ message: String, _ command: (any Command.Type)?) -> String {
        let see = command.map { "See '\(Program.name) \($0.name) --help'." } ?? "See '\(Program.name) --help'."
        return (["Error: \(message)"] + usage(command, label: "Usage:") + [see]).joined(separator: "\n")
    }

    /// A section's lines: its rows laid out like options, in a column
    /// fitted to the labels.
    static func lines(of section: HelpSection) -> [String] {
        var out = ["\(section.title):"]
        let column = min(TextLayout.descriptionColumn, 2 + (section.rows.map(\.label.count).max() ?? 0) + 2)
        for row in section.rows { out += TextLayout.entry(row.label, row.text, column: column) }
        return out
    }

    /// An option's help text, saying whether it may be repeated and which
    /// words it takes when they are a fixed set.
    static func describe(_ option: Option) -> String {
        describe(option.help, option.completion) + (option.isRepeatable ? " May be repeated." : "")
    }

    /// The help text, with the choices of a fixed set appended.
    static func describe(_ help: String, _ completion: Completion) -> String {
        guard case .choices(let words) = completion else { return help }
        return help + " (\(words.joined(separator: ", ")))"
    }

    /// Paragraphs of a text, split at blank lines.
    static func paragraphs(_ text: String) -> [String] {
        text.split(separator: "\n\n").map { String($0) }.filter { !$0.allSatisfy(\.isWhitespace) }
    }
}
