/// A command's arguments, parsed against the options it declares.
///
/// Accepts `--name value`, `--name=value`, boolean `--flag`, `-h`/`--help`,
/// repeated options, and `--` to end options.
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `raw` for a command that takes the given value options and flags
    /// (names without dashes). Unknown options are usage errors.
    init(_ raw: [String], options: Set<String>, flags allowedFlags: Set<String>) throws(CLIError) {
        var i = 0
        var optionsEnded = false
        while i < raw.count {
            let arg = raw[i]
            i += 1
            if optionsEnded || !arg.hasPrefix("-") || arg == "-" {
                positionals.append(arg)
                continue
            }
            if arg == "--" { optionsEnded = true; continue }
            if arg == "-h" || arg == "--help" { flags.insert("help"); continue }
            // Single-letter options (-o) are declared by their letter.
            let dashes = arg.hasPrefix("--") ? 2 : 1
            guard dashes == 2 || arg.count == 2 else { throw .usage("unknown option '\(arg)'") }
            var name = String(arg.dropFirst(dashes))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if allowedFlags.contains(name) {
                guard inline == nil else { throw .usage("option '\(arg)' takes no value") }
                flags.insert(name)
            } else if options.contains(name) {
                if let inline {
                    values[name, default: []].append(inline)
                } else {
                    guard i < raw.count else { throw .usage("option '\(arg)' needs a value") }
                    values[name, default: []].append(raw[i])
                    i += 1
                }
            } else {
                throw .usage("unknown option '\(arg)'")
            }
        }
    }

    /// Whether `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The last value of `--name`, if given.
    func value(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeatable `--name`.
    func values(_ name: String) -> [String] { values[name] ?? [] }

    /// The value of `--name` as a number, or a usage error.
    func number(_ name: String) throws(CLIError) -> Double? {
        guard let v = value(name) else { return nil }
        guard let d = Double(v), d >= 0, d.isFinite else { throw .usage("'--\(name)' needs a non-negative number, not '\(v)'") }
        return d
    }

    /// Exactly `count` positional arguments, named for the message.
    func expect(_ names: [String], optional: Int = 0) throws(CLIError) -> [String] {
        let required = names.count - optional
        if positionals.count < required {
            throw .usage("missing \(names[positionals.count])")
        }
        if positionals.count > names.count {
            throw .usage("unexpected argument '\(positionals[names.count])'")
        }
        return positionals
    }
}
