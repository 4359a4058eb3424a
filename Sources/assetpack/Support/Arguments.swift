/// A command's arguments, parsed against the options and positionals it
/// declares.
///
/// Accepts `--name value`, `--name=value`, `-n value`, flags, repeated
/// options where declared repeatable, and `--` to end options. A value may
/// start with a dash (`--prefix -x`). Reading an option the command did not
/// declare is a programming error, caught by a precondition.
struct Arguments {
    /// Whether `-h` or `--help` came before any `--`: the caller prints help
    /// and nothing else was checked.
    private(set) var wantsHelp = false
    private var positionalValues: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    private let declaredOptions: Set<String>
    private let declaredPositionals: [Positional]

    /// Parses `raw` for a command that takes `options` and `positionals`.
    /// Unknown options, missing or stray values, a non-repeatable option
    /// given twice, a missing required option or positional, an extra
    /// positional and a word outside an option's choices are usage errors.
    init(_ raw: [String], options: [Option], positionals: [Positional]) throws(CLIError) {
        declaredOptions = Set(options.map(\.name))
        declaredPositionals = positionals
        let helpSpellings = Set(Option.help.spellings)
        if raw.prefix(while: { $0 != "--" }).contains(where: helpSpellings.contains) {
            wantsHelp = true
            return
        }
        var bySpelling: [String: Option] = [:]
        for option in options {
            for spelling in option.spellings { bySpelling[spelling] = option }
        }
        var i = 0
        var optionsEnded = false
        while i < raw.count {
            let arg = raw[i]
            i += 1
            if optionsEnded || !arg.hasPrefix("-") || arg == "-" {
                positionalValues.append(arg)
                continue
            }
            if arg == "--" { optionsEnded = true; continue }
            var spelling = arg
            var inline: String?
            if let eq = arg.firstIndex(of: "=") {
                spelling = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            guard let option = bySpelling[spelling] else { throw .usage("unknown option '\(spelling)'") }
            guard option.isRepeatable || (values[option.name] == nil && !flags.contains(option.name)) else {
                throw .usage("option '\(option.longSpelling)' given more than once")
            }
            guard option.takesValue else {
                guard inline == nil else { throw .usage("option '\(spelling)' takes no value") }
                flags.insert(option.name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else {
                guard i < raw.count else { throw .usage("option '\(spelling)' needs a value") }
                value = raw[i]
                i += 1
            }
            try Self.check(value, against: option.completion, naming: "option '\(option.longSpelling)'")
            values[option.name, default: []].append(value)
        }
        for option in options where option.isRequired && values[option.name] == nil {
            throw .usage("missing \(option.usageLabel)")
        }
        let required = positionals.filter { !$0.isOptional }.count
        if positionalValues.count < required {
            throw .usage("missing \(positionals[positionalValues.count].label)")
        }
        if positionalValues.count > positionals.count, positionals.last?.isVariadic != true {
            throw .usage("unexpected argument '\(positionalValues[positionals.count])'")
        }
        for (index, value) in positionalValues.enumerated() {
            let positional = positionals[min(index, positionals.count - 1)]
            try Self.check(value, against: positional.completion, naming: positional.label)
        }
    }

    private static func check(_ value: String, against completion: Completion, naming what: String) throws(CLIError) {
        guard case .choices(let words) = completion, !words.contains(value) else { return }
        throw .usage("\(what) must be one of \(words.joined(separator: ", ")), not '\(value)'")
    }

    private func precondition(declared option: Option) {
        Swift.precondition(declaredOptions.contains(option.name), "option '--\(option.name)' read but not declared")
    }

    /// Whether the flag was given.
    func flag(_ option: Option) -> Bool {
        precondition(declared: option)
        return flags.contains(option.name)
    }

    /// The option's value, if given.
    func value(_ option: Option) -> String? {
        precondition(declared: option)
        return values[option.name]?.last
    }

    /// A required option's value (parsing made sure it is there).
    func requiredValue(_ option: Option) -> String {
        Swift.precondition(option.isRequired, "option '--\(option.name)' is optional: use value(_:)")
        return value(option)!
    }

    /// Every value of a repeatable option, in the order given.
    func values(_ option: Option) -> [String] {
        precondition(declared: option)
        return values[option.name] ?? []
    }

    /// The option's value as a byte count, if given: a whole number, or one
    /// with a suffix K, M, G or T (powers of 1024). A usage error when it is
    /// not one (or does not fit in 64 bits), or is more than `maximum`.
    func byteCount(_ option: Option, maximum: UInt64 = .max) throws(CLIError) -> UInt64? {
        try wholeNumber(option, suffixes: true, maximum: maximum)
    }

    /// The option's value as a whole number, if given; a usage error when it
    /// is not one (or does not fit in 64 bits), or is more than `maximum`.
    func wholeNumber(_ option: Option, maximum: UInt64 = .max) throws(CLIError) -> UInt64? {
        try wholeNumber(option, suffixes: false, maximum: maximum)
    }

    private func wholeNumber(_ option: Option, suffixes: Bool, maximum: UInt64) throws(CLIError) -> UInt64? {
        guard let text = value(option) else { return nil }
        var digits = Substring(text)
        var shift: UInt64 = 0
        if suffixes, let last = digits.last, let index = "KMGT".firstIndex(of: Character(last.uppercased())) {
            shift = UInt64("KMGT".distance(from: "KMGT".startIndex, to: index) + 1) * 10
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let n = UInt64(digits), n <= UInt64.max >> shift else {
            let what = suffixes ? "a number of bytes (with K, M, G or T)" : "a whole number"
            throw .usage("'\(option.longSpelling)' needs \(what), not '\(text)'")
        }
        guard n << shift <= maximum else {
            throw .usage("'\(option.longSpelling)' may be at most \(maximum)\(suffixes ? " bytes" : ""), not '\(text)'")
        }
        return n << shift
    }

    /// The option's value as a non-negative number, if given; a usage error
    /// when it is not one.
    func number(_ option: Option) throws(CLIError) -> Double? {
        guard let v = value(option) else { return nil }
        guard let d = Double(v), d >= 0, d.isFinite else {
            throw .usage("'\(option.longSpelling)' needs a non-negative number, not '\(v)'")
        }
        return d
    }

    /// A required positional's value (parsing made sure it is there).
    func positional(_ positional: Positional) -> String {
        Swift.precondition(!positional.isOptional, "\(positional.label) is optional: use optionalPositional")
        return optionalPositional(positional)!
    }

    /// Every value of a variadic (last) positional, in order.
    func positionals(_ positional: Positional) -> [String] {
        Swift.precondition(positional.isVariadic, "\(positional.label) is not variadic: use positional(_:)")
        guard let index = declaredPositionals.firstIndex(of: positional) else {
            preconditionFailure("positional \(positional.label) read but not declared")
        }
        return Array(positionalValues.dropFirst(index))
    }

    /// A positional's value, or `nil` when an optional one was left out.
    func optionalPositional(_ positional: Positional) -> String? {
        guard let index = declaredPositionals.firstIndex(of: positional) else {
            preconditionFailure("positional \(positional.label) read but not declared")
        }
        return index < positionalValues.count ? positionalValues[index] : nil
    }
}
