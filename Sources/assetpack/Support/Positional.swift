/// A positional argument a command takes, declared once like an ``Option``:
/// its placeholder in USAGE, its entry in ARGUMENTS, its completion.
struct Positional: Sendable, Hashable {
    /// The placeholder without brackets: `pack` shows as `<pack>`.
    let name: String
    /// What it is, in sentences.
    let help: String
    /// Whether it may be left out (only the last positionals may be).
    let isOptional: Bool
    /// What it is, for completion and checking.
    let completion: Completion
    /// Whether it takes every remaining word (only the last positional may).
    let isVariadic: Bool

    init(_ name: String, help: String, optional: Bool = false, completion: Completion = .none, variadic: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
        self.completion = completion
        self.isVariadic = variadic
    }

    /// `<pack>`.
    var label: String { "<\(name)>" }

    /// `<pack>` or `[<pack-id>]`, as in the USAGE line.
    var synopsis: String { (isOptional ? "[\(label)]" : label) + (isVariadic ? " ..." : "") }
}
