extension Arguments {
    /// The option's value as a number more than 0, if given; a usage error
    /// when it is not one.
    func positiveNumber(_ option: Option) throws(CLIError) -> Double? {
        guard let value = try number(option) else { return nil }
        guard value > 0 else { throw .usage("'\(option.longSpelling)' must be more than 0") }
        return value
    }

    /// The option's value as a whole number from `range`, if given; a usage
    /// error naming the range when it is not one.
    func wholeNumber(_ option: Option, in range: ClosedRange<Int>) throws(CLIError) -> Int? {
        guard let value = try number(option) else { return nil }
        guard value == value.rounded(), value >= Double(range.lowerBound), value <= Double(range.upperBound) else {
            throw .usage("'\(option.longSpelling)' needs a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(value)
    }
}
