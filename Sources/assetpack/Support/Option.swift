/// One option a command accepts, declared once. Parsing, the USAGE line, the
/// OPTIONS section of `--help`, the shell completions and the man page are
/// all derived from the declaration.
///
/// A command keeps its options in `static let`s and reads them back from
/// ``Arguments`` by the same value: `arguments.value(Self.pack)`.
struct Option: Sendable, Hashable {
    /// The long name without dashes: `output` for `--output`.
    let name: String
    /// A one-letter alias: `o` for `-o`.
    let short: Character?
    /// The placeholder of the value (`pack` shows as `<pack>`), or `nil` for
    /// a flag, which takes no value.
    let placeholder: String?
    /// What the option does, in sentences; wrapped to fit when shown.
    let help: String
    /// Whether it may be given more than once (each value is kept).
    let isRepeatable: Bool
    /// Whether the command refuses to run without it.
    let isRequired: Bool
    /// What the option's value is, for completion and checking.
    let completion: Completion

    /// A flag: `--name`, taking no value.
    static func flag(_ name: String, short: Character? = nil, help: String) -> Option {
        Option(name: name, short: short, placeholder: nil, help: help, isRepeatable: false, isRequired: false, completion: .none)
    }

    /// An option that takes a value: `--name <placeholder>` or `--name=<placeholder>`.
    static func value(_ name: String, short: Character? = nil, placeholder: String, help: String,
                      repeatable: Bool = false, required: Bool = false, completion: Completion = .none) -> Option {
        Option(name: name, short: short, placeholder: placeholder, help: help, isRepeatable: repeatable,
               isRequired: required, completion: completion)
    }

    /// `-h`, `--help`: every command takes it; help lists it last.
    static let help = Option.flag("help", short: "h", help: "Show help information.")

    /// Whether it takes a value.
    var takesValue: Bool { placeholder != nil }

    /// `--output`.
    var longSpelling: String { "--" + name }

    /// `-o`, if it has one.
    var shortSpelling: String? { short.map { "-\($0)" } }

    /// Every way to spell it on the command line.
    var spellings: [String] { [longSpelling] + (shortSpelling.map { [$0] } ?? []) }

    /// `-o, --output <pack>`, as OPTIONS lists it.
    var helpLabel: String {
        let names = (shortSpelling.map { [$0] } ?? []) + [longSpelling]
        return names.joined(separator: ", ") + (placeholder.map { " <\($0)>" } ?? "")
    }

    /// `--output <pack>`, as the USAGE line and error messages name it.
    var usageLabel: String { longSpelling + (placeholder.map { " <\($0)>" } ?? "") }

    /// `[--pack <id> ...]`, `--output <pack>`: the option in the USAGE line.
    var synopsis: String {
        let core = usageLabel + (isRepeatable ? " ..." : "")
        return isRequired ? core : "[\(core)]"
    }
}

/// What a value is, so that completions offer the right words and the parser
/// can refuse a word that is not one of a fixed set.
enum Completion: Sendable, Hashable {
    /// Anything: completions offer nothing.
    case none
    /// A path to a file.
    case file
    /// A path to a directory.
    case directory
    /// A user name (or number).
    case user
    /// A group name (or number).
    case group
    /// One of these words, and nothing else.
    case choices([String])
}
